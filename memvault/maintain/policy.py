"""Which entries the `[retention]` policies forget, given their retentions: pure, no I/O.

Two policies, as the forgetting-curve skill's maintenance script applies them:

- `forget_below`: an entry whose retention is below the threshold (0.1, the skill's
  "forgotten") is forgotten;
- `max_live`: of the entries left, at most N stay; the lowest retention goes first, ties by
  the oldest entry (then by id, so the choice never depends on input order). 0 is no limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Policy = Literal["forget_below", "max_live"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A live entry maintain may forget, with its retention now."""

    id: str
    retention: float
    timestamp: datetime | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    id: str
    retention: float
    policy: Policy


@dataclass(frozen=True, slots=True)
class Settings:
    forget_below: float = 0.1
    max_live: int = 0  # 0: no limit
    archive: bool = False
    archive_dir: str = "forgotten"

    @classmethod
    def of(cls, section: dict[str, Any]) -> Settings:
        return cls(float(section["forget_below"]), int(section["max_live"]), bool(section["archive"]),
                   str(section["archive_dir"]).strip("/"))


def _order(c: Candidate) -> tuple[float, float, str]:
    """Lowest retention first, then the oldest (an undated entry counts as the newest), then id."""
    return (c.retention, c.timestamp.timestamp() if c.timestamp is not None else float("inf"), c.id)


def choose(candidates: Iterable[Candidate], settings: Settings) -> list[Choice]:
    """The entries the policies forget, in the order they are chosen (forget_below first)."""
    ordered = sorted(candidates, key=_order)
    below = [c for c in ordered if c.retention < settings.forget_below]
    left = [c for c in ordered if c.retention >= settings.forget_below]
    over = len(left) - settings.max_live if settings.max_live else 0
    return ([Choice(c.id, c.retention, "forget_below") for c in below]
            + [Choice(c.id, c.retention, "max_live") for c in left[:max(0, over)]])
