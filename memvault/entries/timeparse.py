"""Times as people type them: ISO dates and times, `yesterday 9am`, `3 days ago`.

A time without a zone means the vault's zone. A plain date means the start of that day for
`since`-like options and the end of it for `until`/`as of` ones (`day_end=True`).

Every time memvault reads, here or in a file, lies within `in_range`: a wall-clock time from
`EARLIEST` to `LATEST` that can be expressed in UTC and in the vault's zone. Python's datetime
stops at year 9999 and raises OverflowError on any step past it (a zone shift, the end of a day,
`99999 years ago`); the bounds leave a day for zone shifts at the top and centuries for look-backs
such as curate's at the bottom. A time given outside is a `TimeOutOfRange`.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from memvault.errors import InputError

EARLIEST = datetime(1000, 1, 1)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999)

AGO_RE = re.compile(
    r"^(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?|"
    r"d|days?|w|wks?|weeks?|months?|y|years?)\s+ago$"
)
DAYS_AGO_AT_RE = re.compile(r"^(?P<n>\d+)\s*(?P<unit>d|days?|w|wks?|weeks?)\s+ago\s+(?:at\s+)?(?P<clock>.+)$")
CLOCK_RE = re.compile(r"^(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?::(?P<s>\d{2}))?\s*(?P<ampm>am|pm)?$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}
DAY_WORDS = {"today": 0, "yesterday": -1, "tomorrow": 1}
# How far past "now" an entry's time may be before it counts as in the future (`check`'s MV016,
# `log`'s refusal): clocks of two machines writing one vault drift by seconds to minutes.
FUTURE_SLACK = timedelta(minutes=5)
MAX_AGO_DIGITS = 20  # `N units ago`: longer numbers are out of range anyway; int() of 4301+ digits raises


class TimeOutOfRange(InputError):
    """A time that reads fine but lies outside the years memvault can compute with."""


def in_range(value: datetime, tz: tzinfo) -> bool:
    """Whether memvault can compute with the aware time `value` in a vault whose zone is `tz`."""
    if not EARLIEST <= value.replace(tzinfo=None) <= LATEST:
        return False
    try:
        value.astimezone(UTC)
        value.astimezone(tz)
    except OverflowError:
        return False
    return True


def clock_gap(value: datetime) -> tuple[datetime, datetime] | None:
    """When `value`'s wall time does not exist in its zone (the clocks skip it: 02:30 on a
    spring-forward night), the skipped span as naive wall times (its first, and the first after
    it: 02:00, 03:00); else None. A wall time that happens twice is no gap (its first occurrence
    counts, as a heading without an offset reads)."""
    tz = value.tzinfo
    if tz is None or value.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == value.replace(tzinfo=None):
        return None
    lo, hi = sorted((value.replace(fold=0).astimezone(UTC), value.replace(fold=1).astimezone(UTC)))
    after = hi.astimezone(tz).utcoffset() or timedelta()
    while hi - lo > timedelta(seconds=1):  # the change lies between the two readings of the time
        mid = lo + (hi - lo) / 2
        lo, hi = (lo, mid) if mid.astimezone(tz).utcoffset() == after else (mid, hi)
    before = lo.astimezone(tz).utcoffset() or timedelta()
    return (hi + before).replace(tzinfo=None, microsecond=0), (hi + after).replace(tzinfo=None, microsecond=0)


def day_in_range(day: date) -> bool:
    return EARLIEST.date() <= day <= LATEST.date()


RANGE_TEXT = f"{EARLIEST.date()} to {LATEST.date()}"


def _out_of_range(raw: str) -> TimeOutOfRange:
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    return TimeOutOfRange(f"the time {shown!r} is out of range: times run from {RANGE_TEXT}")


def _unit(word: str) -> int:
    if word.startswith("mo"):
        return UNIT_SECONDS["mo"]
    if word in ("m", "min", "mins") or word.startswith("minute"):
        return UNIT_SECONDS["m"]
    return UNIT_SECONDS[word[0]]


def parse_clock(text: str) -> time | None:
    text = text.strip().lower()
    if text == "noon":
        return time(12)
    if text == "midnight":
        return time(0)
    m = CLOCK_RE.match(text)
    if not m:
        return None
    hour, minute, second = int(m["h"]), int(m["m"] or 0), int(m["s"] or 0)
    if m["ampm"]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m["ampm"] == "pm" else 0)
    elif m["m"] is None:
        return None  # a bare number is not a time
    if hour > 23 or minute > 59 or second > 59:
        return None
    return time(hour, minute, second)


def parse_time(text: str, tz: tzinfo, now: datetime | None = None, *, day_end: bool = False) -> datetime:
    """Parse `text` into an aware datetime; raise InputError naming what is accepted
    (TimeOutOfRange when it reads but is not `in_range`)."""
    try:
        value = _parse(text, tz, now, day_end)
    except OverflowError:  # arithmetic past year 1 or 9999
        raise _out_of_range(text) from None
    if not in_range(value, tz):
        raise _out_of_range(text)
    return value


def _parse(raw: str, tz: tzinfo, now: datetime | None, day_end: bool) -> datetime:
    text = " ".join(raw.strip().lower().split())
    now = (now or datetime.now(tz)).astimezone(tz)
    if not text:
        raise InputError("empty time")
    if text == "now":
        return now
    m = AGO_RE.match(text)
    if m:
        if len(m["n"].partition(".")[0]) > MAX_AGO_DIGITS:
            raise _out_of_range(raw)
        return now - timedelta(seconds=float(m["n"]) * _unit(m["unit"]))
    m = DAYS_AGO_AT_RE.match(text)
    if m:  # "3 days ago 14:30": a time of day on that calendar day, like "yesterday 9am"
        clock = parse_clock(m["clock"])
        if clock is None:
            raise InputError(f"cannot read the time of day in {raw!r}")
        if len(m["n"]) > MAX_AGO_DIGITS:
            raise _out_of_range(raw)
        days = int(m["n"]) * (7 if m["unit"].startswith("w") else 1)
        return datetime.combine(now.date() - timedelta(days=days), clock, tz)
    word, _, rest = text.partition(" ")
    if word in DAY_WORDS:
        day = now.date() + timedelta(days=DAY_WORDS[word])
        if not rest:
            return _day_edge(day, tz, day_end)
        clock = parse_clock(rest)
        if clock is None:
            raise InputError(f"cannot read the time of day in {raw!r}")
        return datetime.combine(day, clock, tz)
    clock = parse_clock(text)
    if clock is not None:
        return datetime.combine(now.date(), clock, tz)
    iso = _parse_iso(text, tz, day_end)
    if iso is not None:
        return iso
    raise InputError(
        f"cannot read the time {raw!r}; use an ISO date or time (2026-02-21, 2026-02-21 09:15, "
        "2026-02-21T09:15+01:00), 'now', 'today', 'yesterday 9am', 'tomorrow noon', '3 days ago', "
        "'2 hours ago', '3 days ago 14:30', '14:30' or '9am'"
    )


def _day_edge(day: date, tz: tzinfo, day_end: bool) -> datetime:
    if day_end:
        return datetime.combine(day + timedelta(days=1), time(0), tz) - timedelta(microseconds=1)
    return datetime.combine(day, time(0), tz)


def _parse_iso(text: str, tz: tzinfo, day_end: bool) -> datetime | None:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return _day_edge(date.fromisoformat(text), tz, day_end)
        except ValueError:
            return None
    candidate = text.upper().replace(" ", "T", 1)
    try:
        parsed = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)


def check_window(since: datetime | None, until: datetime | None, *, since_text: str | None = None,
                 until_text: str | None = None, until_name: str = "--until") -> None:
    """Refuse a window whose end is before its start (InputError, a usage error): every command
    with --since/--until calls this, so `--since 2026-11-28 --until 2026-11-26` is not a
    silently empty answer. The message names both times as typed and as read."""
    if since is None or until is None or until >= since:
        return

    def shown(text: str | None, at: datetime) -> str:
        read = at.isoformat(timespec="minutes")
        return f"{text!r} ({read})" if text and text != read else read

    raise InputError(f"{until_name} {shown(until_text, until)} is before --since {shown(since_text, since)}: "
                     "the window ends before it starts")
