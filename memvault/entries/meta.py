"""`Key: value` metadata lines at the end of a daily-log entry or note, read into values.

Only the keys in `META_KEYS` are metadata, and only in the trailing block of lines (blank
lines between them allowed, none inside fenced code), so prose such as `Note: …` stays prose.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, tzinfo
from typing import Any

from memvault.entries.model import Problem
from memvault.entries.spaced import parse_plan, parse_reviewed
from memvault.entries.timeparse import RANGE_TEXT
from memvault.entries.values import SCORES, parse_when_value, split_tags
from memvault.textsafety import clean_invisible, invisible_in

META_KEYS = (
    "id", "supersedes", "reconfirms", "confidence", "tags",
    "source", "importance", "expires", "scope", "review", "reviewed",
    "forgotten", "agent-id", "user-id", "metadata", "conflict",
)  # fmt: skip
REPEATABLE = ("tags", "reconfirms", "reviewed")  # lines that add up; any other key given twice: the last wins
# `Review:` and `Reviewed:` are common words in prose ("Review: PR #42 merged"): they are metadata
# only when the value starts with a digit, as a duration or a date does, so such a line at the end
# of an entry or a freeform note stays searchable text instead of becoming an MV211 error.
# The same for `Forgotten:` (a tombstone starts with its time) and `Metadata:` (a JSON object,
# so its value starts with `{`): "Forgotten: my keys" at the end of an entry stays its text.
META_RE = re.compile(
    r"^(?!(?:review(?:ed)?|forgotten)[ \t]*+:[ \t]*+(?![0-9]))(?!metadata[ \t]*+:[ \t]*+(?!\{))"
    r"(?P<key>" + "|".join(META_KEYS) + r")[ \t]*:[ \t]*+(?P<value>(?:.*[^ \t\n])?)[ \t]*$", re.IGNORECASE
)


def trailing_meta(lines: list[str], in_fence: list[bool], first: int, end: int) -> tuple[int, list[tuple[str, str, int]]]:
    """The metadata block ending at `end` (exclusive, trailing blanks already dropped) that
    starts after `first`: (index of its first line, or `end` without one; the lines as
    (key, value, 1-based line), last first)."""
    k = end
    found: list[tuple[str, str, int]] = []
    while k > first:
        line = lines[k - 1]
        if not line.strip():
            k -= 1
            continue
        if in_fence[k - 1] or ":" not in line:
            break
        m = META_RE.match(line)
        if m is None:
            break
        found.append((m["key"], m["value"], k))
        k -= 1
    return k, found


class Meta:
    """Collects an entry's metadata lines into values, reporting bad ones."""

    def __init__(self, path: str, tz: tzinfo, problems: list[Problem]):
        self.path, self.tz, self.problems = path, tz, problems
        self.values: dict[str, Any] = {}
        self.reconfirms: list[str] = []
        self.tags: list[str] = []
        self.raw: dict[str, str] = {}

    @classmethod
    def read(cls, found: list[tuple[str, str, int]], path: str, tz: tzinfo, problems: list[Problem]) -> Meta:
        """The block `trailing_meta` found (last line first), read in file order."""
        meta = cls(path, tz, problems)
        for key, value, line in reversed(found):
            meta.add(key, value, line)
        return meta

    def add(self, key: str, value: str, line: int) -> None:
        key = key.lower()
        before = self.raw.get(key)
        # `Reviewed:` repeats (one line per review): its raw value keeps every line, in file order
        # (a value is one line, so the newline cannot be part of one); `spaced.entry_schedule` reads them.
        self.raw[key] = f"{self.raw[key]}\n{value}" if key == "reviewed" and key in self.raw else value
        if key == "tags":
            self.tags.extend(split_tags(value))
            return
        if key == "reconfirms":
            if value:
                self.reconfirms.append(value)
            return
        if not value:
            self._bad(line, f"{key.capitalize()}: has no value", "MV205")
            return
        if key == "supersedes" and key in self.values and not _same(before or "", value):
            # The last one winning would silently make the first one's target live again.
            self._bad(line, f"Supersedes: given twice naming different entries ({before!r}, then {value!r}); "
                      "an entry supersedes one entry: keep one line, or write the second as its own entry", "MV212")
        elif key in self.values and key not in REPEATABLE:
            self._bad(line, f"{key.capitalize()}: given twice in one entry; the last one wins", "MV206", "warning")
        parsed = self._convert(key, value, line)
        if parsed is not None:
            self.values[key] = parsed

    def _convert(self, key: str, value: str, line: int) -> Any:
        score = SCORES.get(key)
        if score is not None:
            number = score.read(value)
            if number is None:
                self._bad(line, score.problem(key, value), score.code)
            return number
        if key == "expires":
            when = parse_when_value(value, self.tz)
            if when is None:
                self._bad(line, f"Expires: {value!r} is not an ISO date or date-time from {RANGE_TEXT}", "MV204")
            return when
        if key == "forgotten":
            when, _ = split_forgotten(value, self.tz)
            if when is None:
                self._bad(line, f"Forgotten: {value!r} is not an ISO date-time (optionally followed by ', reason')",
                          "MV220")
            return when
        if key == "metadata":
            if not isinstance(read_metadata(value), dict):
                self._bad(line, f"Metadata: {value[:60]!r} is not a JSON object on one line", "MV221")
                return None
            return value
        if key == "conflict":  # written by a merge (sync/merge.py): the person has a look
            self._bad(line, f"Conflict: {value} (a merge of two machines' changes; docs/sync.md)", "MV023", "warning")
            return value
        if key in ("review", "reviewed"):
            read = parse_plan(value) if key == "review" else parse_reviewed(value, self.tz)
            if isinstance(read, str):
                self._bad(line, read, "MV211")
                return None
            return read
        if key == "id" and invisible_in(value):
            self._bad(line, f"Id: {clean_invisible(value)!r} holds {', '.join(invisible_in(value))}; "
                      "the id is ignored (memvault check --fix removes them)", "MV017")
            return None
        if key == "id" and any(ch.isspace() for ch in value):
            self._bad(line, f"Id: {value!r} must be a single token without spaces", "MV207")
            return None
        return value

    def _bad(self, line: int, message: str, code: str, severity: str = "error") -> None:
        self.problems.append(Problem(self.path, line, message, severity, code))  # type: ignore[arg-type]


def split_forgotten(value: str, tz: tzinfo) -> tuple[datetime | None, str]:
    """A `Forgotten:` value: (its time, the reason after the first comma, "" without one)."""
    when, _, reason = value.partition(",")
    return parse_when_value(when.strip(), tz), reason.strip()


def read_metadata(value: str) -> Any:
    """A `Metadata:` value: the JSON it holds, or None when it is none."""
    try:
        return json.loads(value)
    except ValueError:
        return None


def _same(first: str, second: str) -> bool:
    """Whether two reference values are written alike (spacing aside): two lines written alike
    name one entry; written differently they may name two (an error, MV212)."""
    return first.split() == second.split()
