"""Spaced review, as the forgetting-curve skill's "spaced review metadata" has it: the
`Review:` and `Reviewed:` metadata lines (read and written), and the schedule (pure).

    Review: 30d, ratio 0.2                                   # target retention interval, spacing ratio
    Reviewed: 2026-12-07T09:30+01:00 ok, interval 12d        # one line per review, appended

`Review:` puts an entry on the schedule: how long it should stay useful (the seed's
`_target_retention_interval`) and the first review gap as a fraction of that (`_spacing_ratio`).
Each `Reviewed:` line records one attempt at recalling it (`_last_retrieval_success` is the last
line's outcome) and the gap to the next review (`_next_review_tick` is its time plus that gap).
The lines are the whole state, so it lives in git with the entry; the format is normative in
docs/format.md ("Spaced review").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from memvault.entries.model import Event
from memvault.entries.values import parse_when_value

Outcome = Literal["ok", "failed"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "failed")
DEFAULT_RATIO = 0.2  # the seed: "often 0.1-0.3"
GROWTH = 2.0  # a success doubles the gap ...
SHRINK = 0.5  # ... a failure halves it
FLOOR = timedelta(days=1)  # no gap shorter than a day (or than the first gap, if that is shorter)
LONGEST = timedelta(days=365 * 100)  # a target beyond this is a typo, not a plan

DURATION_RE = re.compile(r"(?P<n>[0-9]{1,9})(?P<unit>[dhm])", re.IGNORECASE)
UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}
REVIEW_RE = re.compile(r"^(?P<target>\S+?)(?:\s*,\s*ratio\s+(?P<ratio>[0-9]*\.?[0-9]+))?$", re.IGNORECASE)
REVIEWED_RE = re.compile(r"^(?P<at>\S+(?: [0-9:]+(?:[+-][0-9:]+|Z)?)?)\s+(?P<outcome>ok|failed)\s*,\s*"
                         r"interval\s+(?P<interval>\S+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Plan:
    """An entry's `Review:` line: the target retention interval and the spacing ratio."""

    target: timedelta
    ratio: float = DEFAULT_RATIO

    @property
    def first(self) -> timedelta:
        """The first review gap, counted from the entry's own time."""
        return max(_minutes(self.target * self.ratio), timedelta(minutes=1))

    @property
    def bounds(self) -> tuple[timedelta, timedelta]:
        """Every gap the schedule gives lies in [shortest, longest]: no shorter than a day (or
        the first gap, if shorter), no longer than the target: a memory that need stay useful
        for 30 days needs no review more than 30 days away."""
        return min(self.first, FLOOR), max(self.target, self.first)


@dataclass(frozen=True)
class Reviewed:
    """One `Reviewed:` line: when, how it went, the gap it set to the next review."""

    at: datetime
    outcome: Outcome
    interval: timedelta

    @property
    def next(self) -> datetime:
        return self.at + self.interval


def parse_duration(text: str) -> timedelta | None:
    """`30d`, `36h`, `1d12h`, `90m`: whole days, hours and minutes; None if not one, or zero."""
    text = text.strip()
    parts = list(DURATION_RE.finditer(text))
    if not parts or "".join(p[0] for p in parts) != text:
        return None
    total = sum((int(p["n"]) * UNIT[p["unit"].lower()] for p in parts), timedelta())
    return total if timedelta() < total <= LONGEST else None


def format_duration(value: timedelta) -> str:
    """The shortest exact spelling, in one unit: `12d`, `36h`, `90m` (to the minute)."""
    minutes = int(_minutes(value).total_seconds() // 60)
    if minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def parse_plan(value: str) -> Plan | str:
    """A `Review:` value, or what is wrong with it."""
    m = REVIEW_RE.match(value.strip())
    target = parse_duration(m["target"]) if m else None
    if m is None or target is None:
        return (f"Review: {value!r} is not a target retention interval such as `30d` or `12h`, "
                "optionally followed by `, ratio 0.2`")
    ratio = float(m["ratio"]) if m["ratio"] else DEFAULT_RATIO
    if not 0 < ratio <= 1:
        return f"Review: ratio {m['ratio']} must be above 0 and at most 1 (the first gap as a fraction of the target)"
    return Plan(target, ratio)


def parse_reviewed(value: str, tz: tzinfo) -> Reviewed | str:
    """A `Reviewed:` value, or what is wrong with it."""
    m = REVIEWED_RE.match(value.strip())
    at = parse_when_value(m["at"], tz) if m else None
    interval = parse_duration(m["interval"]) if m else None
    if m is None or at is None or interval is None:
        return (f"Reviewed: {value!r} is not `<date-time> ok|failed, interval <duration>` "
                "(such as `2026-12-07T09:30+01:00 ok, interval 12d`)")
    return Reviewed(at, m["outcome"].lower(), interval)  # type: ignore[arg-type]


def format_plan(plan: Plan) -> str:
    ratio = f"{plan.ratio:g}"
    return f"Review: {format_duration(plan.target)}, ratio {ratio}"


def format_reviewed(review: Reviewed) -> str:
    at = review.at.replace(second=0, microsecond=0).isoformat(timespec="minutes")
    return f"Reviewed: {at} {review.outcome}, interval {format_duration(review.interval)}"


def next_interval(plan: Plan, previous: timedelta, outcome: Outcome) -> timedelta:
    """The gap after a review: a success lengthens it (×GROWTH), a failure shortens it
    (×SHRINK, so the entry comes back soon for relearning), always within `plan.bounds`."""
    lo, hi = plan.bounds
    grown = previous * (GROWTH if outcome == "ok" else SHRINK)
    return _minutes(min(max(grown, lo), hi))


@dataclass(frozen=True)
class Schedule:
    """Where an entry stands: its plan, its reviews (oldest first), the gap in force and when
    it is next due."""

    plan: Plan
    history: tuple[Reviewed, ...]
    interval: timedelta
    due: datetime

    @property
    def last_success(self) -> bool | None:
        return self.history[-1].outcome == "ok" if self.history else None


def schedule(plan: Plan, written: datetime, history: Iterable[Reviewed]) -> Schedule:
    """The schedule of an entry written at `written`: the first review is due one first gap
    after it; then each review sets the gap to the next (the latest review counts)."""
    done = tuple(sorted(history, key=lambda r: r.at))
    if not done:
        return Schedule(plan, done, plan.first, written + plan.first)
    last = done[-1]
    return Schedule(plan, done, last.interval, last.next)


def entry_schedule(event: Event, tz: tzinfo) -> Schedule | None:
    """The schedule of an entry with a readable `Review:` line (else None), from its metadata
    as parsed (`Event.meta`: every `Reviewed:` value, one per line). A line that does not read
    is left out here and reported by the parser (MV211)."""
    raw = event.meta.get("review")
    plan = parse_plan(raw) if raw is not None and event.timestamp is not None else None
    if not isinstance(plan, Plan) or event.timestamp is None:
        return None
    history = [parse_reviewed(v, tz) for v in event.meta.get("reviewed", "").split("\n") if v.strip()]
    return schedule(plan, event.timestamp, [r for r in history if isinstance(r, Reviewed)])


def _minutes(value: timedelta) -> timedelta:
    return timedelta(minutes=round(value.total_seconds() / 60))
