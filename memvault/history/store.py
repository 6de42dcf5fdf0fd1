"""Building recorded time's index (recorded_index.py) and keeping it up to date.

`RecordedStore.open()` gives the index for HEAD's first-parent chain:

- stored for this HEAD (and this code, parser and settings): loaded, a few ms;
- stored for an earlier HEAD of the same chain (new commits since): the sweep resumes from
  the state it stored then — the files present, each reference's resolution with what it
  read, the date and block tables, the open runs — reading only the files the new commits
  touched, and entries of other files only when a resolution or an override needs them;
- otherwise (no index, history rewritten, code or settings changed): one sweep of the whole
  history, reading every version once (the parse cache spares re-parsing).

The store is derived: deleting `.memvault/` loses nothing but the time of a sweep.
"""

from __future__ import annotations

import bisect
import sqlite3
import sys
import time
from array import array
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from memvault.config.core import Config
from memvault.derived_db import source_fingerprint
from memvault.entries.model import Event
from memvault.gcpause import no_gc
from memvault.history.gitrepo import CommitList, GitRepo
from memvault.history.live_columns import COLUMNS, Columns, RecordedIndex
from memvault.history.sweep import Occurrences, OrderKey, Sweep, order_key
from memvault.history.timelines import VersionInfo, VersionTable

if TYPE_CHECKING:
    from memvault.history.snapshot import SnapshotLoader

FORMAT = 2  # 2: the sweep's state is stored for resuming
INF = float("inf")
# code the stored answers depend on (the parser's own fingerprint covers parse.py/model.py)
SOURCES = ("memvault.entries.timeline", "memvault.entries.spans", "memvault.history.timelines",
           "memvault.history.sweep", "memvault.history.live_columns", "memvault.history.store")
History = dict[str, tuple[list[int], list[str | None]]]


def index_fingerprint(parse_fingerprint: str) -> str:
    return source_fingerprint(f"{FORMAT} {parse_fingerprint} {sys.byteorder}", *SOURCES)


class _Indexed:
    """A read-only sequence computed on demand."""

    __slots__ = ("get",)

    def __init__(self, get: Any):
        self.get = get

    def __getitem__(self, i: int) -> Any:
        return self.get(i)


class StoredOccurrences(Occurrences):
    """The numbering of a stored index: ids and order keys from its columns, entries read
    from the parse cache only for the versions the sweep touches."""

    def __init__(self, cols: Columns, info_of: Any):
        a = cols.a
        self.keys = [(p, b) for p, b in cols.meta["versions"]]
        self.vids = {key: vid for vid, key in enumerate(self.keys)}
        self.base = list(a["base"])
        self.count = list(a["count"])
        self.ids = list(cols.extra["ids"])
        self.tsus, self.line = array("q", a["tsus"]), array("i", a["line"])
        self._info_of = info_of
        self._infos: dict[int, VersionInfo] = {}
        self.infos = _Indexed(self._info)
        self.events = _Indexed(self._event)
        self.okey = _Indexed(self._okey)

    def add(self, key: tuple[str, str], info: VersionInfo) -> int:
        vid = self.vids.get(key)
        if vid is None:
            vid = self.vids[key] = len(self.keys)
            self.keys.append(key)
            self.base.append(len(self.ids))
            self.count.append(len(info.events))
            for ev in info.events:
                self.tsus.append(_key(ev)[0])
                self.line.append(ev.line)
                self.ids.append(ev.id)
            self._infos[vid] = info
        return vid

    def _info(self, vid: int) -> VersionInfo:
        info = self._infos.get(vid)
        if info is None:
            info = self._infos[vid] = self._info_of(self.keys[vid])
            if len(info.events) != self.count[vid]:
                raise _Stale(f"{self.keys[vid][0]} no longer parses as it did")
        return info

    def _vid(self, o: int) -> int:
        return bisect.bisect_right(self.base, o) - 1

    def _event(self, o: int) -> Event:
        vid = self._vid(o)
        return self._info(vid).events[o - self.base[vid]]

    def _okey(self, o: int) -> OrderKey:
        return (self.tsus[o], self.keys[self._vid(o)][0], self.line[o])


