"""The index's own SQLite database: what was indexed, per file and per event.

Both backends keep this store; they differ only in the full-text engine beside it (FTS5 in
the same database, or a whoosh directory). Tables:

- `meta`: schema version, analyzer version, config fingerprint, backend, state, last update.
- `files`: per vault file its size, mtime_ns, sha256, event count and problems (JSON).
- `held`: the files whose newest version fails to parse and would lose entries
  (`lastgood.py`): the version seen (size, mtime_ns, sha256), the entries it holds, and why.
  Their `files` row and entries stay those of the last good version.
- `events`: one row per event; `rowid` is the document number in the text engine, `data` the
  event as JSON (so hits are built without re-reading Markdown), plus columns to filter on
  and the few a search needs to bound a candidate's score without decoding it (`Head`).
- `refs`, `ref_scopes`: each `Supersedes:`/`Reconfirms:` reference, what it resolved to, and
  which ids/days/blocks its resolution depends on (see `links.py`).
- `terms`: per index term, how many events hold it in any text field (its document frequency),
  and under the empty term the number of events. Search plans a query with it (which words are
  rare enough to select the rows BM25 scores, see `plan.plan_query`); it is kept exact by
  every update.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from memvault.entries.model import NOTE, Event, Problem
from memvault.sqlutil import in_chunks

SCHEMA_VERSION = 6

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL, events INTEGER NOT NULL, problems TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS held (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL, events INTEGER NOT NULL, reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL,
    day TEXT, type TEXT NOT NULL, ts REAL, tags TEXT NOT NULL, blocks TEXT NOT NULL,
    data TEXT NOT NULL, kind TEXT NOT NULL, importance REAL, confidence0 REAL NOT NULL, updated REAL
);
CREATE INDEX IF NOT EXISTS events_id ON events(id);
CREATE INDEX IF NOT EXISTS events_file ON events(file);
CREATE INDEX IF NOT EXISTS events_day ON events(day);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts);  -- the entries since a forgetting (search/index/forgetting.py)
CREATE TABLE IF NOT EXISTS refs (
    src_rowid INTEGER NOT NULL, src TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL,
    target TEXT, problem TEXT
);
CREATE INDEX IF NOT EXISTS refs_src ON refs(src_rowid);
CREATE INDEX IF NOT EXISTS refs_target ON refs(target);
CREATE INDEX IF NOT EXISTS refs_by_src ON refs(src);
CREATE INDEX IF NOT EXISTS refs_problem ON refs(problem);
CREATE TABLE IF NOT EXISTS ref_scopes (scope TEXT NOT NULL, src_rowid INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS ref_scopes_scope ON ref_scopes(scope);
CREATE INDEX IF NOT EXISTS ref_scopes_src ON ref_scopes(src_rowid);
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
"""

DATETIME_FIELDS = ("timestamp", "expires", "updated", "forgotten")
TUPLE_FIELDS = ("tags", "links", "block_ids", "reconfirms", "sources", "path")


