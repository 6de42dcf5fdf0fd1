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

Everything here is derived: deleting it costs one sweep (seconds; see performance.md). When
HEAD moves on along the same first-parent chain the sweep resumes from the last commit it
covered instead of starting over.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import sqlite3
import sys
from array import array
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Config
from .events import Timeline
from .gitrepo import Commit, CommitList, GitRepo
from .model import Event
from .recorded import VersionTable, no_gc
from .recorded_sweep import DUPLICATE, RECONFIRMS, SUPERSEDES, Occurrences, Sweep, micros

if TYPE_CHECKING:
    from .snapshot import SnapshotLoader

FORMAT = 1
INF = float("inf")
# code the stored answers depend on (the parser's own fingerprint covers parse.py/model.py)
SOURCES = ("events.py", "spans.py", "recorded.py", "recorded_sweep.py", "recorded_index.py")
# name -> array typecode of every stored column
COLUMNS = {
    "tsus": "q", "line": "l", "s": "d", "e": "d",  # per occurrence
    "base": "q", "count": "l", "curated": "b", "mins": "d", "maxs": "d", "mine": "d",  # per version
    "pv": "l", "pf": "l", "pt": "l",  # presence runs, sorted by the version's first entry
    "o_occ": "q", "o_from": "l", "o_to": "l", "o_s": "d", "o_e": "d",  # override runs by o_from
    "g_kind": "b", "g_src": "q", "g_dst": "q", "g_from": "l", "g_to": "l",  # edge runs
}  # fmt: skip


class StaleIndex(Exception):
    """The stored columns do not match the parse cache any more (caller rebuilds)."""


def index_fingerprint(parse_fingerprint: str) -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha1(f"{FORMAT} {parse_fingerprint} {sys.byteorder}".encode())
    for name in SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()


class Columns:
    """The stored form: a JSON header plus typed arrays."""

    def __init__(self, meta: dict[str, Any], arrays: dict[str, array]):
        self.meta = meta
        self.a = arrays

    @classmethod
    def load(cls, db: sqlite3.Connection, fingerprint: str) -> Columns | None:
        rows = dict(db.execute("SELECT name, data FROM recorded"))
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
        return cls(meta, arrays)

    def save(self, db: sqlite3.Connection) -> None:
        rows = [("meta", json.dumps(self.meta, separators=(",", ":")).encode())]
        rows += [(name, self.a[name].tobytes()) for name in COLUMNS]
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
            if first[0] > tus:  # type: ignore[index]  # sorted by first entry: the rest is after T
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
        return Timeline(list(evs.values()), self.config, edges=(sup, rec)), evs

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


class RecordedStore:
    """Loads the index for HEAD's first-parent chain, or builds / extends it."""

    def __init__(self, loader: SnapshotLoader, repo: GitRepo, config: Config):
        self.loader = loader
        self.repo = repo
        self.config = config
        self.built_in: float | None = None  # seconds spent sweeping in this process
        self.resumed = False  # the sweep went on from a stored index instead of starting over

    def _db(self) -> sqlite3.Connection | None:
        db = self.loader.cache.connection()
        if db is None:
            return None
        db.execute("CREATE TABLE IF NOT EXISTS recorded (name TEXT PRIMARY KEY, data BLOB)")
        return db

    def open(self) -> RecordedIndex | None:
        """The index for HEAD (priming the repository's commit list from it), or None when
        history cannot be swept (HEAD moved while reading it)."""
        import time

        head = self.repo.head()
        if head is None:
            return None
        db = self._db()
        mark = index_fingerprint(self.loader.cache.fingerprint())
        cols = None
        try:
            cols = Columns.load(db, mark) if db is not None else None
        except (sqlite3.Error, ValueError):
            cols = None
        if cols is not None and cols.meta["head"] == head:
            if self.repo._commits is None:
                self.repo._commits = CommitList(cols.commits, shallow=self.repo.shallow)
            return RecordedIndex(cols, self.loader, self.config)
        start = time.perf_counter()
        with no_gc():
            cols = self.build(mark, cols)
        self.built_in = time.perf_counter() - start
        if cols is None:
            return None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):  # a read-only cache costs a sweep next time
                cols.save(db)
        return RecordedIndex(cols, self.loader, self.config)

    def build(self, mark: str, old: Columns | None) -> Columns | None:
        commits = self.repo.commits()
        table = VersionTable(self.repo, commits)
        if not table.complete or not commits.commits:
            return None
        resume = old is not None and _extends(old, commits)
        occ = Occurrences()
        keys = [tuple(k) for k in old.meta["versions"]] if resume else []  # type: ignore[union-attr]
        known = set(keys)
        for path, (_, blobs) in table.history.items():
            for blob in blobs:
                if blob is not None and (path, blob) not in known:
                    known.add((path, blob))
                    keys.append((path, blob))
        parsed = self.loader.events_of(keys)  # type: ignore[arg-type]
        spans = self.loader.cache.spans
        for key in keys:
            occ.add(key, self.loader.infos.get(key, parsed[key], spans.get(key)))  # type: ignore[arg-type]
        changes: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
        for path, (starts, blobs) in table.history.items():
            for start, blob in zip(starts, blobs, strict=True):
                changes[start].append((path, None if blob is None else occ.vids[(path, blob)]))
        sweep = Sweep(occ, self.config)
        first = 0
        if resume:
            first = len(old.meta["commits"])  # type: ignore[union-attr]
            sweep.step(first - 1, [(p, occ.vids[(p, b)]) for p, b in table.tree(first - 1).items()])
            if not _reopen(sweep, old, first):  # type: ignore[arg-type]
                return self.build(mark, None)
            self.resumed = True
        for i in range(first, len(commits)):
            if i in changes:
                sweep.step(i, changes[i])
        sweep.finish(len(commits))
        return _columns(mark, commits, table.history, occ, sweep, old if resume else None)


