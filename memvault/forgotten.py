"""What `memvault maintain` forgot: a derived record under `.memvault/`, and the rule that hides it.

Under the default model (0.95 a day) almost every entry older than ~45 days has a retention
below 0.1; hiding entries by their live status would empty a search of everything older than six
weeks. So, as in the forgetting-curve skill, where its maintenance script is what removes a
forgotten memory, an entry leaves default results (list, search, asof, curate's candidates) only
once `memvault maintain` has forgotten it; live retention is only shown.

The record is `.memvault/forgotten.sqlite` (a SQLite file replaced whole by each run, so search
reads only its candidates' rows): for each forgotten id, when maintain forgot it, its
retention then, the policy that chose it and the model, and the archive file it moved to (if
any). It is derived state: deleting `.memvault/` brings every forgotten entry back until
maintain runs again (an archived entry stays in its archive file: the move is in the files).

Relearning (the skill's reinforcement): an entry presented again after it was forgotten (a later
entry `Reconfirms:` it, or says the same thing, by curate's test) is live again from that
presentation on. Recalls (`memvault show`) do not bring it back: reading is not relearning, and
they are not in the files.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from memvault.entries.model import Event
from memvault.fsio import DERIVED_DIR, atomic_write

FILE = "forgotten.sqlite"
VERSION = 2  # 1 was forgotten.json (a record a version 1 memvault wrote is not read: maintain again)

# `[retention]`: maintain's policies (docs/retention.md#maintenance). `forget_below` is the skill's
# forgotten threshold; `max_live` 0 is no limit (the skill's agents keep 1000).
DEFAULTS: dict[str, Any] = {"forget_below": 0.1, "max_live": 0, "archive": False, "archive_dir": "forgotten",
                            "keep_importance": 0.7}

# The line an archived entry's block starts with in its archive file: the archive says, in git,
# what moved there, whatever happens to `.memvault/` (`history ID` reads it).
ARCHIVED_RE = re.compile(r"^<!-- memvault archived (?P<id>\S+) from (?P<file>\S+) at (?P<at>\S+)"
                         r" retention (?P<retention>\S+) by (?P<policy>\S+) -->$", re.M)


def archived_line(record: Forgetting, source: str) -> str:
    return (f"<!-- memvault archived {record.id} from {source} at {record.at.isoformat()} "
            f"retention {record.retention:.3g} by {record.policy} -->")


def find_archived(root: Path, folder: str, event_id: str) -> dict[str, Any] | None:
    """Where `event_id` was archived: its archive file (vault-relative) and line, the file it came
    from, when and why; None when no archive file under `folder` holds it."""
    base = Path(root) / folder
    for path in sorted(base.glob("*.md")) if base.is_dir() else ():
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in ARCHIVED_RE.finditer(text):
            if m["id"] == event_id:
                return {"file": f"{folder.rstrip('/')}/{path.name}", "line": text.count("\n", 0, m.start()) + 2,
                        "from": m["file"], "at": m["at"], "retention": m["retention"], "policy": m["policy"]}
    return None


class Forgetting(NamedTuple):
    """One entry maintain forgot (a tuple: 100k of them load in a blink)."""

    id: str
    at: datetime  # when maintain forgot it
    retention: float  # its retention then
    policy: str  # "forget_below" or "max_live"
    model: str  # the [decay] model that gave the retention
    archived: str | None = None  # the archive file it moved to (`--archive`), vault-relative

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "at": self.at.isoformat(), "retention": float(f"{self.retention:.6g}"),
                "policy": self.policy, "model": self.model, "archived": self.archived}


def path_of(root: Path) -> Path:
    return Path(root) / DERIVED_DIR / FILE


COLUMNS = ["id", "at", "retention", "policy", "model", "archived"]
_SELECT = "SELECT id, at, retention, policy, model, archived FROM forgotten"


def load(root: Path) -> dict[str, Forgetting]:
    """The whole record by id (list, asof, maintain); empty when there is none or it cannot be
    read (derived state: a damaged record is as good as none, and maintain writes it again)."""
    conn = _open(root)
    if conn is None:
        return {}
    try:
        return _rows(conn)
    except (sqlite3.Error, ValueError, TypeError):
        return {}
    finally:
        conn.close()


def _open(root: Path) -> sqlite3.Connection | None:
    """The record read-only, or None when there is none or it is not this version's."""
    path = path_of(root)
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    except (sqlite3.Error, ValueError):
        return None
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == VERSION:
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def _rows(conn: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()) -> dict[str, Forgetting]:
    """The rows `where` selects, checked in SQL and built without a Python call per row (the
    whole record, for list and asof: 90k rows in a fraction of a second; docs/performance.md)."""
    times = {at: datetime.fromisoformat(at) for (at,) in conn.execute(
        "SELECT DISTINCT at FROM forgotten" + where, args)}  # one maintain run, one time: parse each once
    odd = ("typeof(retention) != 'real' OR abs(retention) > 1e308 OR typeof(id) != 'text' OR typeof(policy) != 'text'"
           " OR typeof(model) != 'text' OR typeof(archived) NOT IN ('text', 'null')")
    if any(t.tzinfo is None for t in times.values()) or conn.execute(
            f"SELECT 1 FROM forgotten {f'{where} AND' if where else 'WHERE'} ({odd}) LIMIT 1", args).fetchone():
        raise ValueError("a forgotten entry without a zone, a retention or a text")
    new = tuple.__new__
    return {row[0]: new(Forgetting, (row[0], times[row[1]], *row[2:]))
            for row in conn.execute(_SELECT + where, args)}


