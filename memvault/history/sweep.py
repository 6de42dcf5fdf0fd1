"""Recorded time precomputed: who is live at every commit, found by one sweep over history.

What `asof --recorded T` needs from the state at commit C is, for each entry present, its
live interval in event time under that state's supersession. Most entries are live from
their timestamp until they expire, whatever else is present (their *solo* interval, cached
per file version); only two kinds differ, and they are few: entries something in the state
supersedes, and second occurrences of an id (never live). So the answer at every commit is
"solo intervals, minus a few overrides", and overrides change only where the history
changes them. `Sweep` walks the first-parent commits once, applying each commit's changed
files, and records each override and each supersession/reconfirmation edge as a run of
commits [c_from, c_to) — a few rows per entry in total (see recorded_index.py for storage
and queries).

Exactness rests on reusing the real code, never restating it:

- references are resolved by `Timeline._build` itself, run on one holder at a time over an
  index of the current state that notes every key it is asked for (ids, dates, block ids,
  "every entry before this one"); a holder is resolved again only when one of those keys
  changed, so its answer is what a full `Timeline` of the state would give;
- `_build` also refuses an edge that would close a cycle, which depends on the order of
  holders. Each entry supersedes at most one other, so the candidate edges form a
  functional graph, and an edge can only be refused if it lies on a cycle of candidates;
  the walk that refuses it only visits that cycle. Each cycle's holders are therefore run
  through `_build` in timeline order on their own, giving exactly the edges it keeps;
- an override is `spans.live_interval` of the entry in a `Timeline` holding it and its
  superseders, i.e. `Timeline.status` (the one rule) probed where it can change.

tests/test_history_sweep.py checks every commit of generated histories (and random walks
through odd states: cycles, duplicates, links, text references) against `Timeline`.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.spans import live_interval
from memvault.entries.timeline import EventIndex, Timeline
from memvault.history.timelines import NEVER_LIVE, VersionInfo

OrderKey = tuple[int, str, int]  # an entry's place in timeline order: (time in µs, file, line)
UNDATED = -(2**63)  # before every time, as `sort_key` puts entries without one
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SUPERSEDES, RECONFIRMS, DUPLICATE = 0, 1, 2  # edge kinds; DUPLICATE: a later occurrence -> the first
Span = tuple[float, float]
Dep = tuple[str, Any]  # ("i", id) | ("d", date) | ("b", block) | ("<", OrderKey) | ("a", None)


def micros(when: datetime) -> int:
    """Exact µs since the epoch: the same order as comparing the aware datetimes."""
    return (when - EPOCH) // timedelta(microseconds=1)


def order_key(ev: Event) -> OrderKey:
    """`events.sort_key` as exact integers (same order, cheaper and storable)."""
    return (UNDATED if ev.timestamp is None else micros(ev.timestamp), ev.file, ev.line)


class Occurrences:
    """Every file version's entries in one numbering: occurrence = base[vid] + position of
    the entry in the version's timeline order (`VersionInfo.events`). `events`, `okey` and
    `infos` are only indexed, so a stored index can supply them lazily (recorded_store)."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, str]] = []  # vid -> (path, blob)
        self.vids: dict[tuple[str, str], int] = {}
        self.infos: Any = []  # vid -> VersionInfo
        self.base: list[int] = []
        self.count: list[int] = []
        self.events: Any = []  # occurrence -> Event
        self.okey: Any = []  # occurrence -> OrderKey
        self.ids: list[str] = []  # occurrence -> id

    def add(self, key: tuple[str, str], info: VersionInfo) -> int:
        vid = self.vids.get(key)
        if vid is None:
            vid = self.vids[key] = len(self.keys)
            self.keys.append(key)
            self.infos.append(info)
            self.base.append(len(self.ids))
            self.count.append(len(info.events))
            self.events.extend(info.events)
            self.okey.extend(order_key(ev) for ev in info.events)
            self.ids.extend(ev.id for ev in info.events)
        return vid

    def span(self, vid: int) -> range:
        return range(self.base[vid], self.base[vid] + self.count[vid])