def _extends(old: Columns, commits: CommitList) -> bool:
    """Is the stored chain a prefix of the current one (HEAD moved on, nothing rewritten)?"""
    stored = old.meta["commits"]
    if not stored or len(stored) > len(commits):
        return False
    return all(c.sha == s[0] for c, s in zip(commits.commits, stored, strict=False))


def _reopen(sweep: Sweep, old: Columns, end: int) -> bool:
    """Continue the stored runs that were open at the stored HEAD (number end - 1): the
    sweep's state there must be exactly what was stored (else the caller starts over)."""
    a = old.a
    ovr = {o: ((s, e), f) for o, f, t, s, e in zip(a["o_occ"], a["o_from"], a["o_to"], a["o_s"], a["o_e"], strict=True)
           if t == end}
    edges = {(k, s, d): f for k, s, d, f, t in zip(a["g_kind"], a["g_src"], a["g_dst"], a["g_from"], a["g_to"], strict=True)
             if t == end}
    if {o: v[0] for o, v in ovr.items()} != {o: v[0] for o, v in sweep.ovr_open.items()}:
        return False
    if set(edges) != set(sweep.edge_open):
        return False
    for o, (span, since) in ovr.items():
        sweep.ovr_open[o] = (span, since)
    sweep.edge_open.update(edges)
    return True


def _columns(mark: str, commits: CommitList, history: dict[str, tuple[list[int], list[str | None]]],
             occ: Occurrences, sweep: Sweep, old: Columns | None) -> Columns:
    a = {name: array(code) for name, code in COLUMNS.items()}
    end = len(commits)
    for info in occ.infos:
        for _, s, e in info.rows:
            a["s"].append(s)
            a["e"].append(e)
    for key, line in zip(occ.okey, occ.events, strict=True):
        a["tsus"].append(key[0])
        a["line"].append(line.line)
    for vid, info in enumerate(occ.infos):
        a["base"].append(occ.base[vid])
        a["count"].append(len(info.events))
        a["curated"].append(1 if info.curated else 0)
        starts = [r[1] for r in info.rows]
        a["mins"].append(min(starts, default=INF))
        a["maxs"].append(max(starts, default=-INF))
        a["mine"].append(min((r[2] for r in info.rows), default=INF))
    runs = []
    for path, (starts, blobs) in history.items():
        for k, (start, blob) in enumerate(zip(starts, blobs, strict=True)):
            if blob is None:
                continue
            vid = occ.vids[(path, blob)]
            if len(occ.infos[vid].events):
                until = starts[k + 1] if k + 1 < len(starts) else end
                runs.append((occ.okey[occ.base[vid]], vid, start, until))
    runs.sort()
    for _, vid, since, until in runs:
        a["pv"].append(vid)
        a["pf"].append(since)
        a["pt"].append(until)
    ovr = list(sweep.ovr_rows)
    edges = list(sweep.edge_rows)
    if old is not None:  # the runs closed before the stored HEAD stay as they were
        o = old.a
        n = len(old.meta["commits"])
        ovr += [r for r in zip(o["o_occ"], o["o_from"], o["o_to"], o["o_s"], o["o_e"], strict=True) if r[2] != n]
        edges += [r for r in zip(o["g_kind"], o["g_src"], o["g_dst"], o["g_from"], o["g_to"], strict=True) if r[4] != n]
    ovr.sort(key=lambda r: (r[1], r[0], r[2]))
    for row in ovr:
        for name, value in zip(("o_occ", "o_from", "o_to", "o_s", "o_e"), row, strict=True):
            a[name].append(value)
    edges.sort(key=lambda r: (r[3], r[1], r[2], r[0], r[4]))
    for row in edges:
        for name, value in zip(("g_kind", "g_src", "g_dst", "g_from", "g_to"), row, strict=True):
            a[name].append(value)
    meta = {
        "format": FORMAT, "fingerprint": mark, "head": commits.commits[-1].sha,
        "versions": [list(k) for k in occ.keys], "commits": [[c.sha, c.time] for c in commits.commits],
    }
    return Columns(meta, a)