class _Stale(Exception):
    pass


def _key(ev: Event) -> OrderKey:
    return order_key(ev)


class RecordedStore:
    """Loads the index for HEAD's first-parent chain, or builds / extends it."""

    def __init__(self, loader: SnapshotLoader, repo: GitRepo, config: Config):
        self.loader = loader
        self.repo = repo
        self.config = config
        self.built_in: float | None = None  # seconds spent sweeping in this process
        self.resumed = False  # the sweep went on from a stored index instead of starting over

    def _db(self) -> sqlite3.Connection | None:
        for _ in range(2):  # a damaged cache is deleted and created anew once (ParseCache.heal)
            db = self.loader.cache.connection()
            if db is None:
                return None
            try:
                db.execute("CREATE TABLE IF NOT EXISTS recorded (name TEXT PRIMARY KEY, data BLOB)")
                return db
            except sqlite3.Error as exc:
                if not self.loader.cache.heal(exc):
                    return None
        return None

    def open(self) -> RecordedIndex | None:
        """The index for HEAD (priming the repository's commit list from it), or None when
        there is no commit, `.memvault/` cannot be written, or history cannot be swept (HEAD
        moved while reading it): recorded time then builds the commit's state as before."""
        head = self.repo.head()
        if head is None:
            return None
        db = self._db()
        if db is None:  # nowhere to keep it: a sweep per process would cost more than it saves
            return None
        mark = index_fingerprint(self.loader.cache.fingerprint())
        cols = self._load(db, mark)
        if cols is not None and cols.meta["head"] == head:
            if self.repo._commits is None:
                self.repo._commits = CommitList(cols.commits, shallow=self.repo.shallow)
            return RecordedIndex(cols, self.loader, self.config)
        if cols is not None:  # an earlier HEAD: what resuming needs too
            cols = self._load(db, mark, extra=("ids", "state"))
        start = time.perf_counter()
        with no_gc():
            cols = self.build(cols)
        self.built_in = time.perf_counter() - start
        if cols is None:
            return None
        cols.meta["fingerprint"] = mark
        db = self._db()  # anew: reading may have found the file damaged and replaced it
        if db is not None:
            try:
                cols.save(db)
            except sqlite3.Error as exc:  # a cache that cannot be written costs a sweep next time
                self.loader.cache.heal(exc)
        return RecordedIndex(cols, self.loader, self.config)

    def _load(self, db: sqlite3.Connection, mark: str, extra: tuple[str, ...] = ()) -> Columns | None:
        try:
            return Columns.load(db, mark, extra=extra)
        except sqlite3.Error as exc:
            self.loader.cache.heal(exc)  # damaged: deleted, and swept again from git
            return None
        except ValueError:
            return None

    def _info(self, key: tuple[str, str], events: list[Event] | None = None) -> VersionInfo:
        if events is None:
            events = self.loader.events_of([key])[key]
        return self.loader.infos.get(key, events, self.loader.cache.spans.get(key))

    def build(self, old: Columns | None) -> Columns | None:
        commits = self.repo.commits()
        table = VersionTable(self.repo, commits)
        if not table.complete or not commits.commits:
            return None
        if old is not None and "state" in old.extra and _extends(old, commits):
            try:
                cols = self._sweep(commits, table, old)
                self.resumed = True
                return cols
            except _Stale:
                pass  # a stored version parses differently now: start over
        return self._sweep(commits, table, None)

    def _sweep(self, commits: CommitList, table: VersionTable, old: Columns | None) -> Columns:
        occ: Occurrences = StoredOccurrences(old, self._info) if old is not None else Occurrences()
        new = [(path, blob) for path, (_, blobs) in table.history.items() for blob in blobs
               if blob is not None and (path, blob) not in occ.vids]
        parsed = self.loader.events_of(list(dict.fromkeys(new)))
        for key in dict.fromkeys(new):
            occ.add(key, self._info(key, parsed[key]))
        changes: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
        for path, (starts, blobs) in table.history.items():
            for start, blob in zip(starts, blobs, strict=True):
                changes[start].append((path, None if blob is None else occ.vids[(path, blob)]))
        sweep = Sweep(occ, self.config)
        first = 0
        if old is not None:
            first = len(old.meta["commits"])
            present = {p: occ.vids[(p, b)] for p, b in table.tree(first - 1).items()}
            sweep.restore(old.extra["state"], present, *_open_runs(old, first))
        for i in range(first, len(commits)):
            if i in changes:
                sweep.step(i, changes[i])
        sweep.finish(len(commits))
        return _columns(commits, table.history, occ, sweep, old)


