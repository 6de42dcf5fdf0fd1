"""The one rule for a file that fails to parse: its last good entries stay in the index.

Every writer of the index goes through it: incremental updates (`core.Index.update`, which
`memvault search`'s up-to-date check, `memvault index` and the watcher call) and full
rebuilds (`build.py`, which carries the kept rows over from the index it replaces). A file
held back is recorded in the store's `held` table with the version that was seen (so the
up-to-date check does not read it again until it changes) and why; `memvault status` reads
the list from there, whoever updated the index.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memvault.entries.model import Event, Problem
from memvault.search.index import store


def keeps_last_good(errors: int, new_events: int, indexed_events: int | None,
                    new_entries: int = 0, indexed_entries: int = 0) -> bool:
    """A new version with errors that loses entries is held back; the index keeps the old one.

    Losing counts typed entries too (`entries`, notes left out): a half-typed heading
    (`## 12:0`) turns an entry into a note, which keeps the number of events but not what the
    vault believes. A file that merely has errors (an unknown type, a bad date) but keeps its
    entries is indexed as it is: holding it back would freeze every later edit to it. A file
    with no errors that has fewer entries lost them on purpose.
    """
    return errors > 0 and indexed_events is not None and (
        new_events < indexed_events or new_entries < indexed_entries)


def typed(events: list[Event]) -> int:
    """How many of `events` are typed entries (not notes)."""
    return sum(not e.is_note for e in events)


def errors_of(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def held_reason(problems: list[Problem], kept: int) -> str:
    """What status and the watcher say about a file held back (its first error)."""
    first = errors_of(problems)[0]
    return f"{first.path}:{first.line}: {first.message}; keeping its last good {kept} entries until it parses"


class Previous:
    """The index a rebuild replaces, asked which files keep their last good entries.

    A rebuild applies the same rule as an update, against the entries the old index holds:
    a file whose version on disk fails and loses entries keeps the old rows, carried over.
    Nothing is carried from an index of another schema, from a damaged one (the rebuild
    reads every file as it is), or when the old rows cannot be read back whole."""

    def __init__(self, db_path: Path, *, trusted: bool = True):
        self.conn: sqlite3.Connection | None = None
        self.counts: dict[str, int] = {}
        if not trusted or not db_path.is_file():
            return
        try:
            conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        except (sqlite3.Error, OSError, ValueError):
            return
        try:
            if store.get_meta(conn).get("schema_version") == str(store.SCHEMA_VERSION):
                self.counts = store.file_event_counts(conn)
                self.conn = conn
        except sqlite3.Error:
            pass
        if self.conn is None:
            conn.close()

    def kept(self, rel: str, problems: list[Problem], new: list[Event],
             ) -> tuple[tuple[int, int, str], list[Event], list[Problem]] | None:
        """(the last good version's size, mtime_ns, sha256; its entries; its problems) when
        `rel`'s version on disk (`new`, its events) is held back, else None."""
        old = self.counts.get(rel)
        errors = len(errors_of(problems))
        if self.conn is None or not errors or old is None:
            return None
        try:
            old_typed = store.file_entry_counts(self.conn, [rel]).get(rel, 0)
        except sqlite3.Error:
            return None
        if not keeps_last_good(errors, len(new), old, typed(new), old_typed):
            return None
        try:
            row = self.conn.execute("SELECT size, mtime_ns, sha256, problems FROM files WHERE path = ?", (rel,)).fetchone()
            events = [e for _, e in sorted(store.events_of_files(self.conn, [rel]), key=lambda r: r[0])]
            old_problems = [Problem(**d) for d in json.loads(row[3])] if row else []
        except (sqlite3.Error, TypeError, ValueError):
            return None
        if row is None or len(events) != old:
            return None
        return (int(row[0]), int(row[1]), str(row[2])), events, old_problems

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
