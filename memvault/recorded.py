"""Fast timelines for recorded time: the vault at any commit without re-resolving it all.

`Timeline(events)` sorts every event, indexes it and resolves every reference; at 100k
events that is ~0.1-0.3 s, too slow to do for each `asof --recorded`. A commit's state is a
set of file versions, and a version's events never change, so the work per version is done
once per session (`VersionInfo`: its events in order, the ones holding references, and each
event's live interval when nothing supersedes it). Per commit, `StateTimeline` then:

- orders the state's events by merging the versions (log files do not overlap in time);
- builds `by_id` (first occurrence wins, as in `EventIndex`) at C speed;
- resolves references with `Timeline._build` itself, run over the entries that hold
  references only (the others do nothing in it); references by id hit `by_id`, any other
  form gets a full `EventIndex` of the state, built on first need, so resolution is exact;
- answers `live(at)` from the precomputed intervals, asking `Timeline.status` (the rule)
  for every entry that something in this state supersedes.

Every result equals `Timeline(state events)`; tests/test_recorded.py checks that commit by
commit on generated histories.
"""

from __future__ import annotations

import bisect
import gc
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import Any

from .config import Config
from .events import EventIndex, Timeline, sort_key
from .gitrepo import VAULT_PATHSPECS, CommitList, GitRepo
from .model import Event
from .spans import live_interval

Row = tuple[Event, float, float]  # an event and its live interval when nothing supersedes it
NEVER_LIVE = (float("inf"), float("-inf"))
# More straggler events than this (files overlapping in time) and a plain sort is cheaper.
MAX_STRAGGLERS = 4000


