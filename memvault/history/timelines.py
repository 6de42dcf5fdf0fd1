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

Every result equals `Timeline(state events)`; tests/test_history_timelines.py checks that commit by
commit on generated histories.

`asof --recorded` itself no longer builds a state per commit: it reads the precomputed index
(recorded_sweep / recorded_index / recorded_store). StateTimeline serves `changes`, `diff`,
revisions off the first-parent chain and `[history] precompute = false`.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import Any

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.spans import live_interval
from memvault.entries.timeline import EventIndex, Timeline, sort_key
from memvault.gcpause import no_gc
from memvault.history.gitrepo import CommitList, GitRepo

Row = tuple[Event, float, float]  # an event and its live interval when nothing supersedes it
NEVER_LIVE = (float("inf"), float("-inf"))
# More straggler events than this (files overlapping in time) and a plain sort is cheaper.
MAX_STRAGGLERS = 4000


class VersionTable:
    """Which blob each vault file had at each first-parent commit, from one `git log --raw`."""

    def __init__(self, repo: GitRepo, commits: CommitList):
        self.commits = commits
        self._history: dict[str, tuple[list[int], list[str | None]]] = {}
        for commit, changes in repo.file_log(list(repo.selection.pathspecs)):
            idx = commits.position(commit.sha)
            if idx is None:  # HEAD moved between the two reads: let the caller fall back
                self.complete = False
                return
            for path, blob in changes.items():
                if not repo.selection.selects(path):
                    continue
                starts, blobs = self._history.setdefault(path, ([], []))
                starts.append(idx)
                blobs.append(blob)
        self.complete = True

    @property
    def history(self) -> dict[str, tuple[list[int], list[str | None]]]:
        """path -> (commit numbers where its blob changed, the blob from then on or None)."""
        return self._history

    def tree(self, idx: int) -> dict[str, str]:
        """Vault-relative path -> blob at commit number `idx` (oldest is 0)."""
        out: dict[str, str] = {}
        for path, (starts, blobs) in self._history.items():
            k = bisect.bisect_right(starts, idx) - 1
            blob = blobs[k] if k >= 0 else None
            if blob is not None:
                out[path] = blob
        return out


@dataclass
class VersionInfo:
    """What one file version contributes to any state containing it."""

    path: str
    events: list[Event]  # in timeline order
    ids: list[str]
    rows: list[Row]  # the same events with their live intervals when nothing supersedes them
    holders: list[Event]  # entries with Supersedes:/Reconfirms:, in timeline order
    lo: tuple[float, str, int]  # sort keys of the first and last event, time as a float
    hi: tuple[float, str, int]
    max_start: float  # every event is live-if-not-superseded on [max_start, min_end)
    min_end: float
    curated: bool
    position: dict[str, int]  # id -> index of its first event here

    @classmethod
    def of(cls, path: str, events: list[Event], solo: Timeline, spans: list[tuple[float, float]] | None = None) -> VersionInfo:
        """`spans`, when given, are the events' solo intervals in `events` order (cached)."""
        if spans is not None and len(spans) == len(events):
            pairs = sorted(zip(events, spans, strict=True), key=lambda p: sort_key(p[0]))
            ordered = [p[0] for p in pairs]
            rows: list[Row] = [(ev, s, e) for ev, (s, e) in pairs]
        else:
            ordered = sorted(events, key=sort_key)
            rows = [(ev, *(live_interval(solo, ev) or NEVER_LIVE)) for ev in ordered]
        return cls(
            path=path,
            events=ordered,
            ids=[e.id for e in ordered],
            rows=rows,
            holders=[e for e in ordered if e.supersedes or e.reconfirms],
            lo=_fkey(ordered[0]) if ordered else (math.inf, path, 0),
            hi=_fkey(ordered[-1]) if ordered else (math.inf, path, 0),
            max_start=max((r[1] for r in rows), default=-math.inf),
            min_end=min((r[2] for r in rows), default=math.inf),
            curated=any(e.kind == "curated" for e in ordered),
            position={e.id: i for i, e in reversed(list(enumerate(ordered)))},
        )


def _fkey(ev: Event) -> tuple[float, str, int]:
    """`sort_key` with the time as POSIX seconds: same order, much cheaper to compare."""
    return (ev.timestamp.timestamp() if ev.timestamp is not None else -math.inf, ev.file, ev.line)


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

    # EventIndex's plain attributes, read-only here: built on first read (nothing assigns them)
    @property
    def by_date(self) -> dict[str, list[Event]]:  # type: ignore[override]
        return self._whole().by_date

    @property
    def by_block(self) -> dict[str, list[Event]]:  # type: ignore[override]
        return self._whole().by_block

    @property
    def duplicates(self) -> list[Event]:  # type: ignore[override]
        if len(self.by_id) == len(self.events):
            return []
        return self._whole().duplicates


def _key(row: Row) -> tuple[Any, ...]:
    return sort_key(row[0])


