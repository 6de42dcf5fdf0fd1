"""Bring the index up to date with the files: for some paths, or for the whole vault.

Used by the watcher (after each debounced batch, at start and on its periodic light
reconcile) and by `wait_until_indexed`, so both follow the same rules:

- the light reconcile compares sizes and mtimes (plus a content hash for files modified
  in the last few seconds, whose mtime may not have moved within the clock's tick, and
  the hashes the scanner took of a slice of the other files: verify.py) against what the
  index recorded, and re-reads only what differs;
- a file whose new version fails to parse (error-level problems that lose entries it had)
  keeps its last good entries in the index; it is reported, and indexed again as soon
  as it parses. The index itself applies that rule (search/index/lastgood.py), so a
  search or `memvault index` run meanwhile does the same.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.entries.model import Problem
from memvault.errors import MemvaultError, UnsafePath
from memvault.layout import DEFAULT, Selection, problem_at, read_file, walk
from memvault.watch.paths import expand, is_watched_file

RACY_SECONDS = 3.0  # files modified this recently are hashed, not trusted by size+mtime


@dataclass(frozen=True)
class Stat:
    size: int
    mtime_ns: int
    sha256: str | None = None  # taken by the scanner for some files (verify.py)


@dataclass
class SyncResult:
    updated: list[str] = field(default_factory=list)  # paths handed to the index
    broken: dict[str, str] = field(default_factory=dict)  # path -> first error; last good kept
    report: Any = None  # the index's UpdateReport
    seconds: float = 0.0
    rebuilt: str | None = None  # why the index was rebuilt instead


# -- pure decisions ----------------------------------------------------------------------

def state_tuple(state: Any) -> tuple[int, int, str | None, int | None]:
    """(size, mtime_ns, sha256, events) from the index's per-file record, whatever its shape."""
    if isinstance(state, tuple | list):
        values = list(state) + [None] * 4
        return int(values[0]), int(values[1]), values[2], values[3]
    names = ("size", "mtime_ns", "sha256", "events")
    got: list[Any] = [state.get(k) for k in names] if isinstance(state, dict) else [getattr(state, k, None) for k in names]
    return int(got[0]), int(got[1]), got[2], got[3]


