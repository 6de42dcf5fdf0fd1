"""The memory event and the problem report: the two records everything else passes around."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
# The type of a note: a daily log's freeform section (docs/format.md "Notes"). Reserved: an
# entry typed `Note` is a note too (never a candidate for a description reference).
NOTE = "note"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the vault's files, reported as `path:line: message`."""

    path: str
    line: int
    message: str
    severity: Severity = "error"
    code: str = "MV000"
    col: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }


@dataclass(slots=True)
class Event:
    """One memory event: a daily-log entry, a note (a freeform section of a log) or a curated
    MEMORY.md bullet.

    `timestamp` is timezone-aware. `supersedes` and `reconfirms` hold the reference as
    written; the resolved ids live in the vault's supersession graph. A note's `path` holds
    the headings above it and its own (below the file's title); its `heading` is set on the
    first note of a section only, so a link to the heading names one note.
    """

    id: str
    type: str
    timestamp: datetime | None
    content: str
    file: str
    line: int
    end_line: int
    kind: Literal["log", "curated"] = "log"
    title: str = ""
    heading: str = ""
    confidence0: float = 1.0
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    block_ids: tuple[str, ...] = ()
    source: str | None = None
    importance: float | None = None
    expires: datetime | None = None
    scope: str | None = None
    supersedes: str | None = None
    reconfirms: tuple[str, ...] = ()
    explicit_id: bool = False
    category: str | None = None
    updated: datetime | None = None
    previous: str | None = None
    sources: tuple[str, ...] = ()
    meta: dict[str, str] = field(default_factory=dict)
    path: tuple[str, ...] = ()
    forgotten: datetime | None = None  # a `Forgotten:` tombstone: not live from then on

    @property
    def is_note(self) -> bool:
        return self.type == NOTE

    @property
    def location(self) -> str:
        return f"{self.file}#L{self.line}-L{self.end_line}"
