"""Which entries the `[retention]` policies forget, given their retentions: pure, no I/O.

Two policies, as the forgetting-curve skill's maintenance script applies them:

- `forget_below`: an entry whose retention is below the threshold (0.1, the skill's
  "forgotten") is forgotten;
- `max_live`: of the entries left, at most N stay; the lowest retention goes first, ties by
  the oldest entry (then by id, so the choice never depends on input order). 0 is no limit.

An entry whose importance is at or above `keep_importance` (0.7, `Importance: high`) is never
chosen: the seed's "set importance: high for memories that should persist". An entry the record
holds that `choose` would not choose now is brought back (`back`): its retention came back (a
later-written, earlier-dated presentation), or the settings changed.
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
    importance: float | None = None


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
    keep_importance: float = 0.7  # above 1: none kept for importance

    @classmethod
    def of(cls, section: dict[str, Any]) -> Settings:
        return cls(float(section["forget_below"]), int(section["max_live"]), bool(section["archive"]),
                   str(section["archive_dir"]).strip("/"), float(section["keep_importance"]))


def kept(c: Candidate, settings: Settings) -> bool:
    """Important enough that no policy forgets it."""
    return c.importance is not None and c.importance >= settings.keep_importance


def _order(c: Candidate) -> tuple[float, float, str]:
    """Lowest retention first, then the oldest (an undated entry counts as the newest), then id."""
    return (c.retention, c.timestamp.timestamp() if c.timestamp is not None else float("inf"), c.id)


def choose(candidates: Iterable[Candidate], settings: Settings) -> list[Choice]:
    """The entries the policies forget, in the order they are chosen (forget_below first)."""
    every = list(candidates)
    ordered = sorted((c for c in every if not kept(c, settings)), key=_order)
    below = [c for c in ordered if c.retention < settings.forget_below]
    left = [c for c in ordered if c.retention >= settings.forget_below]
    # the important ones stay and count among the live: max_live caps what stays
    over = len(left) + (len(every) - len(ordered)) - settings.max_live if settings.max_live else 0
    return ([Choice(c.id, c.retention, "forget_below") for c in below]
            + [Choice(c.id, c.retention, "max_live") for c in left[:max(0, over)]])


def back(held: Iterable[Candidate], chosen: Iterable[Choice], settings: Settings) -> list[tuple[Candidate, str]]:
    """The recorded (forgotten) entries `held` that `chosen` (`choose` over them and the live
    ones) no longer holds, each with why it comes back."""
    ids = {c.id for c in chosen}
    out = []
    for c in held:
        if c.id in ids:
            continue
        if kept(c, settings):
            why = f"importance {c.importance:g} ≥ keep_importance {settings.keep_importance:g}"
        else:
            why = f"retention {c.retention:.2f} ≥ {settings.forget_below:g}"
            if settings.max_live:
                why += f", within max_live {settings.max_live}"
        out.append((c, why))
    return out
