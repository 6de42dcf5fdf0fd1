"""Full rebuild: parse every file, write a new index beside the old one, rename it into place.

A file whose version on disk fails to parse and loses entries keeps the entries the old
index holds for it, carried over (the one rule, lastgood.py), unless the old index is damaged.

Readers keep the old index until the rename; a crash leaves the old index plus a temporary
file that the next writer removes (heal.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

from memvault import derived_db
from memvault.gcpause import no_gc
from memvault.layout import iter_markdown
from memvault.parsed import parser_fingerprint
from memvault.search.index import heal, links, store
from memvault.search.index.engine import Doc, Engine, Progress, UpdateReport
from memvault.search.index.files import file_docs, read_parsed, stored_stat
from memvault.search.index.lastgood import Previous, held_reason
from memvault.search.textproc import ANALYZER_VERSION

BATCH = 5000


class Index(Protocol):
    """What a rebuild needs of `core.Index` (a protocol, so this module need not import core,
    which imports it)."""

    vault: Any
    dir: Path
    backend: str
    db_path: Path

    def _make_engine(self, conn: sqlite3.Connection, directory: Path) -> Engine: ...
    def _fingerprint(self) -> str: ...


def build(index: Index, progress: Progress | None, note: str | None = None) -> UpdateReport:
    """Build the index anew; `note` (why, when the old one was damaged) is kept for status."""
    # 100k events are 100k long-lived objects: the cyclic GC would rescan them over and
    # over while they accumulate (about a tenth of the build's CPU); none of them form cycles.
    previous = Previous(index.db_path, trusted=note is None)  # note: the old index is damaged
    try:
        with no_gc():
            return _build(index, progress, note, previous)
    finally:
        previous.close()


def _build(index: Index, progress: Progress | None, note: str | None, previous: Previous) -> UpdateReport:
    vault = index.vault
    report = UpdateReport()
    paths = list(iter_markdown(vault.root, report.problems, selection=vault.selection))
    index.dir.mkdir(parents=True, exist_ok=True)
    derived_db.self_ignore(vault.derived)
    tmp_db = index.dir / f".{index.backend}.db.tmp{os.getpid()}"
    tmp_dir = index.dir / f".{index.backend}.tmp{os.getpid()}"
    heal.remove_leftovers(index.dir)
    conn = store.connect(tmp_db)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    store.create(conn)
    engine = index._make_engine(conn, tmp_dir)
    engine.create()
    try:
        conn.execute("BEGIN")
        engine.begin()
        all_events = []
        rows, docs = [], []
        counts: Counter[str] | None = None if engine.counts_terms else Counter()
        rowid = 1
        for n, rel in enumerate(paths, 1):
            got = read_parsed(vault, rel)
            if progress:
                progress(n, len(paths))
            if not isinstance(got, tuple):
                report.problems.append(got)
                continue
            state, events, problems = got
            report.problems += problems
            report.added.append(rel)
            stat = stored_stat(state)
            if (kept := previous.kept(rel, problems, events)) is not None:
                why = held_reason(problems, len(kept[1]))
                store.put_held(conn, rel, *stat, len(events), why)
                report.held[rel] = why
                stat, events, problems = kept
            numbered = list(enumerate(events, rowid))
            rows += [store.event_row(r, ev) for r, ev in numbered]
            docs += file_docs(numbered)
            all_events += numbered
            rowid += len(events)
            store.put_file(conn, rel, *stat, len(events), problems)
            if len(rows) >= BATCH:
                _flush(conn, engine, rows, docs, counts)
        _flush(conn, engine, rows, docs, counts)
        if counts is None:
            counts = Counter(dict(engine.term_counts() or ()))
            counts[store.DOCS_KEY] = len(all_events)
        store.put_terms(conn, counts.items())
        links.recompute_all(conn, all_events, vault.config)
        engine.commit()
        meta: dict[str, Any] = {
            "schema_version": store.SCHEMA_VERSION, "analyzer_version": ANALYZER_VERSION, "parser": parser_fingerprint(),
            "fingerprint": index._fingerprint(), "backend": index.backend, "state": "clean",
            "last_update": time.time(), "generation": engine.generation() or "", "next_rowid": rowid,
            "build_id": uuid.uuid4().hex,  # what the semantic vectors' rowids belong to (index/semantic.py)
        }
        if note:
            meta["healed"] = note
        store.set_meta(conn, **meta)
        conn.execute("COMMIT")
        report.events_indexed = len(all_events)
    except BaseException:
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        engine.abort()
        engine.close()
        conn.close()
        heal.remove_leftovers(index.dir)
        raise
    engine.close()
    conn.close()
    _fsync(tmp_db)
    _swap(index, tmp_db, tmp_dir)
    return report


def _flush(conn: sqlite3.Connection, engine: Engine, rows: list[tuple[Any, ...]], docs: list[Doc],
           counts: Counter[str] | None) -> None:
    store.insert_events(conn, rows)
    engine.add(docs)
    if counts is not None:
        counts.update(store.count_terms(docs))
    rows.clear()
    docs.clear()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _swap(index: Index, tmp_db: Path, tmp_dir: Path) -> None:
    """Put the new index in place: text directory first, the store last (it names the
    generation, so a crash in between is seen as a mismatch and rebuilt)."""
    if tmp_dir.exists():
        final = index.dir / index.backend
        trash = index.dir / f".{index.backend}.old{os.getpid()}"
        if final.exists() or final.is_symlink():
            os.replace(final, trash)
        os.replace(tmp_dir, final)
        if trash.is_dir() and not trash.is_symlink():
            shutil.rmtree(trash, ignore_errors=True)
        else:  # a file or link that stood where the text index belongs
            with contextlib.suppress(FileNotFoundError):
                trash.unlink()
    # A hot journal left by a crashed writer belongs to the old file; never let SQLite
    # apply it to the new one.
    for suffix in ("-journal", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{index.db_path}{suffix}")
    heal.clear_squatter(index.db_path)
    os.replace(tmp_db, index.db_path)
    with contextlib.suppress(OSError):
        dfd = os.open(index.dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