class _View:
    """Read-only mapping over one of the sweep's tables that notes every key asked for."""

    __slots__ = ("lookup", "deps", "tag")

    def __init__(self, lookup: Callable[[str], Any], deps: set[Dep], tag: str):
        self.lookup = lookup
        self.deps = deps
        self.tag = tag

    def get(self, key: str, default: Any = None) -> Any:
        self.deps.add((self.tag, key))
        found = self.lookup(key)
        return default if found is None else found

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key: str) -> Any:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


class _RecordingIndex(EventIndex):
    """The `EventIndex` of the sweep's current state, answering from its tables and noting
    what each resolution looked at."""

    def __init__(self, sweep: Sweep, deps: set[Dep]):  # no super().__init__: tables are views
        self._sweep = sweep
        self._deps = deps
        # EventIndex.resolve only looks keys up (get, in, []) in its tables: these views answer
        # the lookups without building the dicts, which the checker cannot see
        self.by_id = _View(sweep.first_event, deps, "i")  # type: ignore[assignment]
        self.by_date = _View(sweep.day_events, deps, "d")  # type: ignore[assignment]
        self.by_block = _View(sweep.block_events, deps, "b")  # type: ignore[assignment]
        self.duplicates = []

    def _all_events(self, source: Event | None) -> list[Event]:
        # a text reference searches every entry before its source (`_before`)
        self._deps.add(("a", None) if source is None or source.timestamp is None else ("<", order_key(source)))
        return self._sweep.all_events()


class _Holders(Timeline):
    """A `Timeline` over some holders of references, resolved against the sweep's state."""

    def __init__(self, events: list[Event], index: EventIndex, config: Config):  # no super().__init__
        self.config = config
        self.events = events
        self.index = index
        self.supersedes = {}
        self.superseded_by = defaultdict(list)
        self.reconfirmed_by = defaultdict(list)
        self.reconfirms_of = defaultdict(list)
        self.problems = []
        self._build()