class StateTimeline(Timeline):
    """A `Timeline` of one recorded state, assembled from per-version work (see module doc)."""

    sourced_start = False  # recorded time: a bullet exists from its commit (Timeline.start)

    def __init__(self, infos: Iterable[VersionInfo], config: Config):  # no super().__init__: see above
        self.config = config
        with no_gc():  # ~100k small objects, no cycles: a gen-2 pass would cost more than the build
            self.blocks, self.stragglers = _layout(list(infos))
            logs = list(chain.from_iterable(v.events for v in self.blocks))
            evs = _insert(logs, [r[0] for r in self.stragglers], sort_key)
            ids = list(chain.from_iterable(v.ids for v in self.blocks)) if not self.stragglers else [e.id for e in evs]
            by_id = dict(zip(reversed(ids), reversed(evs), strict=True))  # the first occurrence wins
            self.unique = len(by_id) == len(evs)
            self.index = _StateIndex(evs, by_id)
            self.supersedes: dict[str, str] = {}
            self.superseded_by: dict[str, list[str]] = defaultdict(list)
            self.reconfirmed_by: dict[str, list[str]] = defaultdict(list)
            self.reconfirms_of = defaultdict(list)
            self.problems = []
            holders = list(chain.from_iterable(v.holders for v in self.blocks))
            extra = [r[0] for r in self.stragglers if r[0].supersedes or r[0].reconfirms]
            # Timeline._build walks self.events and acts only on entries holding references
            self.events = _insert(holders, extra, sort_key)
            try:
                self._build()
            finally:
                self.events = evs

    def live(self, at: datetime | None = None) -> list[Event]:
        if at is None:
            return super().live(at)
        t = at.timestamp()
        by_id = self.by_id
        # entries something supersedes in this state: the rule decides those one by one
        gone = [ev for x, sups in self.superseded_by.items()
                if sups and (ev := by_id.get(x)) is not None and self.status(ev, at) != "live"]
        bad = {id(ev) for ev in gone}
        bad_files: dict[str, list[Event]] = defaultdict(list)
        for ev in gone:
            bad_files[ev.file].append(ev)
        parts: list[list[Event]] = []
        for v in self.blocks:
            drop = bad_files.get(v.path)
            if v.max_start <= t < v.min_end:
                parts.append(_without(v, drop) if drop else v.events)
                continue
            block = [e for e, s, end in v.rows if s <= t < end]
            parts.append([e for e in block if id(e) not in bad] if drop else block)
        logs = list(chain.from_iterable(parts))
        extra = [e for e, s, end in self.stragglers if s <= t < end and id(e) not in bad]
        out = _insert(logs, extra, sort_key)
        if not self.unique:
            out = [e for e in out if by_id.get(e.id) is e]
        return out


def _without(v: VersionInfo, drop: list[Event]) -> list[Event]:
    """v.events minus `drop`, by slicing around their positions."""
    cut = sorted(v.position.get(ev.id, -1) for ev in drop)
    if cut[0] < 0 or any(v.events[i] is not ev for i, ev in zip(cut, sorted(drop, key=lambda e: v.position[e.id]), strict=True)):
        ids = {id(ev) for ev in drop}
        return [e for e in v.events if id(e) not in ids]
    out: list[Event] = []
    start = 0
    for i in cut:
        out += v.events[start:i]
        start = i + 1
    out += v.events[start:]
    return out


def _layout(infos: list[VersionInfo]) -> tuple[list[VersionInfo], list[Row]]:
    """Versions to concatenate in timeline order, and the rows to insert among them.

    Daily logs cover disjoint days, so sorting them is enough; the few versions that
    overlap others in time (MEMORY.md, a second log of one date) become stragglers.
    """
    logs = sorted((v for v in infos if v.rows and not v.curated), key=lambda v: v.lo)
    blocks: list[VersionInfo] = []
    stragglers: list[Row] = [r for v in infos if v.curated for r in v.rows]
    last = None
    for v in logs:
        if last is None or last < v.lo:
            blocks.append(v)
            last = v.hi
        else:
            stragglers.extend(v.rows)
    stragglers.sort(key=_key)
    return blocks, stragglers


def _insert(items: list[Event], extra: list[Event], key: Any) -> list[Event]:
    """`items` with the sorted `extra` merged in, both in `key` order."""
    if not extra:
        return items
    if len(extra) > MAX_STRAGGLERS:
        return sorted(chain(items, extra), key=key)
    out: list[Event] = []
    pos = 0
    for ev in extra:
        at = bisect.bisect_right(items, key(ev), lo=pos, key=key)
        out.extend(items[pos:at])
        out.append(ev)
        pos = at
    out.extend(items[pos:])
    return out


class VersionInfos:
    """`VersionInfo` per (path, blob), computed once per session."""

    def __init__(self, config: Config):
        self.config = config
        self.solo = Timeline([], config)  # no superseders: status depends on the entry alone
        self.infos: dict[tuple[str, str], VersionInfo] = {}

    def get(self, key: tuple[str, str], events: list[Event], spans: list[tuple[float, float]] | None = None) -> VersionInfo:
        info = self.infos.get(key)
        if info is None:
            info = VersionInfo.of(key[0], events, self.solo, spans)
            self.infos[key] = info
        return info
