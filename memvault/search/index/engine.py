"""The small interface a full-text backend implements, and the records the index returns.

A backend stores, per event row, five pre-analysed fields (title, body, tags, extra, context; terms
separated by spaces, see `textproc.analyzed`) and answers a parsed `Query` with
(rowid, BM25) pairs, best first, scoring the rows a `plan.Plan` selects. Everything else (files,
events, links, term statistics, ranking) is shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from memvault.entries.model import Problem
from memvault.entries.render import iso
from memvault.search.plan import Plan
from memvault.search.textproc import Query

Doc = tuple[int, tuple[str, str, str, str, str]]
Progress = Callable[[int, int], None]  # (files done, files in all)


class Engine(Protocol):
    name: str
    atomic: bool  # True when its writes commit in the store's SQLite transaction
    counts_terms: bool  # True when term_counts() reads document frequencies from the engine

    def create(self) -> None: ...
    def begin(self) -> None: ...
    def add(self, docs: list[Doc]) -> None: ...
    def delete(self, docs: list[Doc]) -> None: ...  # the docs as they were added
    def commit(self) -> None: ...
    def abort(self) -> None: ...
    def search(self, query: Query, limit: int, plan: Plan = ...) -> list[tuple[int, float]]: ...
    def term_counts(self) -> list[tuple[str, int]] | None: ...
    def generation(self) -> str | None: ...
    def size_bytes(self) -> int: ...
    def close(self) -> None: ...


class FileState(NamedTuple):
    size: int
    mtime_ns: int
    sha256: str


@dataclass
class UpdateReport:
    """What one `update`/`rebuild` did."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    events_indexed: int = 0
    events_removed: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    rebuilt: bool = False
    reason: str | None = None  # why a rebuild happened
    held: dict[str, str] = field(default_factory=dict)  # files failing to parse, last good kept: why
    semantic: dict[str, Any] | None = None  # what embedding the new entries did (index/semantic.py), when on

    @property
    def updated(self) -> list[str]:
        """Every file whose entries this update replaced (added, changed, removed)."""
        return sorted({*self.added, *self.changed, *self.removed})

    @property
    def touched(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.rebuilt)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added, "changed": self.changed, "removed": self.removed,
            "events_indexed": self.events_indexed, "events_removed": self.events_removed,
            "problems": [p.to_dict() for p in self.problems], "seconds": round(self.seconds, 4),
            "rebuilt": self.rebuilt, "reason": self.reason, "held": self.held,
            **({"semantic": self.semantic} if self.semantic is not None else {}),
        }


@dataclass
class IndexStatus:
    """Files and events on disk against the index, and whether the index can be trusted."""

    backend: str
    path: Path
    exists: bool
    stale: bool
    stale_reason: str | None
    files_on_disk: int
    files_indexed: int
    events_on_disk: int
    events_indexed: int
    changed_files: list[str] = field(default_factory=list)
    last_update: datetime | None = None
    schema_version: int | None = None
    size_bytes: int = 0
    not_read: list[str] = field(default_factory=list)  # vault paths the layout rule skips
    healed: str | None = None  # when and why the index was last rebuilt for damage
    broken: dict[str, str] = field(default_factory=dict)  # files failing to parse, last good kept: why

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend, "path": str(self.path), "exists": self.exists,
            "stale": self.stale, "stale_reason": self.stale_reason,
            "files_on_disk": self.files_on_disk, "files_indexed": self.files_indexed,
            "events_on_disk": self.events_on_disk, "events_indexed": self.events_indexed,
            "changed_files": self.changed_files, "last_update": iso(self.last_update),
            "schema_version": self.schema_version, "size_bytes": self.size_bytes,
            "not_read": self.not_read, "healed": self.healed, "broken": self.broken,
        }

    def lines(self) -> list[str]:
        state = f"stale ({self.stale_reason})" if self.stale else "up to date"
        if (self.stale_reason or "").startswith("damaged"):
            state += "; the next search or `memvault index` rebuilds it"
        when = iso(self.last_update) or "never"
        healed = [f"  healed: {self.healed}"] if self.healed else []
        return [
            f"index: {self.backend}, {state}, last update {when}",
            f"  files:  {self.files_on_disk} on disk, {self.files_indexed} indexed",
            f"  events: {self.events_on_disk} on disk, {self.events_indexed} indexed",
            f"  size:   {self.size_bytes / 1048576:.1f} MB at {self.path}",
        ] + healed + [f"  failing to parse: {why}" for why in self.broken.values()] + [
            f"  changed: {p}" for p in self.changed_files[:10]] + [
            f"  not read: {p}" for p in self.not_read[:10]]