def differing(disk: Mapping[str, Stat], indexed: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(changed or new or gone, same size+mtime): the files the index must re-read, and the rest."""
    out = {p for p in indexed if p not in disk}
    same = set()
    for path, st in disk.items():
        old = indexed.get(path)
        if old is None:
            out.add(path)
            continue
        size, mtime_ns, _, _ = state_tuple(old)
        if (size, mtime_ns) != (st.size, st.mtime_ns):
            out.add(path)
        else:
            same.add(path)
    return out, same


# -- reading the disk ---------------------------------------------------------------------

def stat_file(root: Path, rel: str) -> Stat | None:
    """Size and mtime of the vault file `rel`, or None when it is gone or the layout rule
    (memvault/layout.py: no links, regular files only) keeps it out."""
    try:
        st = os.lstat(root / rel)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or problem_at(root, rel) is not None:
        return None
    return Stat(st.st_size, st.st_mtime_ns)


def disk_state(root: Path, folders: Iterable[str] | None = None,
               skipped: list[Problem] | None = None, selection: Selection = DEFAULT) -> dict[str, Stat]:
    """Size and mtime of every watched file (or of those under `folders`, given as "dir/"),
    by the same walk as the index (what the layout rule skips goes to `skipped`)."""
    wanted = sorted({f.rstrip("/") for f in folders}) if folders is not None else None
    return {rel: Stat(st.st_size, st.st_mtime_ns)
            for rel, st in walk(root, skipped, wanted, with_stat=True, selection=selection)
            if st is not None and is_watched_file(rel, selection)}


def sha256_of(root: Path, rel: str) -> str | None:
    try:
        return hashlib.sha256(read_file(root, rel)).hexdigest()
    except (OSError, UnsafePath):
        return None


def racy(root: Path, disk: Mapping[str, Stat], same: set[str], indexed: Mapping[str, Any],
         now_ns: int | None = None) -> set[str]:
    """Files whose size and mtime match but were written so recently that a second write in
    the same clock tick could hide behind them: compare their content hashes instead."""
    now_ns = now_ns if now_ns is not None else time.time_ns()
    limit = now_ns - int(RACY_SECONDS * 1e9)
    out = set()
    for rel in same:
        if disk[rel].mtime_ns >= limit:
            recorded = state_tuple(indexed[rel])[2]
            if recorded is None or sha256_of(root, rel) != recorded:
                out.add(rel)
    return out


# -- the sync itself ----------------------------------------------------------------------

def plan(root: Path, indexed: Mapping[str, Any], keys: set[str] | None,
         snapshot: Mapping[str, Stat] | None = None, selection: Selection = DEFAULT) -> tuple[set[str], set[str]]:
    """(files to re-read, files to settle): the files named (folders expanded), or, for a
    reconcile, every file that differs. "Settle" files differ only in the recorded mtime
    (the index records an impossible one for files written moments before it read them)
    while their content hash is unchanged: the index refreshes their record, and they are
    not news. A reconcile may start from a `snapshot` of the disk taken moments earlier by
    another thread; the files it shows as different are stat'ed again before they count."""
    if keys is None:
        disk = disk_state(root, selection=selection) if snapshot is None else snapshot
        changed, same = differing(disk, indexed)
        changed |= racy(root, disk, same, indexed)
        edited = hashed_otherwise(disk, same - changed, indexed)
        if snapshot is not None:
            disk = {p: st for p in changed | edited if (st := stat_file(root, p)) is not None}
            changed, same = differing(disk, {p: indexed[p] for p in changed | edited if p in indexed})
            changed |= racy(root, disk, same, indexed)
        return split_by_hash(root, disk, changed | (edited & disk.keys()), indexed)
    folders = [k for k in keys if k.endswith("/")]
    if not folders:
        return set(keys), set()
    on_disk = set(disk_state(root, folders, selection=selection))
    return expand(keys, on_disk, set(indexed)), set()


def hashed_otherwise(disk: Mapping[str, Stat], same: set[str], indexed: Mapping[str, Any]) -> set[str]:
    """Files whose size and mtime match but whose hash, taken by the scanner, does not."""
    out = set()
    for rel in same:
        digest, recorded = disk[rel].sha256, state_tuple(indexed[rel])[2]
        if digest is not None and recorded is not None and digest != recorded:
            out.add(rel)
    return out


def split_by_hash(root: Path, disk: Mapping[str, Stat], candidates: set[str],
                  indexed: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """Candidates whose size matches what the index recorded are hashed: same content means
    nothing to re-read."""
    changed, settle = set(), set()
    for rel in candidates:
        old = indexed.get(rel)
        st = disk.get(rel)
        if old is not None and st is not None:
            size, _, sha, _ = state_tuple(old)
            if size == st.size and sha is not None and sha256_of(root, rel) == sha:
                settle.add(rel)
                continue
        changed.add(rel)
    return changed, settle


def indexed_counts(index: Any, paths: Iterable[str] | None = None) -> dict[str, int] | None:
    """Entries the index holds per indexed file (all, or those of `paths` that are indexed),
    or None when the index cannot say (damaged, being replaced)."""
    try:
        return index.indexed_event_counts(None if paths is None else sorted(set(paths)))
    except (sqlite3.Error, OSError, MemvaultError):
        return None


def held_files(index: Any) -> dict[str, tuple[int, int, str]] | None:
    """The index's files failing to parse (path -> (entries kept, entries now, why)), or None
    when the index cannot say."""
    try:
        return index.held_files()
    except (sqlite3.Error, OSError, MemvaultError):
        return None


def sync(root: Path, config: Any, index: Any, keys: set[str] | None = None,
         snapshot: Mapping[str, Stat] | None = None) -> SyncResult:
    """Update `index` for `keys` (files, and folders as "dir/"), or reconcile the whole vault
    (from `snapshot`, when the disk was already scanned), over the files `[vault]
    include`/`exclude` in `config` select."""
    start = time.perf_counter()
    stale = getattr(index, "stale_reason", lambda: None)()
    if stale is not None:  # missing, damaged or built with other settings: rebuild from the files
        report = index.update(None)
        held = dict(getattr(report, "held", {}))  # the rebuild carried their last good entries over
        done = sorted({*report.added, *report.changed, *report.removed} - held.keys()) if report else []
        return SyncResult(updated=done, broken=held, report=report, seconds=time.perf_counter() - start,
                          rebuilt=stale)
    if keys is not None and not any(k.endswith("/") for k in keys):
        paths, settle = set(keys), set[str]()  # a few saved files: no need for the whole per-file table
    else:
        paths, settle = plan(root, index.indexed_files(), keys, snapshot, Selection.of(config))
    result = SyncResult()
    if paths or settle:
        report = index.update(sorted(paths | settle))
        result.report, result.broken = report, dict(report.held)
        result.updated = sorted(paths - report.held.keys())
        if getattr(report, "rebuilt", False):  # found damaged on the way: rebuilt from the files
            result.rebuilt = report.reason
    result.seconds = time.perf_counter() - start
    return result
