"""Markdown to memory events: daily logs (`memory/YYYY-MM-DD.md`) and curated `MEMORY.md`.

The parser is line based and never raises on content: whatever is wrong becomes a
`Problem` with the file and line, and the rest of the file still parses. `docs/format.md`
is the normative description of what is accepted here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, tzinfo
from typing import Any

from memvault.config.core import Config
from memvault.entries.codespans import blank_code_spans
from memvault.entries.model import Event, Problem
from memvault.entries.timeparse import RANGE_TEXT, day_in_range, in_range
from memvault.textsafety import clean_invisible, has_invisible, invisible_in

# Dates and times in the format are ASCII digits (\d would take ١٥ or １５ too: docs/format.md).
LOG_NAME_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})\.md$")
DATE_SHAPED_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
# Linear on any line (see tests/test_hostile_inputs.py): the text is `((?:.*[^ \t\n])?)[ \t]*$`, not
# `(.*?)[ \t]*$`, which re-scanned a run of blanks inside the line from each of its positions
# (20,000 spaces took 2.5 s); blanks before a part that may start with blanks are possessive (`++`).
TITLE_RE = re.compile(r"^#[ \t]++((?:.*[^ \t\n])?)[ \t]*$")
H2_RE = re.compile(r"^##[ \t]++((?:.*[^ \t\n])?)[ \t]*$")
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
FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# A scheme is tried only where a run of scheme characters starts (the lookbehind): tried at every
# position, a long run such as a hex dump was rescanned from each one, quadratic in its length.
URL_RE = re.compile(r"(?:(?<![a-zA-Z0-9+.-])[0-9+.-]*[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)\S+")
TAG_RE = re.compile(r"(?:(?<=[\s(,;])|^)#([^\W\d_][\w/-]*|\d+[^\W\d][\w/-]*)", re.MULTILINE)
WIKILINK_RE = re.compile(r"!?\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")
BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$", re.MULTILINE)
BULLET_RE = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]++(?P<text>.*))?$")
# Blanks before a part that may itself hold blanks are possessive (`*+`), and `was` ends at the
# `)` itself: re-splitting a run of blanks between the two at every backtrack was quadratic.
ANNOTATION_RE = re.compile(
    r"\((?P<kind>updated|added|since)[ \t]+(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[ \t]*,[ \t]*was:[ \t]*+(?P<was>[^()]*(?:\([^()]*\)[^()]*)*?)|[ \t]*)\)",
    re.IGNORECASE,
)
SOURCE_ANN_RE = re.compile(r"\(sources?:[ \t]*+(?P<refs>[^()]*?)\)", re.IGNORECASE)
IMPORTANCE_WORDS = {"high": 0.9, "medium": 0.5, "low": 0.2}


@dataclass
class ParsedFile:
    """What one Markdown file contributed: events, problems and its frontmatter."""

    path: str
    kind: str
    date: date | None = None
    title: str | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


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


def _frontmatter(
    lines: list[str], path: str, problems: list[Problem]
) -> tuple[dict[str, Any], int]:
    """Parse a leading `---` block; return (data, index of the first body line)."""
    if not lines or lines[0].rstrip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        problems.append(Problem(path, 1, "frontmatter block is not closed with '---'", code="MV101"))
        return {}, 0
    block = "\n".join(lines[1:end])
    if not block.strip():
        return {}, end + 1
    from memvault.entries.yamlsafe import (  # lazily: yaml costs start-up time
        FrontmatterError,
        load_frontmatter,
    )

    try:
        data = load_frontmatter(block)
    except FrontmatterError as exc:
        problems.append(Problem(path, exc.line + 2, f"frontmatter {exc.reason}", code="MV101"))
        return {}, end + 1
    if not isinstance(data, dict):
        problems.append(Problem(path, 1, "frontmatter must be a mapping of keys to values", code="MV101"))
        return {}, end + 1
    return {str(k).lower(): _plain(v) for k, v in data.items()}, end + 1


def _plain(value: Any) -> Any:
    """YAML turns `2026-02-21` into a date: give back ISO strings so data stays JSON-able."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if value is None or isinstance(value, str | int | float) else str(value)  # !!binary, !!set


def split_tags(value: Any) -> list[str]:
    if isinstance(value, list):
        parts = [str(v) for v in value]
    else:
        parts = re.split(r"[,\s]+", str(value or ""))
    return [p.strip().lstrip("#").lower() for p in parts if p.strip().lstrip("#")]


def inline_tags(text: str) -> list[str]:
    """`#tags` in running text; not inside code, not URL fragments, not headings."""
    if "#" not in text:
        return []
    text = strip_code(text)
    text = URL_RE.sub(" ", text)
    return [t.lower().rstrip("/-") for t in TAG_RE.findall(text)]


def strip_code(text: str) -> str:
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = FENCE_RE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        out.append(line)
    return blank_code_spans("\n".join(out))


def wikilinks(text: str) -> list[str]:
    return [m.strip() for m in WIKILINK_RE.findall(text)] if "[[" in text else []


def block_ids(text: str) -> list[str]:
    return BLOCK_ID_RE.findall(text) if "^" in text else []


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


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
        if key == "confidence":
            number = parse_confidence(value)
            if number is None:
                self._bad(line, f"Confidence: {value!r} is not a number between 0 and 1", "MV202")
            return number
        if key == "importance":
            number = parse_importance(value)
            if number is None:
                self._bad(line, f"Importance: {value!r} is not high, medium, low or 0-1", "MV203")
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
    fm, start = _frontmatter(lines, path, result.problems)
    result.frontmatter = fm
    defaults = _file_defaults(fm, path, tz, result.problems)

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


