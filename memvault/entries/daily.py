"""The daily-log parser: `memory/YYYY-MM-DD.md` to events.

A daily log is a `# YYYY-MM-DD` title and `## HH:MM - Type` entries, each a body of Markdown
followed by optional `Key: value` metadata lines. The parser is line based and never raises
on content: whatever is wrong becomes a `Problem` with the file and line, and the rest of the
file still parses. `docs/format.md` is the normative description of what is accepted.
"""

from __future__ import annotations

import re
from datetime import date, datetime, tzinfo
from typing import Any

from memvault.config.core import Config
from memvault.entries.front_matter import file_defaults, read_frontmatter
from memvault.entries.markdown import (
    FENCE_RE,
    H2_RE,
    TITLE_RE,
    ParsedFile,
    block_ids,
    dedupe,
    inline_tags,
    wikilinks,
)
from memvault.entries.model import Event, Problem
from memvault.entries.timeparse import RANGE_TEXT, day_in_range
from memvault.entries.values import SCORES, parse_when_value, split_tags
from memvault.textsafety import clean_invisible, has_invisible, invisible_in

# Dates and times in the format are ASCII digits (\d would take ١٥ or １５ too: docs/format.md).
LOG_NAME_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})\.md$")
DATE_SHAPED_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
ENTRY_RE = re.compile(
    r"^(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?[ \t]*[-\u2013\u2014][ \t]*"
    r"(?P<type>[A-Za-z][\w-]*)(?P<rest>.*)$"
)
LOOKS_TIMED_RE = re.compile(r"^\d{1,2}[:.]\d{2}")
META_KEYS = (
    "id", "supersedes", "reconfirms", "confidence", "tags",
    "source", "importance", "expires", "scope",
)  # fmt: skip
META_RE = re.compile(
    r"^(?P<key>" + "|".join(META_KEYS) + r")[ \t]*:[ \t]*+(?P<value>(?:.*[^ \t\n])?)[ \t]*$", re.IGNORECASE
)


def log_date(name: str) -> date | None:
    """The date a daily log's file name carries, or None when it is not `YYYY-MM-DD.md`."""
    m = LOG_NAME_RE.match(name)
    if not m:
        return None
    try:
        day = date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None
    return day if day_in_range(day) else None


class _Meta:
    """Collects an entry's metadata lines into values, reporting bad ones."""

    def __init__(self, path: str, tz: tzinfo, problems: list[Problem]):
        self.path, self.tz, self.problems = path, tz, problems
        self.values: dict[str, Any] = {}
        self.reconfirms: list[str] = []
        self.tags: list[str] = []
        self.raw: dict[str, str] = {}

    def add(self, key: str, value: str, line: int) -> None:
        key = key.lower()
        self.raw[key] = value
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
        if key in self.values:
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


def parse_log(
    text: str,
    path: str,
    config: Config,
    *,
    file_date: date | None = None,
) -> ParsedFile:
    """Parse one daily log. `path` is vault-relative; its name gives the date."""
    result = ParsedFile(path=path, kind="log")
    name = path.rsplit("/", 1)[-1]
    day = file_date or log_date(name)
    if day is None:
        result.problems.append(
            Problem(path, 1, f"not a daily log: the file name must be a real date, YYYY-MM-DD.md, from {RANGE_TEXT}; skipped",
                    "warning" if not DATE_SHAPED_RE.match(name) else "error", "MV001")
        )
        return result
    result.date = day
    tz = config.tz
    types = config.types
    lines = text.split("\n")
    fm, start = read_frontmatter(lines, path, result.problems)
    result.frontmatter = fm
    defaults = file_defaults(fm, path, result.problems)

    sections: list[tuple[int, str, int]] = []  # (heading index, heading text, end index)
    fence: str | None = None
    in_fence: list[bool] = [False] * len(lines)
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is not None:
            in_fence[i] = True
            m = FENCE_RE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        first = line[:1]
        if first == "#":
            m2 = H2_RE.match(line)
            if m2:
                if sections:
                    sections[-1] = (sections[-1][0], sections[-1][1], i)
                sections.append((i, m2.group(1), len(lines)))
                continue
            if not sections and result.title is None:
                m1 = TITLE_RE.match(line)
                if m1:
                    result.title = m1.group(1)
                    if m1.group(1) != day.isoformat():
                        result.problems.append(Problem(
                            path, i + 1, f"title '# {m1.group(1)}' does not match the file's date {day.isoformat()}",
                            "warning", "MV002"))
            continue
        if first in ("`", "~", " ", "\t"):
            m = FENCE_RE.match(line)
            if m:
                fence = m.group(1)
                in_fence[i] = True

    per_minute: dict[str, int] = {}
    for idx, heading, end in sections:
        event = _entry(lines, in_fence, idx, heading, end, path, day, tz, types, defaults, per_minute, result.problems)
        if event is not None:
            result.events.append(event)
    return result


