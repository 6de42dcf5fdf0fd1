"""The agent-memory/0.1 file (seed `agent-memory-file-0.1.md`), pure: its lines read into records,
its current view, and records written back as lines.

A line that does not read is a `BadFile` naming the file and the line, never a crash. Fields the
spec does not name are ignored (a later version may add some); a field it names with the wrong
shape is an error, so nothing is imported half-understood.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from memvault.errors import Refused

FORMAT = "agent-memory/0.1"
KINDS = ("preference", "lesson", "fact", "source", "avoid")


class BadFile(Refused):
    """A file to import that does not read: the message starts with `file:line:`."""

    def __init__(self, name: str, line: int, message: str):
        super().__init__(f"{name}:{line}: {message}", file=name, line=line)


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    kind: str
    text: str
    created_at: datetime
    scope: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    confidence: float | None = None
    expires_at: datetime | None = None
    supersedes: str | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class Tombstone:
    id: str
    created_at: datetime | None
    line: int = 0


Record = Entry | Tombstone


@dataclass(frozen=True, slots=True)
class MemoryFile:
    created_at: datetime | None
    records: tuple[Record, ...]


def sniff(first_line: str) -> bool:
    """Whether a file's first line is this format's header."""
    try:
        head = json.loads(first_line)
    except (ValueError, RecursionError):
        return False
    return isinstance(head, dict) and head.get("format") == FORMAT


def parse(text: str, name: str, tz: tzinfo = UTC) -> MemoryFile:
    """Every line of the file; a time without an offset is in `tz` (the vault's zone)."""
    lines = text.lstrip("\ufeff").split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise BadFile(name, 1, f"empty file; an {FORMAT} file starts with its header line")
    head = read_json(lines[first], name, first + 1)
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise BadFile(name, first + 1, f'not an {FORMAT} file: the first line must be its header, '
                                       f'{{"format": "{FORMAT}", "created_at": ...}}')
    created = parse_time(head.get("created_at"), "created_at", name, first + 1, tz, required=False)
    records: list[Record] = []
    for n, line in enumerate(lines[first + 1:], first + 2):
        if line.strip():
            records.append(_record(read_json(line, name, n), name, n, tz))
    return MemoryFile(created, tuple(records))


def read_json(line: str, name: str, n: int) -> Any:
    """One line's JSON value; a line that is not JSON, nests too deep to read, or holds a lone
    surrogate (`"\\ud800"`: JSON allows it, UTF-8 cannot write it) is a BadFile."""
    try:
        value = json.loads(line)
    except RecursionError:
        raise BadFile(name, n, "not JSON memvault reads (nested too deep)") from None
    except ValueError as exc:
        raise BadFile(name, n, f"not JSON ({exc.args[0] if exc.args else exc})") from None
    if isinstance(value, dict) and any(_surrogate(v) for v in (*value, *value.values())):
        raise BadFile(name, n, "a string holds a lone surrogate (an escape such as \\ud800), which is not text")
    return value


def _surrogate(value: Any) -> bool:
    """A lone surrogate in a string, or in a list of strings (a record's fields are flat)."""
    if isinstance(value, list):
        return any(_surrogate(v) for v in value if isinstance(v, str))
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # only a surrogate cannot be encoded
        return True
    return False


def _record(obj: Any, name: str, n: int, tz: tzinfo) -> Record:
    if not isinstance(obj, dict):
        raise BadFile(name, n, f"a line is a JSON object (an entry or a tombstone), not {type(obj).__name__}")
    rid = _text(obj.get("id"), "id", name, n)
    if any(c.isspace() for c in rid):
        raise BadFile(name, n, f"id {rid!r} holds a space; an id is one token")
    if obj.get("deleted") is not None:
        if obj["deleted"] is not True:
            raise BadFile(name, n, f'"deleted" is true on a tombstone, not {obj["deleted"]!r}')
        return Tombstone(rid, parse_time(obj.get("created_at"), "created_at", name, n, tz, required=False), n)
    kind = obj.get("kind")
    if kind not in KINDS:
        raise BadFile(name, n, f"unknown kind {kind!r}; an entry's kind is one of {', '.join(KINDS)}")
    tags = obj.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        raise BadFile(name, n, f'"tags" is a list of words, not {tags!r}')
    confidence = obj.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, int | float)
                                   or not 0 <= confidence <= 1):
        raise BadFile(name, n, f'"confidence" is a number from 0 to 1, not {confidence!r}')
    supersedes = _optional(obj.get("supersedes"), "supersedes", name, n)
    if supersedes == rid:
        raise BadFile(name, n, f"{rid} supersedes itself; an entry supersedes an earlier one")
    return Entry(
        id=rid, kind=kind, text=_text(obj.get("text"), "text", name, n),
        created_at=parse_time(obj.get("created_at"), "created_at", name, n, tz),  # type: ignore[arg-type]
        scope=_optional(obj.get("scope"), "scope", name, n), tags=tuple(t.strip() for t in tags),
        source=_optional(obj.get("source"), "source", name, n),
        confidence=None if confidence is None else float(confidence),
        expires_at=parse_time(obj.get("expires_at"), "expires_at", name, n, tz, required=False),
        supersedes=supersedes, line=n,
    )