def connect(path: Path) -> sqlite3.Connection:
    """Open the store. Rollback journal (not WAL) so a finished rebuild can replace the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def create(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)


def get_meta(conn: sqlite3.Connection) -> dict[str, str]:
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError:
        return {}


def set_meta(conn: sqlite3.Connection, **values: Any) -> None:
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [(k, str(v)) for k, v in values.items()],
    )


# ------------------------------------------------------------------------------ events


def _defaults() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Event):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


DEFAULTS = _defaults()
NAMES = tuple(f.name for f in dataclasses.fields(Event))


def event_to_json(ev: Event) -> str:
    """The event as compact JSON: fields at their default value are left out."""
    d: dict[str, Any] = {}
    for name in NAMES:
        value = getattr(ev, name)
        if name in DEFAULTS and value == DEFAULTS[name]:
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        d[name] = value
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def event_from_json(text: str) -> Event:
    d = json.loads(text)
    for name in DATETIME_FIELDS:
        if d.get(name) is not None:
            d[name] = datetime.fromisoformat(d[name])
    for name in TUPLE_FIELDS:
        if name in d:
            d[name] = tuple(d[name])
    return Event(**d)


def event_day(ev: Event) -> str | None:
    """The key `EventIndex.by_date` files an event under (log entries only)."""
    if ev.kind == "log" and ev.timestamp is not None:
        return ev.file.rsplit("/", 1)[-1][:10]
    return None


def bars(items: tuple[str, ...]) -> str:
    """`|a|b|` so `LIKE '%|a|%'` finds one item exactly."""
    return "|" + "|".join(items) + "|" if items else ""


def _epoch(when: datetime | None) -> float | None:
    return when.timestamp() if when is not None else None


def event_row(rowid: int, ev: Event) -> tuple[Any, ...]:
    return (
        rowid, ev.id, ev.file, ev.line, event_day(ev), ev.type, _epoch(ev.timestamp), bars(ev.tags),
        bars(ev.block_ids), event_to_json(ev), ev.kind, ev.importance, ev.confidence0, _epoch(ev.updated),
    )


def insert_events(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    conn.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)


class Head(NamedTuple):
    """What ranking reads of an event besides its relevance (see `weights.score_ceiling`)."""

    id: str
    timestamp: datetime | None
    kind: str
    importance: float | None
    confidence0: float
    updated: datetime | None


def _when(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None


def load_heads(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, Head]:
    out: dict[int, Head] = {}
    for chunk, marks in in_chunks(rowids):
        rows = conn.execute("SELECT rowid, id, ts, kind, importance, confidence0, updated FROM events "
                            f"WHERE rowid IN ({marks})", chunk)
        out.update((r, Head(i, _when(ts), k, imp, c0, _when(upd))) for r, i, ts, k, imp, c0, upd in rows)
    return out


def next_rowid(conn: sqlite3.Connection) -> int:
    """Document numbers are never reused, so a text engine can never confuse an old
    document with a new one (kept in meta; the caller stores the new value)."""
    kept = get_meta(conn).get("next_rowid")
    top = (conn.execute("SELECT max(rowid) FROM events").fetchone()[0] or 0) + 1
    return max(top, int(kept)) if kept and kept.isdigit() else top


def load_events(conn: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()) -> list[tuple[int, Event]]:
    sql = "SELECT rowid, data FROM events" + (f" WHERE {where}" if where else "")
    return [(r, event_from_json(d)) for r, d in conn.execute(sql, args)]


def load_rowids(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, Event]:
    out: dict[int, Event] = {}
    for chunk, marks in in_chunks(rowids):
        out.update(load_events(conn, f"rowid IN ({marks})", tuple(chunk)))
    return out


def load_ids(conn: sqlite3.Connection, ids: set[str]) -> list[Event]:
    wanted = list(ids)
    out: list[Event] = []
    for chunk, marks in in_chunks(wanted):
        out += [e for _, e in load_events(conn, f"id IN ({marks})", tuple(chunk))]
    return out


# ------------------------------------------------------------------------------ files


def file_states(conn: sqlite3.Connection, paths: list[str] | None = None) -> dict[str, tuple[int, int, str]]:
    """(size, mtime_ns, sha256) of the version of every indexed file (or of just `paths`)
    the index has seen: for a file held back, the version that failed, so an up-to-date
    check does not read it again until it changes. (Two plain reads: a join would cost
    every search's check a tenth more for a table that is nearly always empty.)"""
    files, held = (_stats(conn, table, paths) for table in ("files", "held"))
    files.update((p, st) for p, st in held.items() if p in files)
    return files


def _stats(conn: sqlite3.Connection, table: str, paths: list[str] | None) -> dict[str, tuple[int, int, str]]:
    sql = f"SELECT path, size, mtime_ns, sha256 FROM {table}"
    if paths is None:
        return {p: (s, m, h) for p, s, m, h in conn.execute(sql)}
    out: dict[str, tuple[int, int, str]] = {}
    for chunk, marks in in_chunks(paths):
        out.update({p: (s, m, h) for p, s, m, h in conn.execute(f"{sql} WHERE path IN ({marks})", chunk)})
    return out


def file_records(conn: sqlite3.Connection) -> dict[str, tuple[int, int, str, int, int]]:
    """Per indexed file: the seen version's (size, mtime_ns, sha256), the entries the index
    holds for it, and the entries the seen version holds (fewer for a file held back)."""
    sql = ("SELECT f.path, coalesce(h.size, f.size), coalesce(h.mtime_ns, f.mtime_ns), "
           "coalesce(h.sha256, f.sha256), f.events, coalesce(h.events, f.events) "
           "FROM files f LEFT JOIN held h ON h.path = f.path")
    return {r[0]: tuple(r[1:]) for r in conn.execute(sql)}


def held_files(conn: sqlite3.Connection) -> dict[str, tuple[int, int, str]]:
    """Files held back: path -> (entries kept, entries the failing version holds, why)."""
    sql = "SELECT h.path, f.events, h.events, h.reason FROM held h JOIN files f ON f.path = h.path ORDER BY h.path"
    return {p: (int(kept), int(now), why) for p, kept, now, why in conn.execute(sql)}


def put_held(conn: sqlite3.Connection, path: str, size: int, mtime_ns: int, sha: str, n_events: int,
             reason: str) -> None:
    conn.execute("INSERT OR REPLACE INTO held VALUES (?,?,?,?,?,?)", (path, size, mtime_ns, sha, n_events, reason))


def drop_held(conn: sqlite3.Connection, paths: list[str]) -> None:
    for chunk, marks in in_chunks(paths):
        conn.execute(f"DELETE FROM held WHERE path IN ({marks})", chunk)


def touch_file(conn: sqlite3.Connection, path: str, size: int, mtime_ns: int, sha: str) -> None:
    """Record a new stat of the version seen (same content): in `held` for a file held back."""
    for table in ("held", "files"):
        if conn.execute(f"UPDATE {table} SET size=?, mtime_ns=?, sha256=? WHERE path=?",
                        (size, mtime_ns, sha, path)).rowcount:
            return


def file_event_counts(conn: sqlite3.Connection, paths: list[str] | None = None) -> dict[str, int]:
    """Entries held per indexed file, of every file or of just `paths`."""
    sql = "SELECT path, events FROM files"
    if paths is None:
        return {p: int(n) for p, n in conn.execute(sql)}
    out: dict[str, int] = {}
    for chunk, marks in in_chunks(paths):
        rows = conn.execute(f"{sql} WHERE path IN ({marks})", chunk)
        out.update({p: int(n) for p, n in rows})
    return out


def file_entry_counts(conn: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    """Typed entries (notes left out) stored per file of `paths` (lastgood.py)."""
    out: dict[str, int] = {}
    for chunk, marks in in_chunks(paths):
        rows = conn.execute(f"SELECT file, count(*) FROM events WHERE file IN ({marks}) AND type != ? GROUP BY file",
                            (*chunk, NOTE))
        out.update({p: int(n) for p, n in rows})
    return out


def put_file(conn: sqlite3.Connection, path: str, size: int, mtime_ns: int, sha: str,
             n_events: int, problems: list[Problem]) -> None:
    conn.execute(
        "INSERT INTO files VALUES (?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET size=excluded.size, "
        "mtime_ns=excluded.mtime_ns, sha256=excluded.sha256, events=excluded.events, problems=excluded.problems",
        (path, size, mtime_ns, sha, n_events, json.dumps([p.to_dict() for p in problems])),
    )


def file_problems(conn: sqlite3.Connection) -> list[Problem]:
    out: list[Problem] = []
    for (raw,) in conn.execute("SELECT problems FROM files WHERE problems != '[]'"):
        out += [Problem(**d) for d in json.loads(raw)]
    return out


# ------------------------------------------------------------------------------ term statistics

DOCS_KEY = ""  # the `terms` row that counts events (no index term is empty)


def count_terms(docs: Iterable[tuple[int, tuple[str, ...]]]) -> Counter[str]:
    """Document frequency of each term over pre-analysed documents (any field), plus the
    number of documents under `DOCS_KEY`."""
    counts: Counter[str] = Counter()
    n = 0
    for _, fields in docs:
        counts.update(set(" ".join(fields).split()))
        n += 1
    counts[DOCS_KEY] += n
    return counts


def put_terms(conn: sqlite3.Connection, counts: Iterable[tuple[str, int]]) -> None:
    conn.executemany("INSERT INTO terms VALUES (?, ?)", [(t, n) for t, n in counts if n > 0])


def change_terms(conn: sqlite3.Connection, added: Counter[str], removed: Counter[str]) -> None:
    delta = Counter(added)
    delta.subtract(removed)
    changed = [(t, d) for t, d in delta.items() if d]
    conn.executemany(
        "INSERT INTO terms VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs", changed)
    conn.executemany("DELETE FROM terms WHERE term = ? AND docs <= 0", [(t,) for t, d in changed if d < 0])


def term_docs(conn: sqlite3.Connection, terms: Iterable[str]) -> tuple[dict[str, int], int]:
    """({term: documents holding it}, number of documents)."""
    wanted = list(dict.fromkeys([DOCS_KEY, *terms]))
    got: dict[str, int] = {}
    for chunk, marks in in_chunks(wanted):
        got.update(conn.execute(f"SELECT term, docs FROM terms WHERE term IN ({marks})", chunk))
    n = got.pop(DOCS_KEY, 0)
    return got, n


def events_of_files(conn: sqlite3.Connection, files: list[str]) -> list[tuple[int, Event]]:
    """(rowid, event) of every stored entry of `files`."""
    out: list[tuple[int, Event]] = []
    for chunk, marks in in_chunks(files):
        out += load_events(conn, f"file IN ({marks})", tuple(chunk))
    return out


def delete_files(conn: sqlite3.Connection, files: list[str]) -> None:
    """Forget `files` and their entries (the text engine's documents are the caller's)."""
    for chunk, marks in in_chunks(files):
        conn.execute(f"DELETE FROM events WHERE file IN ({marks})", chunk)
        conn.execute(f"DELETE FROM files WHERE path IN ({marks})", chunk)
        conn.execute(f"DELETE FROM held WHERE path IN ({marks})", chunk)
