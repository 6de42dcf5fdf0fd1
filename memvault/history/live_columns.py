"""`asof --recorded` from precomputed columns: no per-commit Python state to rebuild.

`recorded_sweep.Sweep` walks the first-parent history once and yields, for every commit,
"each entry's solo live interval, minus a few overrides" as runs of commits. This module
stores that in `.memvault/history.sqlite` as a handful of typed arrays (table `recorded`,
one BLOB per column) keyed by HEAD and a fingerprint of the code and settings, and answers
"live at T in commit C" from them:

- per entry (occurrence): time and line (its place in timeline order) and its solo interval;
- per file version: where its entries start, the bounds of their intervals, and the commit
  ranges in which it is present (sorted by its first entry, so a query stops at T);
- override runs (occurrence, commits, interval) and edge runs (supersedes / reconfirms).

A query is a pass over the versions present (whole files at once when all their entries
are live), a set of overridden occurrences to drop, and the few entries of files that
overlap others in time merged in. Events are built only for the entries returned, from the
parse cache, with a `Timeline` holding just them and their edges for `to_dict`.

Building, resuming and storing the columns is recorded_store.py's part.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
from array import array
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.history.gitrepo import Commit, CommitList
from memvault.history.sweep import DUPLICATE, RECONFIRMS, SUPERSEDES, micros

if TYPE_CHECKING:
    from memvault.history.snapshot import SnapshotLoader

# name -> array typecode of every stored column
COLUMNS = {
    "tsus": "q", "line": "i", "s": "d", "e": "d",  # per occurrence
    "base": "q", "count": "i", "curated": "b", "mins": "d", "maxs": "d", "mine": "d",  # per version
    "pv": "i", "pf": "i", "pt": "i",  # presence runs, sorted by the version's first entry
    "o_occ": "q", "o_from": "i", "o_to": "i", "o_s": "d", "o_e": "d",  # override runs by o_from
    "g_kind": "b", "g_src": "q", "g_dst": "q", "g_from": "i", "g_to": "i",  # edge runs
}  # fmt: skip


class StaleIndex(Exception):
    """The stored columns do not match the parse cache any more (caller rebuilds)."""


class Columns:
    """The stored form: a JSON header plus typed arrays (table `recorded`, one row each)."""

    def __init__(self, meta: dict[str, Any], arrays: dict[str, array], extra: dict[str, Any] | None = None):
        self.meta = meta
        self.a = arrays
        self.extra = extra or {}  # JSON rows: the sweep's state and the entries' ids (resuming)

    @classmethod
    def load(cls, db: sqlite3.Connection, fingerprint: str, *, extra: tuple[str, ...] = ()) -> Columns | None:
        """The stored columns if made with `fingerprint`; `extra` rows (JSON) only on demand:
        a query needs none of them."""
        names = ("meta", *COLUMNS, *extra)
        rows = dict(db.execute(f"SELECT name, data FROM recorded WHERE name IN ({','.join('?' * len(names))})", names))
        if "meta" not in rows:
            return None
        meta = json.loads(rows["meta"])
        if meta.get("fingerprint") != fingerprint or any(name not in rows for name in COLUMNS):
            return None
        arrays = {}
        for name, code in COLUMNS.items():
            arr = array(code)
            arr.frombytes(rows[name])
            arrays[name] = arr
        cols = cls(meta, arrays)
        cols.extra = {name: json.loads(rows[name]) for name in extra if name in rows}
        return cols

    def save(self, db: sqlite3.Connection) -> None:
        rows = [("meta", json.dumps(self.meta, separators=(",", ":")).encode())]
        rows += [(name, self.a[name].tobytes()) for name in COLUMNS]
        rows += [(name, json.dumps(value, separators=(",", ":")).encode()) for name, value in self.extra.items()]
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM recorded")
            db.executemany("INSERT INTO recorded VALUES (?, ?)", rows)
            db.execute("COMMIT")
        except sqlite3.Error:
            db.execute("ROLLBACK")
            raise

    @property
    def commits(self) -> list[Commit]:
        return [Commit(sha, stamp) for sha, stamp in self.meta["commits"]]


class RecordedIndex:
    """Answers "live at T in commit number C" from `Columns`."""

    def __init__(self, cols: Columns, loader: SnapshotLoader, config: Config):
        self.cols = cols
        self.loader = loader
        self.config = config
        a = cols.a
        self.a = a
        self.keys: list[tuple[str, str]] = [(p, b) for p, b in cols.meta["versions"]]
        self.commits = CommitList(cols.commits)
        base, count, tsus, line = a["base"], a["count"], a["tsus"], a["line"]
        self.lo: list[tuple[int, str, int] | None] = []
        self.hi: list[tuple[int, str, int] | None] = []
        for vid, (path, _) in enumerate(self.keys):
            b, n = base[vid], count[vid]
            self.lo.append((tsus[b], path, line[b]) if n else None)
            self.hi.append((tsus[b + n - 1], path, line[b + n - 1]) if n else None)
        self._edges: tuple[dict[int, list[int]], dict[int, list[int]]] | None = None
        self._where: dict[int, dict[int, int]] = {}

    def position(self, sha: str) -> int | None:
        return self.commits.position(sha)

    def vid_of(self, occ: int) -> int:
        return bisect.bisect_right(self.a["base"], occ) - 1

    def _key(self, occ: int) -> tuple[int, str, int]:
        return (self.a["tsus"][occ], self.keys[self.vid_of(occ)][0], self.a["line"][occ])

    def live(self, c: int, at: datetime) -> list[int]:
        """Occurrences live at `at` in commit number `c`, in timeline order."""
        a = self.a
        t, tus = at.timestamp(), micros(at)
        S, E, base, count = a["s"], a["e"], a["base"], a["count"]
        mins, maxs, mine, curated = a["mins"], a["maxs"], a["mine"], a["curated"]
        lo, hi = self.lo, self.hi
        out: list[int] = []
        extra: list[int] = []  # entries of files overlapping others in time: merged in below
        last = None
        for vid, since, until in zip(a["pv"], a["pf"], a["pt"], strict=True):
            first = lo[vid]
            if first[0] > tus:  # sorted by first entry: the rest is after T
                break
            if not since <= c < until or mins[vid] > t:
                continue
            b = base[vid]
            occs = range(b, b + count[vid])
            if curated[vid] or (last is not None and not last < first):
                extra.extend(o for o in occs if S[o] <= t < E[o])
                continue
            last = hi[vid]
            if maxs[vid] <= t < mine[vid]:
                out.extend(occs)
            else:
                out.extend([o for o in occs if S[o] <= t < E[o]])
        k = bisect.bisect_right(a["o_from"], c)
        dropped = {o for o, until, s, e in zip(a["o_occ"][:k], a["o_to"][:k], a["o_s"][:k], a["o_e"][:k], strict=True)
                   if c < until and not s <= t < e}
        if dropped:
            out = [o for o in out if o not in dropped]
            extra = [o for o in extra if o not in dropped]
        return self._merge(out, extra)

    def _merge(self, out: list[int], extra: list[int]) -> list[int]:
        if not extra:
            return out
        if len(extra) > 4000:
            return sorted(out + extra, key=self._key)
        extra.sort(key=self._key)
        merged: list[int] = []
        pos = 0
        for o in extra:
            at = bisect.bisect_right(out, self._key(o), lo=pos, key=self._key)
            merged.extend(out[pos:at])
            merged.append(o)
            pos = at
        merged.extend(out[pos:])
        return merged

    # -- entries for the answer ---------------------------------------------------------------

    def events(self, occs: list[int]) -> dict[int, Event]:
        """The `Event` of each occurrence, from the parse cache (only the files needed)."""
        by_vid: dict[int, list[int]] = defaultdict(list)
        for o in occs:
            by_vid[self.vid_of(o)].append(o)
        keys = [self.keys[v] for v in by_vid]
        parsed = self.loader.events_of(keys)
        out: dict[int, Event] = {}
        base, count, line = self.a["base"], self.a["count"], self.a["line"]
        spans = self.loader.cache.spans
        for vid, wanted in by_vid.items():
            key = self.keys[vid]
            info = self.loader.infos.get(key, parsed[key], spans.get(key))
            if len(info.events) != count[vid]:
                raise StaleIndex(f"{key[0]} parses to {len(info.events)} entries, index has {count[vid]}")
            for o in wanted:
                ev = info.events[o - base[vid]]
                if ev.line != line[o]:
                    raise StaleIndex(f"{key[0]}: entry {o - base[vid]} is at line {ev.line}, index says {line[o]}")
                out[o] = ev
        return out

    def _edge_maps(self) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        if self._edges is None:
            by_src: dict[int, list[int]] = defaultdict(list)
            by_dst: dict[int, list[int]] = defaultdict(list)
            for k, (src, dst) in enumerate(zip(self.a["g_src"], self.a["g_dst"], strict=True)):
                by_src[src].append(k)
                by_dst[dst].append(k)
            self._edges = (by_src, by_dst)
        return self._edges

    def _active(self, table: dict[int, list[int]], o: int, c: int) -> list[int]:
        since, until = self.a["g_from"], self.a["g_to"]
        return [k for k in table.get(o, ()) if since[k] <= c < until[k]]

    def timeline_for(self, c: int, occs: list[int], *, chains: bool = False) -> tuple[Timeline, dict[int, Event]]:
        """A `Timeline` of commit `c` cut down to `occs`: it holds them, the first occurrence
        of each of their ids, their superseders, reconfirmers and supersession targets, with
        the edges between those. `status`, `confidence`, `superseder_at` and `to_dict` of
        the first occurrences then answer as the commit's full timeline does. With `chains`,
        superseders of superseders too (ranking follows chains: `rank._inherit_relevance`)."""
        a = self.a
        kind, src, dst = a["g_kind"], a["g_src"], a["g_dst"]
        by_src, by_dst = self._edge_maps()
        wanted = set(occs)
        firsts = set()
        for o in occs:
            dup = [k for k in self._active(by_src, o, c) if kind[k] == DUPLICATE]
            firsts.add(dst[dup[0]] if dup else o)
        wanted |= firsts
        links: set[tuple[int, int, int]] = set()
        todo = list(firsts)
        seen = set(firsts)
        while todo:
            o = todo.pop()
            for k in self._active(by_dst, o, c):
                if kind[k] == DUPLICATE:
                    continue
                links.add((kind[k], src[k], o))
                if chains and kind[k] == SUPERSEDES and src[k] not in seen:
                    seen.add(src[k])
                    todo.append(src[k])
            for k in self._active(by_src, o, c):
                if kind[k] == SUPERSEDES:
                    links.add((SUPERSEDES, o, dst[k]))
        for _, s, d in links:
            wanted.update((s, d))
        evs = self.events(sorted(wanted))
        sup = {evs[s].id: evs[d].id for k, s, d in links if k == SUPERSEDES}
        rec = [(evs[s].id, evs[d].id) for k, s, d in sorted(links) if k == RECONFIRMS]
        return Timeline(list(evs.values()), self.config, edges=(sup, rec), sourced_start=False), evs

    def answer(self, c: int, occs: list[int]) -> tuple[Timeline, list[Event]]:
        """The events of `occs` (live entries of commit `c`) and a timeline for `to_dict`."""
        timeline, evs = self.timeline_for(c, occs)
        return timeline, [evs[o] for o in occs]

    def present(self, c: int) -> dict[str, int]:
        """path -> vid of the files in commit number `c`."""
        return {self.keys[v][0]: v for v, since, until in zip(self.a["pv"], self.a["pf"], self.a["pt"], strict=True)
                if since <= c < until}

    def occurrence(self, vid: int, ev: Event) -> int:
        """The occurrence number of `ev`, an event of version `vid` as the loader gives it."""
        where = self._where.get(vid)
        if where is None:
            key = self.keys[vid]
            info = self.loader.infos.get(key, self.events_list(vid), self.loader.cache.spans.get(key))
            where = self._where[vid] = {id(e): self.a["base"][vid] + i for i, e in enumerate(info.events)}
        return where[id(ev)]

    def events_list(self, vid: int) -> list[Event]:
        key = self.keys[vid]
        return self.loader.events_of([key])[key]