def _text(value: Any, key: str, name: str, n: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadFile(name, n, f'"{key}" is a non-empty string, not {value!r}')
    return value.strip()


def _optional(value: Any, key: str, name: str, n: int) -> str | None:
    return None if value is None or value == "" else _text(value, key, name, n)


def parse_time(value: Any, key: str, name: str, n: int, tz: tzinfo, required: bool = True) -> datetime | None:
    """`value` as an ISO 8601 time (a naive one in `tz`), or a BadFile naming `key`, file and line."""
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadFile(name, n, f'"{key}" is an ISO 8601 date-time, not {value!r}')
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise BadFile(name, n, f'"{key}" {value!r} is not an ISO 8601 date-time') from None
    if not 1000 <= when.year <= 9999 or (when.year == 9999 and when.month == 12 and when.day == 31):
        raise BadFile(name, n, f'"{key}" {value!r} is outside the times memvault keeps (1000-01-01 to 9999-12-30)')
    return when.replace(tzinfo=tz) if when.tzinfo is None else when


def latest(records: Iterable[Record]) -> tuple[dict[str, Entry], dict[str, Tombstone]]:
    """Each id's last entry line, and the tombstones that come after it (later lines win: an entry
    written again after its tombstone is alive again)."""
    entries: dict[str, Entry] = {}
    dead: dict[str, Tombstone] = {}
    for rec in records:
        if isinstance(rec, Tombstone):
            dead[rec.id] = rec
        else:
            entries[rec.id] = rec
            dead.pop(rec.id, None)
    return entries, dead


def current_view(records: Sequence[Record], now: datetime) -> list[Entry]:
    """The live entries at `now`, oldest first: later lines win, tombstoned and superseded entries
    drop out, expired ones are skipped. Any entry's `supersedes` counts, even one later deleted
    or expired (as in a vault: a forgotten correction does not bring back what it corrected)."""
    entries, dead = latest(records)
    superseded = {e.supersedes for e in entries.values() if e.supersedes and e.supersedes != e.id}
    live = [e for e in entries.values() if e.id not in dead and e.id not in superseded
            and (e.expires_at is None or e.expires_at > now)]
    return sorted(live, key=lambda e: (e.created_at, e.id))


def zulu(when: datetime) -> str:
    """A time as the file writes it: UTC, `Z`, seconds."""
    return when.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def entry_dict(e: Entry) -> dict[str, Any]:
    return {"id": e.id, "kind": e.kind, "text": e.text, "scope": e.scope or "global", "tags": list(e.tags),
            "source": e.source, "confidence": 1.0 if e.confidence is None else e.confidence,
            "expires_at": zulu(e.expires_at) if e.expires_at else None, "supersedes": e.supersedes,
            "created_at": zulu(e.created_at)}


# Characters JSON may hold raw that change what a terminal or an editor shows (C1 controls, line and
# paragraph separators, bidirectional and zero-width marks): written escaped, so a file printed is safe.
_UNSAFE = re.compile("[\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def line_json(obj: dict[str, Any]) -> str:
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", json.dumps(obj, ensure_ascii=False))


def dump(created_at: datetime, records: Iterable[Record]) -> str:
    """The file's text: the header, then one line per record, as given."""
    out = [json.dumps({"format": FORMAT, "created_at": zulu(created_at)})]
    for rec in records:
        if isinstance(rec, Tombstone):
            out.append(line_json({"id": rec.id, "deleted": True,
                                  "created_at": zulu(rec.created_at) if rec.created_at else None}))
        else:
            out.append(line_json(entry_dict(rec)))
    return "\n".join(out) + "\n"
