"""Metadata values as written (`Confidence: 80%`, `Importance: high`, `Expires: 2026-03-01`,
`Tags: a, #b`), for an entry's metadata lines and a file's front matter alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, tzinfo
from typing import Any

from memvault.entries.timeparse import in_range

IMPORTANCE_WORDS = {"high": 0.9, "medium": 0.5, "low": 0.2}


def split_tags(value: Any) -> list[str]:
    if isinstance(value, list):
        parts = [str(v) for v in value]
    else:
        parts = re.split(r"[,\s]+", str(value or ""))
    return [p.strip().lstrip("#").lower() for p in parts if p.strip().lstrip("#")]


def parse_when_value(value: str, tz: tzinfo) -> datetime | None:
    """An `Expires:` style value: ISO date (start of that day) or date and time."""
    value = value.strip()
    try:
        if len(value) == 10:
            parsed = datetime.combine(date.fromisoformat(value), time(0), tz)
        else:
            parsed = datetime.fromisoformat(value.replace(" ", "T", 1))
    except ValueError:
        return None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)
    return parsed if in_range(parsed, tz) else None


def parse_confidence(value: str) -> float | None:
    value = value.strip()
    try:
        number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return None
    return number if 0.0 <= number <= 1.0 else None


def parse_importance(value: str) -> float | None:
    word = value.strip().lower()
    if word in IMPORTANCE_WORDS:
        return IMPORTANCE_WORDS[word]
    return parse_confidence(word)


@dataclass(frozen=True)
class Score:
    """A 0-1 value an entry or a whole file can set: how it reads and what a bad one is."""

    read: Callable[[str], float | None]
    code: str
    expected: str

    def problem(self, key: str, value: Any) -> str:
        return f"{key.capitalize()}: {value!r} is not {self.expected}"


SCORES = {
    "confidence": Score(parse_confidence, "MV202", "a number between 0 and 1"),
    "importance": Score(parse_importance, "MV203", "high, medium, low or 0-1"),
}