def _extends(old: Columns, commits: CommitList) -> bool:
    """Is the stored chain a prefix of the current one (HEAD moved on, nothing rewritten)?"""
    stored = old.meta["commits"]
    if not stored or len(stored) > len(commits):
        return False
    return all(c.sha == s[0] for c, s in zip(commits.commits, stored, strict=False))


def _open_runs(old: Columns, end: int) -> tuple[dict[int, tuple[tuple[float, float], int]], dict[tuple[int, int, int], int]]:
    """The runs still open at the stored HEAD (stored as ending at `end`)."""
    a = old.a
    ovr = {o: ((s, e), f) for o, f, t, s, e in zip(a["o_occ"], a["o_from"], a["o_to"], a["o_s"], a["o_e"], strict=True)
           if t == end}
    edges = {(k, s, d): f for k, s, d, f, t in zip(a["g_kind"], a["g_src"], a["g_dst"], a["g_from"], a["g_to"], strict=True)
             if t == end}
    return ovr, edges


def _columns(commits: CommitList, history: History, occ: Occurrences, sweep: Sweep, old: Columns | None) -> Columns:
    """The stored form: the old columns for the versions they cover, new versions appended."""
    a: dict[str, array[Any]] = {name: array(code) for name, code in COLUMNS.items()}  # int or float by code
    first = 0
    if old is not None:
        for name in ("tsus", "line", "s", "e", "base", "count", "curated", "mins", "maxs", "mine"):
            a[name] = array(COLUMNS[name], old.a[name])
        first = len(old.meta["versions"])
    for vid in range(first, len(occ.keys)):
        info = occ.infos[vid]
        a["base"].append(occ.base[vid])
        a["count"].append(len(info.events))
        a["curated"].append(1 if info.curated else 0)
        for ev, s, e in info.rows:
            a["s"].append(s)
            a["e"].append(e)
            a["tsus"].append(_key(ev)[0])
            a["line"].append(ev.line)
        starts = [r[1] for r in info.rows]
        a["mins"].append(min(starts, default=INF))
        a["maxs"].append(max(starts, default=-INF))
        a["mine"].append(min((r[2] for r in info.rows), default=INF))
    end = len(commits)
    runs = []
    for path, (starts, blobs) in history.items():
        for k, (start, blob) in enumerate(zip(starts, blobs, strict=True)):
            version = occ.vids[(path, blob)] if blob is not None else None
            if version is not None and a["count"][version]:
                b = a["base"][version]
                runs.append(((a["tsus"][b], path, a["line"][b]), version, start,
                             starts[k + 1] if k + 1 < len(starts) else end))
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
    meta = {"head": commits.commits[-1].sha, "versions": [list(k) for k in occ.keys],
            "commits": [[c.sha, c.time] for c in commits.commits]}
    return Columns(meta, a, {"ids": occ.ids, "state": sweep.state()})
