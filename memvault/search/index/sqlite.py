"""SQLite FTS5 backend (the default): the text table lives in the store's own database, so
an update of files, events, links and text is one transaction: a crash leaves the old index.
The FTS5 table is contentless: the events table already holds the text.

Terms arrive pre-analysed (`textproc`), space-separated; FTS5's `ascii` tokenizer splits them
exactly there (every character of a term is a letter or digit, a token character to it), so
its terms are ours. Its `bm25()` with per-column weights gives the relevance.

A sixth column, `every`, holds all five fields again, with weight 0. It lets a query plan
(`plan.plan_query`) select rows by some words and still score all of them:
`{every} : ("rare1" OR "rare2") AND ("rare1" OR "rare2" OR "common")` matches the rows of the
rare words; bm25() adds nothing for the `every` phrases (weight 0) and scores every query
word once, each row exactly as the plain OR query does (`every` doubles each row's length
and so the average: BM25 only sees their ratio). Scoring the 5,000 rows of the rare words
instead of the 80,000 of the common ones is what makes common words cheap. (A one-token
column would do the same, but bm25() counts the rows of every phrase in the expression for
its IDF, and a token in all rows costs ~1.5 ms per query on 100k rows.)
"""

from __future__ import annotations

import sqlite3

from memvault.search.index.engine import Doc
from memvault.search.plan import EXHAUSTIVE, Plan
from memvault.search.textproc import Query

COLUMNS = ("title", "body", "tags", "extra", "context")


def _quote(terms: tuple[str, ...]) -> str:
    return '"' + " ".join(terms).replace('"', '""') + '"'


def match_expression(q: Query, plan: Plan = EXHAUSTIVE) -> str:
    """FTS5 MATCH text: every term quoted (no syntax survives), phrases required, rest OR-ed;
    with a plan, only rows that hold its words (or a compound) in the `every` copy."""
    optional = [_quote((t,)) for t in q.terms] + [_quote(c) for c in q.compounds]
    if q.phrases:
        # a quoted phrase must be in the entry itself, not only in its neighbours' context
        own = "{" + " ".join(c for c in COLUMNS if c != "context") + "} : "
        required = [own + _quote(p) for p in q.phrases]
        return " AND ".join(required) + " AND (" + " OR ".join([_quote(p) for p in q.phrases] + optional) + ")"
    if plan.exhaustive:
        return " OR ".join(optional)
    chosen = [_quote((t,)) for t in plan.select]
    if plan.every and not q.compounds:
        # rows with all chosen words: they can be required as themselves (each is scored
        # once, at every row the AND visits); the rest only add to the score
        rest = [_quote((t,)) for t in q.terms if t not in plan.select]
        rows = " AND ".join(chosen)
        return rows if not rest else rows + " AND (" + " OR ".join(rest + ["{every} : " + chosen[0]]) + ")"
    select = " OR ".join(["(" + (" AND " if plan.every else " OR ").join(chosen) + ")"]
                         + [_quote(c) for c in q.compounds])
    return "{every} : (" + select + ") AND (" + " OR ".join(optional) + ")"


class SqliteEngine:
    name = "sqlite"
    atomic = True
    counts_terms = True

    def __init__(self, conn: sqlite3.Connection, weights: tuple[float, ...]):
        self.conn = conn
        self.weights = weights

    def create(self) -> None:
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5("
            "title, body, tags, extra, context, every, content = '', "
            "tokenize = 'ascii')"
        )

    def begin(self) -> None:  # the store's transaction covers us
        pass

    def add(self, docs: list[Doc]) -> None:
        self.conn.executemany(
            "INSERT INTO fts (rowid, title, body, tags, extra, context, every) VALUES (?,?,?,?,?,?,?)",
            [(rowid, *fields, " ".join(fields)) for rowid, fields in docs],
        )

    def delete(self, docs: list[Doc]) -> None:
        # contentless table (no second copy of the text): a row is removed by giving the
        # values it was added with, which the analyzer reproduces exactly
        self.conn.executemany(
            "INSERT INTO fts (fts, rowid, title, body, tags, extra, context, every) VALUES ('delete',?,?,?,?,?,?,?)",
            [(rowid, *fields, " ".join(fields)) for rowid, fields in docs],
        )

    def commit(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def search(self, query: Query, limit: int, plan: Plan = EXHAUSTIVE) -> list[tuple[int, float]]:
        expr = match_expression(query, plan)
        if not expr:
            return []
        w = ", ".join(f"{x:g}" for x in (*self.weights, 0))
        rows = self.conn.execute(
            f"SELECT rowid, bm25(fts, {w}) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?",
            (expr, limit),
        ).fetchall()
        return [(r, -s) for r, s in rows]  # FTS5's bm25 is negative: lower is better

    def term_counts(self) -> list[tuple[str, int]]:
        """(term, rows holding it) for every term, read from the FTS5 index in one pass."""
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, fts, 'row')")
        try:
            return self.conn.execute("SELECT term, doc FROM temp.fts_terms").fetchall()
        finally:
            self.conn.execute("DROP TABLE temp.fts_terms")

    def generation(self) -> str | None:
        return None  # one file with the store: always the same generation

    def size_bytes(self) -> int:
        return 0  # counted with the store's file

    def close(self) -> None:
        pass
