"""What curate proposes: a `Plan` of `Proposal`s (add, update, reconfirm, archive a bullet),
made from MEMORY.md as it was read. Every proposal is a line-range splice on that text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memvault.config.curate import Settings
from memvault.curate.document import Bullet, MemoryDoc
from memvault.curate.select import Decision


@dataclass
class Proposal:
    key: str
    kind: str  # add | update | reconfirm | archive
    section: str
    text: str  # the bullet's text without annotations
    lines: tuple[str, ...]  # what the bullet will be; () for archive
    old: tuple[str, ...] = ()  # the bullet as it is (update, reconfirm, archive)
    start: int = 0  # line range in MEMORY.md of the bullet it changes
    end: int = 0
    bullet: str | None = None  # id of the bullet it changes
    block_id: str = ""
    entries: tuple[str, ...] = ()  # log entries it comes from
    links: tuple[str, ...] = ()  # links to those entries
    day: date | None = None  # latest date of its entries: the bullet's `added`/`updated` date
    first_day: date | None = None  # add: the first mention, when earlier than `day`
    was: str | None = None
    reason: str = ""
    origin: str = "memvault"  # or "with" when an external command rewrote it
    section_why: str = ""  # add: why this section (curate/sections.py)

    @property
    def new_section(self) -> bool:
        return self.kind == "add" and self.start < 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "kind": self.kind, "section": self.section, "text": self.text,
            "lines": list(self.lines), "old": list(self.old), "line": self.start + 1 if self.start >= 0 else None,
            "bullet": self.bullet, "block_id": self.block_id, "entries": list(self.entries),
            "links": list(self.links), "date": self.day.isoformat() if self.day else None, "was": self.was,
            "reason": self.reason, "origin": self.origin, "new_section": self.new_section,
            "section_why": self.section_why or None,
        }


@dataclass(frozen=True)
class StaleBullet:
    bullet: Bullet
    reason: str
    rank: tuple[int, float, float]


@dataclass
class Plan:
    at: datetime
    since: datetime | None
    since_from: str  # "marker", "option", "all" or "none"
    path: Path
    archive_path: Path
    digest: str | None
    doc: MemoryDoc
    settings: Settings
    proposals: list[Proposal]
    decisions: dict[str, Decision]
    stale: list[StaleBullet]
    archives: list[Proposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The log entries this curation considers (all dated up to `at`), recorded when a review
    # completes; and whether the last curation's record was used (curate/considered.py).
    seen: frozenset[str] = frozenset()
    record_used: bool = False


def chosen_lines(plan: Plan, choice: Mapping[str, tuple[str, ...]] | None) -> dict[str, tuple[str, ...]]:
    """The proposals a review kept (key -> lines); all of them, as proposed, when `choice` is None."""
    if choice is None:
        return {p.key: p.lines for p in plan.proposals}
    return dict(choice)