def _file_defaults(fm: dict[str, Any], path: str, tz: tzinfo, problems: list[Problem]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "tags" in fm:
        out["tags"] = split_tags(fm["tags"])
    for key in ("source", "scope"):
        if fm.get(key) not in (None, ""):
            out[key] = str(fm[key])
    if "confidence" in fm:
        number = parse_confidence(str(fm["confidence"]))
        if number is None:
            problems.append(Problem(path, 1, f"frontmatter confidence {fm['confidence']!r} is not in 0-1", code="MV202"))
        else:
            out["confidence"] = number
    if "importance" in fm:
        number = parse_importance(str(fm["importance"]))
        if number is None:
            problems.append(Problem(path, 1, f"frontmatter importance {fm['importance']!r} is not high, medium, low or 0-1", code="MV203"))
        else:
            out["importance"] = number
    return out


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
        tags=_dedupe(tags) if tags else (),
        links=_dedupe(wikilinks(content)) if "[[" in content else (),
        block_ids=_dedupe(block_ids(content)) if "^" in content else (),
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


# ---------------------------------------------------------------------------- MEMORY.md


def slug(text: str, words: int = 6) -> str:
    tokens = re.findall(r"[^\W_]+", text.lower())
    return "-".join(tokens[:words]) or "entry"


def section_type(section: str, config: Config) -> str:
    """Type of the bullets in a MEMORY.md section: config mapping, then the section's name."""
    key = section.strip().lower()
    if key in config.memory_sections:
        return config.memory_sections[key]
    if "decision" in key:
        return "decision"
    if "observation" in key:
        return "observation"
    return "belief"


def parse_memory(text: str, path: str, config: Config) -> ParsedFile:
    """Parse curated memory: each top-level bullet under a `## Section` is one entry."""
    result = ParsedFile(path=path, kind="curated")
    lines = text.split("\n")
    fm, start = _frontmatter(lines, path, result.problems)
    result.frontmatter = fm
    section: str | None = None
    items: list[tuple[int, int, str | None]] = []  # (first line idx, last line idx, section)
    fence: str | None = None
    current: list[int] | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = FENCE_RE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0]:
                fence = None
            if current is not None:
                current[1] = i
            continue
        if m:
            fence = m.group(1)
        if line.startswith("#"):
            current = None
            h2 = H2_RE.match(line)
            if h2:
                section = h2.group(1)
            elif TITLE_RE.match(line) and result.title is None:
                result.title = TITLE_RE.match(line).group(1)  # type: ignore[union-attr]
            continue
        bullet = BULLET_RE.match(line)
        if bullet and not bullet["indent"]:
            current = [i, i]
            items.append((i, i, section))
            items[-1] = (i, i, section)
            current_idx = len(items) - 1
            continue
        if current is not None:
            if line.strip() and (line[:1] in (" ", "\t") or bullet):
                current[1] = i
                items[current_idx] = (current[0], i, items[current_idx][2])
            elif line.strip():
                current = None
    seen: dict[str, int] = {}
    for first, last, sect in items:
        event = _curated(lines, first, last, sect, path, config, seen, result.problems)
        if event is not None:
            result.events.append(event)
    return result


def _curated(
    lines: list[str], first: int, last: int, section: str | None, path: str, config: Config,
    seen: dict[str, int], problems: list[Problem],
) -> Event | None:
    raw = "\n".join(lines[first : last + 1])
    m = BULLET_RE.match(lines[first])
    text = (m["text"] if m else "") or ""
    rest = lines[first + 1 : last + 1]
    body = "\n".join([text] + [r for r in rest])
    if not body.strip():
        return None
    ids = block_ids(lines[first]) or block_ids(raw)
    tz = config.tz
    updated: datetime | None = None
    added: datetime | None = None
    previous: str | None = None
    for ann in ANNOTATION_RE.finditer(text):
        try:
            day = date.fromisoformat(ann["date"])
        except ValueError:
            day = None
        if day is None or not day_in_range(day):
            problems.append(Problem(path, first + 1, f"bad date {ann['date']!r} in annotation", code="MV301"))
            continue
        when = datetime.combine(day, time(0), tz)
        if ann["kind"].lower() == "updated":
            updated, previous = when, (ann["was"] or "").strip() or None
        else:
            added = when
    sources: list[str] = []
    for ann in SOURCE_ANN_RE.finditer(body):
        sources.extend(wikilinks(ann["refs"]) or [r.strip() for r in ann["refs"].split(",") if r.strip()])
    content = ANNOTATION_RE.sub("", text)
    content = SOURCE_ANN_RE.sub("", content)
    content = BLOCK_ID_RE.sub("", content).strip()
    extra = [r for r in rest if r.strip()]
    if extra:
        content = "\n".join([content] + [BLOCK_ID_RE.sub("", r).rstrip() for r in extra])
    sect = section or ""
    if ids:
        event_id = ids[0]
    else:
        base = f"M:{slug(sect, 4)}:{slug(content)}"
        n = seen.get(base, 0) + 1
        seen[base] = n
        event_id = base if n == 1 else f"{base}-{n}"
    timestamp = added or updated
    return Event(
        id=event_id,
        type=section_type(sect, config),
        timestamp=timestamp,
        content=content,
        file=path,
        line=first + 1,
        end_line=last + 1,
        kind="curated",
        title=sect,
        heading=sect,
        tags=_dedupe(inline_tags(content)),
        links=_dedupe([lk for lk in wikilinks(body) if lk not in sources]),
        block_ids=_dedupe(ids),
        category=section,
        updated=updated,
        previous=previous,
        sources=_dedupe(sources),
        explicit_id=bool(ids),
    )


def midnight(day: date, tz: tzinfo) -> datetime:
    return datetime.combine(day, time(0), tz)