class Sweep:
    """The state of the vault commit after commit, and the runs of overrides and edges."""

    def __init__(self, occ: Occurrences, config: Config):
        self.occ = occ
        self.config = config
        self.present: dict[str, int] = {}  # path -> vid
        self.by_id: dict[str, list[int]] = {}  # id -> occurrences in timeline order
        self.by_date: dict[str, list[int]] = {}
        self.by_block: dict[str, list[int]] = {}
        self._version_keys: dict[int, tuple[dict[str, list[int]], dict[str, list[int]]]] = {}
        self._all: list[Event] | None = None
        # holders: occurrence -> (what its resolution read, supersedes target, reconfirmed ids)
        self.resolved: dict[int, tuple[set[Dep], str | None, tuple[str, ...]]] = {}
        self.readers: dict[Dep, set[int]] = defaultdict(set)
        self.before: dict[int, OrderKey] = {}  # holders reading "every entry before key"
        self.everything: set[int] = set()  # holders reading every entry
        self.cand: dict[str, tuple[str, int]] = {}  # holder id -> (target id, holder occurrence)
        self.rec_in: dict[str, set[int]] = defaultdict(set)  # target id -> reconfirming occurrences
        self.rejected: set[str] = set()  # holder ids whose edge would close a cycle
        self.cyclic: set[str] = set()
        self.acc: dict[str, str] = {}  # accepted edges: holder id -> target id
        self.acc_in: dict[str, set[str]] = defaultdict(set)
        # output: open runs and the closed ones
        self.ovr_open: dict[int, tuple[Span, int]] = {}  # occurrence -> (span, since commit)
        self.ovr_of: dict[str, set[int]] = defaultdict(set)  # id -> occurrences overridden
        self.edge_open: dict[tuple[int, int, int], int] = {}  # (kind, src, dst) -> since commit
        self.edges_in: dict[str, set[tuple[int, int, int]]] = {}
        self.ovr_rows: list[tuple[int, int, int, float, float]] = []
        self.edge_rows: list[tuple[int, int, int, int, int]] = []
        self.now = 0

    # -- the state's index (what `_RecordingIndex` reads) ------------------------------------

    def first_event(self, eid: str) -> Event | None:
        occs = self.by_id.get(eid)
        return self.occ.events[occs[0]] if occs else None

    def day_events(self, day: str) -> list[Event] | None:
        occs = self.by_date.get(day)
        return [self.occ.events[o] for o in occs] if occs else None

    def block_events(self, block: str) -> list[Event] | None:
        occs = self.by_block.get(block)
        return [self.occ.events[o] for o in occs] if occs else None

    def all_events(self) -> list[Event]:
        if self._all is None:
            occs = [o for vid in self.present.values() for o in self.occ.span(vid)]
            occs.sort(key=self.occ.okey.__getitem__)
            self._all = [self.occ.events[o] for o in occs]
        return self._all

    def _keys(self, vid: int) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """The version's entries by date and by block id, as `EventIndex` files them."""
        got = self._version_keys.get(vid)
        if got is None:
            info = self.occ.infos[vid]
            where = {id(ev): o for ev, o in zip(info.events, self.occ.span(vid), strict=True)}
            index = EventIndex(info.events)
            got = ({d: [where[id(e)] for e in evs] for d, evs in index.by_date.items()},
                   {b: [where[id(e)] for e in evs] for b, evs in index.by_block.items()})
            self._version_keys[vid] = got
        return got

    # -- one commit ----------------------------------------------------------------------------

    def step(self, commit: int, changes: Iterable[tuple[str, int | None]]) -> None:
        """Apply commit number `commit`'s changed files (path -> new vid, None when deleted)."""
        self.now = commit
        gone: list[int] = []
        new: list[int] = []
        for path, vid in changes:
            old = self.present.get(path)
            if old == vid:
                continue
            if old is not None:
                gone.append(old)
                del self.present[path]
            if vid is not None:
                new.append(vid)
                self.present[path] = vid
        if not gone and not new:
            return
        self._all = None
        touched_ids: set[str] = set()
        dates: set[str] = set()
        blocks: set[str] = set()
        lowest: OrderKey | None = None
        for vid, adding in [(v, False) for v in gone] + [(v, True) for v in new]:
            span = self.occ.span(vid)
            if len(span):
                first_key = self.occ.okey[span.start]
                lowest = first_key if lowest is None else min(lowest, first_key)
            self._file(vid, adding, touched_ids, dates, blocks)
        left = [o for vid in gone for o in self.occ.span(vid) if o in self.resolved]
        dirty = self._dirty(touched_ids, dates, blocks, lowest) - set(left)
        dirty.update(o for vid in new for o in self.occ.span(vid) if self._holds(o))
        ids = self.occ.ids
        affected = {ids[o] for o in left} | {ids[o] for o in dirty}
        was = {x: self.cand.get(x) for x in affected}
        targets: set[str] = set()
        for o in left:
            self._forget(o, targets)
        for o in sorted(dirty, key=self.occ.okey.__getitem__):
            if o in self.resolved:
                self._forget(o, targets)
            self._resolve(o, targets)
        changed = {x for x in affected if was[x] != self.cand.get(x)}
        self._accept(changed, targets)
        for x in touched_ids | targets:
            # an id with one occurrence, nothing pointing at it and nothing stored has no
            # overrides or edges to (re)compute: most ids of a newly added file
            if (len(self.by_id.get(x, ())) > 1 or self.acc_in.get(x) or self.rec_in.get(x)
                    or self.ovr_of.get(x) or x in self.edges_in):
                self._refresh(x)

    def _holds(self, o: int) -> bool:
        ev = self.occ.events[o]
        return bool(ev.supersedes or ev.reconfirms)

    def _file(self, vid: int, adding: bool, ids: set[str], dates: set[str], blocks: set[str]) -> None:
        """Add a version's entries to the state's tables, or take them out."""
        key = self.occ.okey.__getitem__
        by_date, by_block = self._keys(vid)
        for table, entries, seen in ((self.by_date, by_date, dates), (self.by_block, by_block, blocks)):
            for name, occs in entries.items():
                seen.add(name)
                row = table.setdefault(name, [])
                for o in occs:
                    if adding:
                        bisect.insort(row, o, key=key)
                    else:
                        row.remove(o)
                if not row:
                    del table[name]
        for o in self.occ.span(vid):
            eid = self.occ.ids[o]
            ids.add(eid)
            row = self.by_id.setdefault(eid, [])
            if adding:
                bisect.insort(row, o, key=key)
            else:
                row.remove(o)
                if not row:
                    del self.by_id[eid]
                if o in self.ovr_open:
                    self._close_override(o)
                self.ovr_of[eid].discard(o)

    def _dirty(self, ids: set[str], dates: set[str], blocks: set[str], lowest: OrderKey | None) -> set[int]:
        """Present holders whose resolution read something that just changed."""
        out: set[int] = set(self.everything)
        for tag, names in (("i", ids), ("d", dates), ("b", blocks)):
            for name in names:
                out |= self.readers.get((tag, name), set())
        if lowest is not None:
            out.update(h for h, k in self.before.items() if lowest < k)
        return {h for h in out if h in self.resolved}

    def _forget(self, o: int, targets: set[str]) -> None:
        deps, sup, rec = self.resolved.pop(o)
        for dep in deps:
            self.readers[dep].discard(o)
        self.before.pop(o, None)
        self.everything.discard(o)
        eid = self.occ.ids[o]
        if self.cand.get(eid, (None, -1))[1] == o:
            del self.cand[eid]
        for t in rec:
            self.rec_in[t].discard(o)
            targets.add(t)

    def _resolve(self, o: int, targets: set[str]) -> None:
        ev = self.occ.events[o]
        deps: set[Dep] = set()
        one = _Holders([ev], _RecordingIndex(self, deps), self.config)
        sup = one.supersedes.get(ev.id)
        rec = tuple(t for t, srcs in one.reconfirmed_by.items() if srcs)
        self._register(o, deps, sup, rec, targets)

    def _register(self, o: int, deps: set[Dep], sup: str | None, rec: tuple[str, ...], targets: set[str]) -> None:
        self.resolved[o] = (deps, sup, rec)
        for dep in deps:
            if dep[0] == "<":
                self.before[o] = max(dep[1], self.before.get(o, dep[1]))
            elif dep[0] == "a":
                self.everything.add(o)
            else:
                self.readers[dep].add(o)
        if sup is not None:
            self.cand[self.occ.ids[o]] = (sup, o)
        for t in rec:
            self.rec_in[t].add(o)
            targets.add(t)

    def _accept(self, changed: set[str], targets: set[str]) -> None:
        """Accepted edges = candidates minus those `_build` refuses for closing a cycle."""
        on_cycle: set[str] = set()
        cycles: list[list[str]] = []
        for x in changed | self.cyclic:
            if x in on_cycle or x not in self.cand:
                continue
            path, seen, node = [x], {x}, self.cand[x][0]
            while node in self.cand and node not in seen:
                seen.add(node)
                path.append(node)
                node = self.cand[node][0]
            if node == x:
                on_cycle.update(path)
                cycles.append(path)
        rejected: set[str] = set()
        for members in cycles:
            holders = sorted((self.occ.events[self.cand[m][1]] for m in members), key=order_key)
            kept = _Holders(holders, _RecordingIndex(self, set()), self.config).supersedes
            rejected.update(m for m in members if m not in kept)
        self.cyclic = on_cycle
        for x in changed | (rejected ^ self.rejected):
            old = self.acc.pop(x, None)
            if old is not None:
                self.acc_in[old].discard(x)
                targets.add(old)
            got = self.cand.get(x)
            if got is not None and x not in rejected:
                self.acc[x] = got[0]
                self.acc_in[got[0]].add(x)
                targets.add(got[0])
        self.rejected = rejected

    def _refresh(self, x: str) -> None:
        """Recompute the overrides and incoming edges of id `x` after a change near it."""
        occs = self.by_id.get(x, [])
        want: dict[int, Span] = {o: NEVER_LIVE for o in occs[1:]}
        edges: set[tuple[int, int, int]] = set()
        if occs:
            first = occs[0]
            edges.update((DUPLICATE, o, first) for o in occs[1:])
            sups = sorted(self.acc_in.get(x, ()))
            if sups:
                ev = self.occ.events[first]
                mini = Timeline([ev, *(self.occ.events[self.cand[h][1]] for h in sups)], self.config,
                                edges=({h: x for h in sups}, []), sourced_start=False)
                want[first] = live_interval(mini, ev) or NEVER_LIVE
                edges.update((SUPERSEDES, self.cand[h][1], first) for h in sups)
            edges.update((RECONFIRMS, r, first) for r in self.rec_in.get(x, ()))
        for o in list(self.ovr_of.get(x, ())):
            if o not in want:
                self._close_override(o)
                self.ovr_of[x].discard(o)
        for o, span in want.items():
            now = self.ovr_open.get(o)
            if now is not None and now[0] == span:
                continue
            if now is not None:
                self._close_override(o)
            self.ovr_open[o] = (span, self.now)
            self.ovr_of[x].add(o)
        before = self.edges_in.get(x, set())
        for edge in before - edges:
            since = self.edge_open.pop(edge)
            if since < self.now:
                self.edge_rows.append((*edge, since, self.now))
        for edge in edges - before:
            self.edge_open[edge] = self.now
        if edges:
            self.edges_in[x] = edges
        else:
            self.edges_in.pop(x, None)

    def _close_override(self, o: int) -> None:
        span, since = self.ovr_open.pop(o)
        if since < self.now:
            self.ovr_rows.append((o, since, self.now, *span))

    def finish(self, end: int) -> None:
        """Close every open run at commit number `end` (one past the last commit swept)."""
        self.now = end
        for o in list(self.ovr_open):
            self._close_override(o)
        for edge, since in self.edge_open.items():
            if since < end:
                self.edge_rows.append((*edge, since, end))
        self.edge_open.clear()

    # -- resuming: what the stored runs do not hold ------------------------------------------

    def state(self) -> dict[str, Any]:
        """The state after the last commit swept, as JSON-able data (with the open runs and
        the occurrences' ids, enough to go on sweeping later without re-resolving)."""
        resolved = [[o, [[t, list(k) if t == "<" else k] for t, k in deps], sup, list(rec)]
                    for o, (deps, sup, rec) in self.resolved.items()]
        return {"by_date": self.by_date, "by_block": self.by_block, "resolved": resolved,
                "rejected": sorted(self.rejected), "cyclic": sorted(self.cyclic)}

    def restore(self, state: dict[str, Any], present: dict[str, int], ovr_open: dict[int, tuple[Span, int]],
                edge_open: dict[tuple[int, int, int], int]) -> None:
        """Take up the state `state()` gave, with the files present then and the runs open then."""
        ids, key = self.occ.ids, self.occ.okey.__getitem__
        self.present = dict(present)
        for vid in self.present.values():
            for o in self.occ.span(vid):
                self.by_id.setdefault(ids[o], []).append(o)
        for row in self.by_id.values():
            if len(row) > 1:
                row.sort(key=key)
        self.by_date, self.by_block = state["by_date"], state["by_block"]
        for o, deps, sup, rec in state["resolved"]:
            self._register(o, {(t, tuple(k) if t == "<" else k) for t, k in deps}, sup, tuple(rec), set())
        self.rejected, self.cyclic = set(state["rejected"]), set(state["cyclic"])
        for x, (target, _) in self.cand.items():
            if x not in self.rejected:
                self.acc[x] = target
                self.acc_in[target].add(x)
        self.ovr_open = dict(ovr_open)
        for o in self.ovr_open:
            self.ovr_of[ids[o]].add(o)
        self.edge_open = dict(edge_open)
        for edge in self.edge_open:
            self.edges_in.setdefault(ids[edge[2]], set()).add(edge)