@contextmanager
def no_gc() -> Iterator[None]:
    """Building a state allocates ~100k small objects and no cycles: a gen-2 collection in
    the middle (scanning every cached event) would cost more than the build."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class VersionTable:
    """Which blob each vault file had at each first-parent commit, from one `git log --raw`."""

    def __init__(self, repo: GitRepo, commits: CommitList):
        from .vault import is_vault_markdown

        self.commits = commits
        self._history: dict[str, tuple[list[int], list[str | None]]] = {}
        for commit, changes in repo.file_log(list(VAULT_PATHSPECS)):
            idx = commits.position(commit.sha)
            if idx is None:  # HEAD moved between the two reads: let the caller fall back
                self.complete = False
                return
            for path, blob in changes.items():
                if not is_vault_markdown(path):
                    continue
                starts, blobs = self._history.setdefault(path, ([], []))
                starts.append(idx)
                blobs.append(blob)
        self.complete = True

    def tree(self, idx: int) -> dict[str, str]:
        """Vault-relative path -> blob at commit number `idx` (oldest is 0)."""
        out = {}
        for path, (starts, blobs) in self._history.items():
            k = bisect.bisect_right(starts, idx) - 1
            if k >= 0 and blobs[k] is not None:
                out[path] = blobs[k]  # type: ignore[assignment]
        return out


@dataclass
class VersionInfo:
    """What one file version contributes to any state containing it."""

    rows: list[Row]  # in timeline order
    holders: list[Event]  # entries with Supersedes:/Reconfirms:, in timeline order
    lo: tuple[Any, ...] | None  # sort key of the first and last event
    hi: tuple[Any, ...] | None
    curated: bool

    @classmethod
    def of(cls, events: list[Event], solo: Timeline) -> VersionInfo:
        ordered = sorted(events, key=sort_key)
        rows = []
        for ev in ordered:
            span = live_interval(solo, ev)
            rows.append((ev, *(span or NEVER_LIVE)))
        holders = [e for e in ordered if e.supersedes or e.reconfirms]
        curated = any(e.kind == "curated" for e in ordered)
        lo = sort_key(ordered[0]) if ordered else None
        hi = sort_key(ordered[-1]) if ordered else None
        return cls(rows, holders, lo, hi, curated)


class _StateIndex(EventIndex):
    """An `EventIndex` whose `by_id` is given; the other tables come from a full index of
    the same events, built only if a reference needs more than an id lookup."""

    def __init__(self, events: list[Event], by_id: dict[str, Event]):  # no super().__init__: lazy
        self.events = events
        self.by_id = by_id
        self._full: EventIndex | None = None

    def _whole(self) -> EventIndex:
        if self._full is None:
            self._full = EventIndex(self.events)
        return self._full

    @property
    def by_date(self):  # type: ignore[override]
        return self._whole().by_date

    @property
    def by_block(self):  # type: ignore[override]
        return self._whole().by_block

    @property
    def duplicates(self):  # type: ignore[override]
        if len(self.by_id) == len(self.events):
            return []
        return self._whole().duplicates


class StateTimeline(Timeline):
    """A `Timeline` of one recorded state, assembled from per-version work (see module doc)."""

    def __init__(self, infos: Iterable[VersionInfo], config: Config):  # no super().__init__: see above
        self.config = config
        infos = list(infos)
        with no_gc():
            rows = _merge(infos)
            self.rows = rows
            self.events = [r[0] for r in rows]
            evs = self.events
            by_id = dict(zip([e.id for e in reversed(evs)], reversed(evs), strict=True))
            self.unique = len(by_id) == len(evs)
            self.index = _StateIndex(evs, by_id)
            self.supersedes: dict[str, str] = {}
            self.superseded_by: dict[str, list[str]] = defaultdict(list)
            self.reconfirmed_by: dict[str, list[str]] = defaultdict(list)
            self.problems = []
            # Timeline._build walks self.events and acts only on entries holding references
            self.events = sorted(chain.from_iterable(v.holders for v in infos), key=sort_key)
            try:
                self._build()
            finally:
                self.events = evs

    def live(self, at: datetime | None = None) -> list[Event]:
        if at is None:
            return super().live(at)
        t = at.timestamp()
        targets = self.superseded_by
        status = self.status
        if self.unique:
            return [e for e, s, end in self.rows if s <= t < end and (e.id not in targets or status(e, at) == "live")]
        by_id = self.by_id
        return [e for e, s, end in self.rows
                if s <= t < end and by_id.get(e.id) is e and (e.id not in targets or status(e, at) == "live")]


def _merge(infos: list[VersionInfo]) -> list[Row]:
    """All rows in timeline order. Daily logs cover disjoint days, so sorting the versions
    and concatenating is enough; the few that overlap (MEMORY.md, two logs of one date) are
    inserted afterwards by binary search."""
    logs = sorted((v for v in infos if v.rows and not v.curated), key=lambda v: v.lo)  # type: ignore[arg-type, return-value]
    rows: list[Row] = []
    stragglers: list[Row] = [r for v in infos if v.curated for r in v.rows]
    last = None
    for v in logs:
        if last is None or last < v.lo:
            rows.extend(v.rows)
            last = v.hi
        else:
            stragglers.extend(v.rows)
    if not stragglers:
        return rows
    if len(stragglers) > MAX_STRAGGLERS:
        return sorted(chain(rows, stragglers), key=lambda r: sort_key(r[0]))
    stragglers.sort(key=lambda r: sort_key(r[0]))
    out: list[Row] = []
    pos = 0
    for row in stragglers:
        at = bisect.bisect_right(rows, sort_key(row[0]), lo=pos, key=lambda r: sort_key(r[0]))
        out.extend(rows[pos:at])
        out.append(row)
        pos = at
    out.extend(rows[pos:])
    return out


class VersionInfos:
    """`VersionInfo` per (path, blob), computed once per session."""

    def __init__(self, config: Config):
        self.config = config
        self.solo = Timeline([], config)  # no superseders: status depends on the entry alone
        self.infos: dict[tuple[str, str], VersionInfo] = {}

    def get(self, key: tuple[str, str], events: list[Event]) -> VersionInfo:
        info = self.infos.get(key)
        if info is None:
            with no_gc():
                info = VersionInfo.of(events, self.solo)
            self.infos[key] = info
        return info
