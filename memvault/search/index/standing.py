"""Entries ranked without a query: MEMORY.md's bullets, and the most important and recent entries.

`memvault context` (docs/context.md) loads these into an agent's prompt. They are ranked by
search's own score with every candidate counted as fully relevant (relevance 1), so what is
left is importance, recency (from the last recall) and confidence; status is search's too
(superseded, expired and forgotten entries are no hits). Only a bounded pool of rows is
decoded: the newest entries and the most important ones, picked from the store's columns.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from memvault.entries.model import NOTE
from memvault.forgotten import Stored
from memvault.layout import MEMORY_FILE
from memvault.search import access
from memvault.search.hits import Hit
from memvault.search.index import links, store
from memvault.search.index.core import Index
from memvault.search.index.entry import source_scopes
from memvault.search.index.forgetting import index_forgotten
from memvault.search.index.query import Ranker
from memvault.search.rank import Filter
from memvault.search.textproc import parse_query
from memvault.sqlutil import in_chunks

POOL = 200  # rows of each ordering (newest, most important) the ranking looks at


def rank_bullets(index: Index, at: datetime, keep: Filter | None = None) -> list[Hit]:
    """MEMORY.md's live bullets (its prose notes are none), ranked, with the entries their sources
    cite in the ranking's timeline, so a bullet whose every source is superseded says so
    (`Hit.sources_superseded_by`). A source no stored place narrows down is not loaded (it counts
    as live, as in search)."""
    index.ensure()
    conn, _ = index.reader()
    bullets = [(r, e) for r, e in store.load_events(conn, "file = ? AND kind = 'curated'", (MEMORY_FILE,))
               if e.type != NOTE]
    scopes: set[str] = set().union(*(source_scopes(e) for _, e in bullets if e.sources)) - {"all"}
    rows = [r for r, _ in bullets]
    cited = [r for r in links.scope_pool(conn, scopes) if r not in set(rows)] if scopes else []
    return [h for h in rank_rows(index, rows + cited, at, keep) if h.kind == "curated"]


def standing_rows(index: Index, pool: int = POOL) -> list[int]:
    """The log entries a ranking without a query can put first: the `pool` newest, the `pool`
    newest of those marked more important than the default (`Importance:`), and the `pool`
    recalled last (recency counts from the last recall). Each is read through an index (the
    timestamp's, the access record's), so this costs milliseconds on 100k entries."""
    index.ensure()
    conn, _ = index.reader()
    newest = conn.execute("SELECT rowid FROM events WHERE kind = 'log' ORDER BY ts DESC LIMIT ?", (pool,)).fetchall()
    weighty = conn.execute("SELECT rowid FROM events INDEXED BY events_ts WHERE kind = 'log' AND importance > ? "
                           "ORDER BY ts DESC LIMIT ?", (index.weights.importance_default, pool)).fetchall()
    recalled = access.recent(index.vault.root, pool)
    rows = newest + weighty
    for chunk, marks in in_chunks(recalled):
        rows += conn.execute(f"SELECT rowid FROM events WHERE kind = 'log' AND id IN ({marks})", chunk).fetchall()
    return list(dict.fromkeys(r for (r,) in rows))


def rank_rows(index: Index, rowids: list[int], at: datetime, keep: Filter | None = None,
              limit: int | None = None) -> list[Hit]:
    """The live ones of `rowids` (that pass `keep`), ranked as search ranks with relevance 1."""
    if not rowids:
        return []
    index.ensure()
    conn, _ = index.reader()
    with contextlib.closing(Stored(index.vault.root)) as forgotten:
        ranker = Ranker(conn, index.weights, index.vault.root, index.vault.config,
                        index_forgotten(conn, forgotten, index.vault.config) if forgotten else None)
        return ranker.rank([(r, 1.0) for r in rowids], parse_query(""), at, keep or (lambda _ev: True),
                           False, limit or len(rowids))
