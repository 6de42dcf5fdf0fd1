"""SQLite FTS5 backend (the default): the text table lives in the store's own database, so
an update of files, events, links and text is one transaction: a crash leaves the old index.
The FTS5 table is contentless: the events table already holds the text.

Terms arrive pre-analysed (`textproc`), so FTS5 only splits on spaces; its `bm25()` with
per-column weights gives the relevance.
"""

from __future__ import annotations

import sqlite3

from ..textproc import Query
from .engine import Doc

COLUMNS = ("title", "body", "tags", "extra", "context")


def match_expression(q: Query) -> str:
    """FTS5 MATCH text: every term quoted (no syntax survives), phrases required, rest OR-ed."""

    def quote(terms: tuple[str, ...]) -> str:
        return '"' + " ".join(terms).replace('"', '""') + '"'

    optional = [quote((t,)) for t in q.terms] + [quote(c) for c in q.compounds]
    if not q.phrases:
        return " OR ".join(optional)
    # a quoted phrase must be in the entry itself, not only in its neighbours' context
    own = "{" + " ".join(c for c in COLUMNS if c != "context") + "} : "
    required = [own + quote(p) for p in q.phrases]
    return " AND ".join(required) + " AND (" + " OR ".join([quote(p) for p in q.phrases] + optional) + ")"


class SqliteEngine:
    name = "sqlite"
    atomic = True

    def __init__(self, conn: sqlite3.Connection, weights: tuple[float, ...]):
        self.conn = conn
        self.weights = weights

    def create(self) -> None:
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5("
            "title, body, tags, extra, context, content = '', "
            "tokenize = 'unicode61 remove_diacritics 0')"
        )

    def begin(self) -> None:  # the store's transaction covers us
        pass

    def add(self, docs: list[Doc]) -> None:
        self.conn.executemany(
            "INSERT INTO fts (rowid, title, body, tags, extra, context) VALUES (?,?,?,?,?,?)",
            [(rowid, *fields) for rowid, fields in docs],
        )

    def delete(self, docs: list[Doc]) -> None:
        # contentless table (no second copy of the text): a row is removed by giving the
        # values it was added with, which the analyzer reproduces exactly
        self.conn.executemany(
            "INSERT INTO fts (fts, rowid, title, body, tags, extra, context) VALUES ('delete',?,?,?,?,?,?)",
            [(rowid, *fields) for rowid, fields in docs],
        )

    def commit(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def search(self, query: Query, limit: int) -> list[tuple[int, float]]:
        expr = match_expression(query)
        if not expr:
            return []
        w = ", ".join(f"{x:g}" for x in self.weights)
        rows = self.conn.execute(
            f"SELECT rowid, bm25(fts, {w}) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?",
            (expr, limit),
        ).fetchall()
        return [(r, -s) for r, s in rows]  # FTS5's bm25 is negative: lower is better

    def generation(self) -> str | None:
        return None  # one file with the store: always the same generation

    def size_bytes(self) -> int:
        return 0  # counted with the store's file

    def close(self) -> None:
        pass