def _entry(
    lines: list[str],
    in_fence: list[bool],
    idx: int,
    heading: str,
    end: int,
    path: str,
    day: date,
    tz: tzinfo,
    types: tuple[str, ...],
    defaults: dict[str, Any],
    per_minute: dict[str, int],
    problems: list[Problem],
) -> Event | None:
    lineno = idx + 1
    m = ENTRY_RE.match(heading)
    if m is None or (m["type"].lower() not in types and has_invisible(heading)):
        hidden = _hidden_heading(heading, path, lineno, problems, types if m is not None else None)
        m, heading = (hidden, hidden.string) if hidden is not None else (m, heading)
    if m is None:
        _bad_heading(heading, path, lineno, problems)
        return None
    hh, mm, ss = int(m["h"]), int(m["m"]), int(m["s"] or 0)
    if hh > 23 or mm > 59 or ss > 59:
        problems.append(Problem(path, lineno, f"invalid time {heading.split()[0]} in '## {heading}'", code="MV004"))
        return None
    etype = m["type"].lower()
    if etype not in types:
        problems.append(Problem(
            path, lineno, f"unknown entry type '{m['type']}'; known: {', '.join(types)} (add more with [vault] extra_types)",
            code="MV005"))
    rest = m["rest"]
    title = rest.strip().lstrip("-\u2013\u2014:").strip() if rest else ""

    body_end = end
    while body_end > idx + 1 and not lines[body_end - 1].strip():
        body_end -= 1
    k = body_end
    meta_lines: list[tuple[str, str, int]] = []
    while k > idx + 1:
        line = lines[k - 1]
        if not line.strip():
            k -= 1
            continue
        if in_fence[k - 1] or ":" not in line:
            break
        found = META_RE.match(line)
        if found is None:
            break
        meta_lines.append((found["key"], found["value"], k))
        k -= 1
    start = idx + 1
    while start < k and not lines[start].strip():
        start += 1
    while k > start and not lines[k - 1].strip():
        k -= 1
    content = "\n".join(lines[start:k])

    minute = f"{day.isoformat()}T{hh:02d}:{mm:02d}"
    n = per_minute.get(minute, 0) + 1
    per_minute[minute] = n
    values: dict[str, Any] = {}
    meta_tags: list[str] = []
    reconfirms: tuple[str, ...] = ()
    raw: dict[str, str] = {}
    if meta_lines:
        meta = _Meta(path, tz, problems)
        for key, value, ln in reversed(meta_lines):
            meta.add(key, value, ln)
        values, meta_tags, reconfirms, raw = meta.values, meta.tags, tuple(meta.reconfirms), meta.raw
    explicit = values.get("id")
    tags = defaults.get("tags", []) + meta_tags + inline_tags(content) if defaults or meta_tags or "#" in content else ()
    return Event(
        id=explicit or (minute if n == 1 else f"{minute}-{n}"),
        type=etype,
        timestamp=datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=tz),
        content=content,
        file=path,
        line=lineno,
        end_line=max(body_end, lineno),
        title=title,
        heading=heading,
        confidence0=values.get("confidence", defaults.get("confidence", 1.0)),
        tags=dedupe(tags) if tags else (),
        links=dedupe(wikilinks(content)) if "[[" in content else (),
        block_ids=dedupe(block_ids(content)) if "^" in content else (),
        source=values.get("source", defaults.get("source")),
        importance=values.get("importance", defaults.get("importance")),
        expires=values.get("expires"),
        scope=values.get("scope", defaults.get("scope")),
        supersedes=values.get("supersedes"),
        reconfirms=reconfirms,
        explicit_id=explicit is not None,
        meta=raw,
    )


def _hidden_heading(
    heading: str, path: str, lineno: int, problems: list[Problem], types: tuple[str, ...] | None,
) -> re.Match[str] | None:
    """An entry heading (of a known type, when `types`) but for invisible characters: read as
    the entry it looks like (so nothing is hidden, and its id does not change once `check
    --fix` removes them), and an error."""
    m = ENTRY_RE.match(clean_invisible(heading))
    if m is not None and types is not None and m["type"].lower() not in types:
        return None
    if m is not None:
        problems.append(Problem(path, lineno, f"entry heading '## {m.string}' holds {', '.join(invisible_in(heading))}; "
                                "remove it (memvault check --fix)", code="MV017"))
    return m


def _bad_heading(heading: str, path: str, lineno: int, problems: list[Problem]) -> None:
    if LOOKS_TIMED_RE.match(heading):
        ascii_only = "" if heading.split()[0].isascii() else "; write the time in ASCII digits 0-9"
        problems.append(Problem(path, lineno, f"malformed entry heading '## {heading}': expected '## HH:MM - Type'{ascii_only}",
                                code="MV003"))
    else:
        problems.append(Problem(path, lineno, f"'## {heading}' is not an entry heading ('## HH:MM - Type'); its text is not an entry", "warning", "MV003"))