class Stored(Mapping[str, Forgetting]):
    """The record as a search asks it: only the ids it asks for are read (one indexed lookup
    each), so a search costs the same whatever the record holds (docs/performance.md)."""

    def __init__(self, root: Path):
        self._conn = _open(root)
        self._got: dict[str, Forgetting | None] = {}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self._got:
            self._got[key] = self._fetch(key)
        found = self._got[key]
        return default if found is None else found

    def _fetch(self, key: str) -> Forgetting | None:
        if self._conn is None:
            return None
        try:
            return _rows(self._conn, " WHERE id = ?", (key,)).get(key)
        except (sqlite3.Error, ValueError, TypeError):
            return None

    def __getitem__(self, key: str) -> Forgetting:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __bool__(self) -> bool:
        try:
            return self._conn is not None and self._conn.execute("SELECT 1 FROM forgotten LIMIT 1").fetchone() is not None
        except sqlite3.Error:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def _all(self) -> dict[str, Forgetting]:
        try:
            return _rows(self._conn) if self._conn is not None else {}
        except (sqlite3.Error, ValueError, TypeError):
            return {}


def save(root: Path, records: Iterable[Forgetting]) -> None:
    """Write the whole record atomically (a reader or a kill sees the old one or the new one)."""
    atomic_write(path_of(root), dumps(records))


def dumps(records: Iterable[Forgetting]) -> bytes:
    """The bytes `save` writes: a SQLite database built in memory, one row an entry, by id (a
    search reads only its candidates' rows; the whole record loads in a fraction of a second)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(f"PRAGMA user_version = {VERSION};"
                           "CREATE TABLE forgotten (id TEXT PRIMARY KEY, at TEXT NOT NULL, retention REAL NOT NULL,"
                           " policy TEXT NOT NULL, model TEXT NOT NULL, archived TEXT) WITHOUT ROWID;")
        conn.executemany("INSERT INTO forgotten VALUES (?, ?, ?, ?, ?, ?)",
                         sorted((r.id, r.at.isoformat(), r.retention, r.policy, r.model, r.archived) for r in records))
        conn.commit()
        return conn.serialize()
    finally:
        conn.close()


class Forgotten(Mapping[str, Forgetting]):
    """The record as a timeline asks it (`entries.timeline.Forgets`).

    `presented(event, since)` gives the times after `since` the entry was presented again, from
    the whole vault's timeline (`Timeline.presented`); it is asked only for forgotten entries,
    once each, with `since` their forgetting: only entries written since can bring one back."""

    def __init__(self, records: Mapping[str, Forgetting],
                 presented: Callable[[Event, datetime], Sequence[datetime]]):
        self.records = records
        self._presented = presented
        self._back: dict[str, datetime | None] = {}

    def __getitem__(self, key: str) -> Forgetting:
        return self.records[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __bool__(self) -> bool:
        return bool(self.records)  # a `Stored` record answers without reading every row

    def back_at(self, event: Event) -> datetime | None:
        """When a forgotten entry was presented again after it was forgotten (relearned); None if not."""
        record = self.records.get(event.id)
        if record is None:
            return None
        if event.id not in self._back:
            self._back[event.id] = next((t for t in self._presented(event, record.at) if t > record.at), None)
        return self._back[event.id]

    def at(self, event: Event, at: datetime) -> Forgetting | None:
        """The forgetting that hides `event` at `at`: forgotten by then and not relearned by then."""
        record = self.records.get(event.id)
        if record is None or record.at > at:
            return None
        back = self.back_at(event)
        return record if back is None or back > at else None

    def hides(self, event: Event, at: datetime) -> bool:
        return self.at(event, at) is not None

    def change_points(self, event: Event) -> list[datetime]:
        """The times at which `hides` can change for `event` (for event time's live intervals)."""
        record = self.records.get(event.id)
        if record is None:
            return []
        back = self.back_at(event)
        return [record.at] + ([back] if back is not None else [])
