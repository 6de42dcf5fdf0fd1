"""Recalling a memory counts: access counts and last-access times, kept as derived state.

A recall is an entry someone fetched (`memvault show`) or one of the first `[search]
record_top` hits of a search whose caller says it uses them (`search --record`, or `[search]
record = true`); a plain search records nothing, so searching never changes what later searches
find (docs/search.md, "Recalls"). Curate and ranking (recency counts from the last recall)
read the counts. This lives in `.memvault/access.sqlite`, never in the Markdown, and losing it
only forgets the counts: a damaged file is deleted and started anew (derived_db), never a
failing search.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memvault import derived_db
from memvault.config.core import Config
from memvault.fsio import DERIVED_DIR
from memvault.search.hits import Hit
from memvault.search.textproc import Query
from memvault.search.weights import SEARCH_DEFAULTS
from memvault.sqlutil import in_chunks

FILE = "access.sqlite"


@dataclass(frozen=True, slots=True)
class Access:
    count: int
    last_accessed: datetime


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS access (id TEXT PRIMARY KEY, count INTEGER NOT NULL, last REAL NOT NULL)"
    )


def _connect(root: Path) -> sqlite3.Connection:
    return derived_db.connect(Path(root) / DERIVED_DIR / FILE, _setup, what="the access counts", timeout=10)


def search_recalls(config: Config, query: Query, hits: list[Hit], record: bool | None = None) -> list[str]:
    """The ids a search counts as recalled: none unless `record` (None: `[search] record`);
    then the first `[search] record_top` hits that match the query themselves (not only
    through their neighbours), and none for a query without a content word (`the of and`)."""
    settings = config.section("search", SEARCH_DEFAULTS)
    if not (settings["record"] if record is None else record) or not query.content:
        return []
    return [h.id for h in hits[: settings["record_top"]] if h.matched]


def record(root: Path, ids: Iterable[str], at: datetime | None = None) -> None:
    """Count one access for each id, at `at` (now by default)."""
    stamp = (at or datetime.now(UTC)).timestamp()
    rows = [(i, stamp) for i in dict.fromkeys(ids)]
    if rows:
        _healing(root, _record, rows)


def raise_counts(root: Path, counts: Mapping[str, tuple[int, datetime]]) -> None:
    """Make each id's count at least `n`, last accessed at least at `at`: recalls counted
    elsewhere (an imported memory's `_access_count`), taken in without counting them twice
    when the same file is imported again."""
    rows = [(i, n, at.timestamp()) for i, (n, at) in counts.items() if n > 0]
    if rows:
        _healing(root, _raise, rows)


def _healing(root: Path, write: Callable[[Path, Any], None], rows: Any) -> None:
    """`write(root, rows)`; a damaged counts file is discarded (derived state) and written anew."""
    try:
        write(root, rows)
    except sqlite3.DatabaseError as exc:
        if not derived_db.is_damage(exc):
            raise
        derived_db.discard(Path(root) / DERIVED_DIR / FILE, str(exc), "the access counts")
        write(root, rows)


def _raise(root: Path, rows: list[tuple[str, int, float]]) -> None:
    conn = _connect(root)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO access (id, count, last) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "count = max(count, excluded.count), last = max(last, excluded.last)", rows)
    finally:
        conn.close()


def _record(root: Path, rows: list[tuple[str, float]]) -> None:
    conn = _connect(root)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO access (id, count, last) VALUES (?, 1, ?) "
                "ON CONFLICT(id) DO UPDATE SET count = count + 1, last = max(last, excluded.last)",
                rows,
            )
    finally:
        conn.close()


def stats(root: Path, ids: Iterable[str] | None = None) -> dict[str, Access]:
    """Access counts by id (all ids, or just `ids`)."""
    if not (Path(root) / DERIVED_DIR / FILE).exists():
        return {}
    try:
        rows = _rows(root, ids)
    except sqlite3.DatabaseError as exc:
        if not derived_db.is_damage(exc):
            raise
        derived_db.discard(Path(root) / DERIVED_DIR / FILE, str(exc), "the access counts")
        return {}
    return {i: Access(c, datetime.fromtimestamp(t, UTC)) for i, c, t in rows}


def recent(root: Path, n: int) -> list[str]:
    """The `n` ids recalled last, the latest first."""
    if not (Path(root) / DERIVED_DIR / FILE).exists():
        return []
    try:
        conn = _connect(root)
        try:
            return [i for (i,) in conn.execute("SELECT id FROM access ORDER BY last DESC LIMIT ?", (n,))]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if not derived_db.is_damage(exc):
            raise
        derived_db.discard(Path(root) / DERIVED_DIR / FILE, str(exc), "the access counts")
        return []


def _rows(root: Path, ids: Iterable[str] | None) -> list[tuple[str, int, float]]:
    conn = _connect(root)
    try:
        if ids is None:
            return conn.execute("SELECT id, count, last FROM access").fetchall()
        wanted = list(dict.fromkeys(ids))
        rows = []
        for chunk, marks in in_chunks(wanted):
            rows += conn.execute(f"SELECT id, count, last FROM access WHERE id IN ({marks})", chunk).fetchall()
        return rows
    finally:
        conn.close()

