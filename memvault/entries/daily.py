"""The daily-log parser: a daily log's Markdown to events.

A daily log is a `# YYYY-MM-DD` title, `## HH:MM - Type` entries (each a body of Markdown
followed by optional `Key: value` metadata lines), and whatever else people and agents write:
every other section becomes a note (`memvault.entries.notes`). The parser is line based and
never raises on content: whatever is wrong becomes a `Problem` with the file and line, and the
rest of the file still parses. `docs/format.md` is the normative description of what is accepted.
"""

from __future__ import annotations

import re
from datetime import date, datetime, tzinfo
from typing import Any

from memvault.config.core import Config
from memvault.entries.front_matter import file_defaults, read_frontmatter
from memvault.entries.headings import ENTRY_RE, attempt, entry_kind, near_type, type_ends
from memvault.entries.markdown import (
    FENCE_RE,
    ParsedFile,
    block_ids,
    dedupe,
    inline_tags,
    wikilinks,
)
from memvault.entries.meta import META_KEYS, META_RE, Meta, trailing_meta
from memvault.entries.model import Event, Problem
from memvault.entries.naming import log_name, real_day, text_day
from memvault.entries.notes import Clock, NoteFile, Section, heading_when
from memvault.entries.timeparse import RANGE_TEXT
from memvault.textsafety import clean_invisible, has_invisible, invisible_in

__all__ = ["ENTRY_RE", "META_KEYS", "META_RE", "log_date", "parse_log", "scan", "scan_headings", "unclosed"]

# Dates and times in the format are ASCII digits (\d would take ١٥ or １５ too: docs/format.md).
LOG_NAME_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})\.md$")
# A name meant as a date (in any digits), for MV001 when it is not a real one.
DATE_SHAPED_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[-_ .].*)?\.md$")
# An ATX heading at the start of a line: its level and its text (linear: see markdown.TITLE_RE).
HEADING_RE = re.compile(r"^(#{1,6})(?:[ \t]++((?:.*[^ \t\n])?))?[ \t]*$")


def log_date(name: str) -> date | None:
    """The date a daily log's file name carries, or None when it is not `YYYY-MM-DD.md`."""
    m = LOG_NAME_RE.match(name)
    return real_day(m[1], m[2], m[3]) if m else None


Head = tuple[int, int, str]  # a heading line: its index, level and text


def parse_log(
    text: str,
    path: str,
    config: Config,
    *,
    file_date: date | None = None,
) -> ParsedFile:
    """Parse one daily log (any Markdown file of the logs). `path` is vault-relative.

    Its day comes from the file name (`memvault.entries.naming`), else front matter `date:`,
    else a title that starts with a date, else `file_date` (the layout's date for an undated
    file: its first commit or mtime)."""
    result = ParsedFile(path=path, kind="log")
    naming = log_name(path)
    problems = result.problems
    if naming.day is None and DATE_SHAPED_RE.match(name := path.rsplit("/", 1)[-1]):
        problems.append(Problem(
            path, 1, f"the file name {name!r} is not a real date (YYYY-MM-DD, from {RANGE_TEXT}); "
            "its text is read as notes dated otherwise", code="MV001"))
    lines = text.split("\n")
    fm, start = read_frontmatter(lines, path, problems)
    result.frontmatter = fm
    defaults = file_defaults(fm, path, problems)
    heads, in_fence, open_at = scan(lines, start)
    if open_at is not None:
        _hiding_fence(lines, open_at, path, config.types, problems)
    title = heads[0] if heads and heads[0][1] == 1 else None
    if title is not None:
        heads = heads[1:]
        result.title = title[2]
    day = naming.day or _fm_date(fm) or (text_day(title[2]) if title else None) or file_date
    result.date = day
    if title is not None and day is not None and (said := text_day(title[2])) is not None and said != day:
        problems.append(Problem(
            path, title[0] + 1, f"title '# {title[2]}' does not match the file's date {day.isoformat()}", "warning", "MV002"))
    matches = _entries(heads, path, config.types, problems, day is not None)
    note_lines, pre, head = lines, start, None
    if title is not None:
        if any(line.strip() for line in lines[start : title[0]]):
            note_lines = lines[: title[0]] + [""] + lines[title[0] + 1 :]  # the preamble is around it
        else:
            pre, head = title[0] + 1, title[0]
    notes = NoteFile(path, naming.key, day, config.tz, note_lines, in_fence, defaults, problems)
    typed = _EntryFile(path, day, naming.canonical, naming.key, config, defaults, problems, lines, in_fence)
    events = result.events
    # The preamble carries the file's title, so its words are searchable; a title of more than
    # a date is a note of its own even with nothing under it (`# 2026-03-02 - Zanzibar offsite`).
    named = title[2] if title is not None else ""
    events += notes.notes(Section(head, named, (), pre, heads[0][0] if heads else len(lines), None,
                                  has_words(named)))
    _walk(heads, matches, len(lines), notes, typed, events, naming.day)
    return result


def _entries(heads: list[Head], path: str, types: tuple[str, ...], problems: list[Problem],
             dated: bool) -> list[re.Match[str] | None]:
    """Per heading, the match of the entry it starts (level 2 only), else None."""
    out: list[re.Match[str] | None] = [None] * len(heads)
    for j, (i, level, text) in enumerate(heads):
        if level != 2:
            continue
        m = ENTRY_RE.match(text)
        # The common case in full (a known type standing alone, a real time, a dated file); the
        # rest says why not.
        if m is not None and dated and m["type"].lower() in types and type_ends(m["rest"]) and int(m["h"]) < 24 \
                and int(m["m"]) < 60 and (m["s"] is None or int(m["s"]) < 60):
            out[j] = m
        else:
            out[j] = _typed(text, path, i + 1, types, problems, dated=dated)
    return out


def _walk(heads: list[Head], matches: list[re.Match[str] | None], n: int, notes: NoteFile,
          typed: _EntryFile, events: list[Event], latest: date | None) -> None:
    """Entries and sections in file order: an entry owns its deeper headings; a section runs
    to the next heading and carries the path of the headings above it, and their day and
    time when they give one (`latest`: the day the file's name says, if any)."""
    stack: list[tuple[int, str, Clock | None, date | None]] = []  # open headings: level, text, time, day
    j, count = 0, len(heads)
    while j < count:
        index, level, text = heads[j]
        m = matches[j]
        if m is not None:
            k = j + 1
            while k < count and heads[k][1] > 2:
                k += 1
            events.append(typed.entry(m, index, heads[k][0] if k < count else n))
            if stack:
                while stack and stack[-1][0] >= 2:
                    stack.pop()
            j = k
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        text = unclosed(text)
        day, clock = heading_when(text, latest)
        if day is None and stack:  # no date of its own: the enclosing heading's day and time
            day, clock = stack[-1][3], clock or stack[-1][2]
        stack.append((level, text, clock, day))
        after = heads[j + 1] if j + 1 < count else None
        leaf = after is None or after[1] <= level or matches[j + 1] is not None
        section = Section(index, text, tuple(s[1] for s in stack), index + 1, after[0] if after else n, clock, leaf, day)
        events += notes.notes(section)
        j += 1


def unclosed(text: str) -> str:
    """A heading's text without its closing `#`s (`## Notes ##`), as Markdown reads it."""
    if not text.endswith("#"):
        return text
    bare = text.rstrip("#")
    return bare.rstrip(" \t") if not bare or bare[-1] in " \t" else text


def scan_headings(lines: list[str], start: int) -> tuple[list[Head], list[bool]]:
    """Every ATX heading outside fenced code, and which lines are fenced code."""
    heads, in_fence, _ = scan(lines, start)
    return heads, in_fence


def scan(lines: list[str], start: int) -> tuple[list[Head], list[bool], int | None]:
    """`scan_headings`, and the index of the line opening a fence never closed (None if all are)."""
    heads: list[Head] = []
    opened = 0
    fence: str | None = None
    in_fence: list[bool] = [False] * len(lines)
    heading = HEADING_RE.match
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
            h = heading(line)
            if h:
                marks, words = h.groups()
                heads.append((i, len(marks), words or ""))
            continue
        if first in ("`", "~", " ", "\t"):
            m = FENCE_RE.match(line)
            if m:
                fence, opened = m.group(1), i
                in_fence[i] = True
    return heads, in_fence, (opened if fence is not None else None)


def _hiding_fence(lines: list[str], at: int, path: str, types: tuple[str, ...], problems: list[Problem]) -> None:
    """MV018: a code fence left open to the end of the file that hides entry headings.

    Markdown reads every line after an unclosed fence as code, so a stray fence line above
    `## 09:30 - Correction` silently turns that entry and all below it into text of the entry
    above (and the beliefs they corrected come back to life). A fence that hides no entry
    heading is left alone: freeform notes end with code often enough."""
    hidden = []
    for i in range(at + 1, len(lines)):
        h = HEADING_RE.match(lines[i]) if lines[i].startswith("## ") else None
        m = ENTRY_RE.match(h[2] or "") if h and len(h[1]) == 2 else None
        if m is not None and m["type"].lower() in types and type_ends(m["rest"]):
            hidden.append(i)
    if hidden:
        fence = lines[at].strip()
        what = "1 entry heading" if len(hidden) == 1 else f"{len(hidden)} entry headings"
        problems.append(Problem(path, at + 1, (
            f"code fence '{fence[:20]}' is never closed: it hides {what} below it (the first: "
            f"'{lines[hidden[0]].strip()}' on line {hidden[0] + 1}), read as text of what comes before; "
            f"close the fence, or remove it if it was typed by mistake"), code="MV018"))


def has_words(title: str) -> bool:
    """True when a title says more than its date (`2026-02-01 - Config Session`, `Ideen`)."""
    rest = title[10:] if text_day(title) is not None else title
    return any(ch.isalnum() for ch in rest)


def _fm_date(fm: dict[str, Any]) -> date | None:
    value = fm.get("date")
    return text_day(value) if isinstance(value, str) else None


def _typed(
    heading: str, path: str, lineno: int, types: tuple[str, ...], problems: list[Problem], *, dated: bool,
) -> re.Match[str] | None:
    """The entry a `## ` heading starts (its match), or None for a section title; an attempt
    at an entry heading that fails is a problem, and its section is read as a note."""
    m = ENTRY_RE.match(heading) if heading[:1].isdigit() else None
    if (m is None or m["type"].lower() not in types) and has_invisible(heading):
        hidden = _hidden_heading(heading, path, lineno, problems, types, known_only=m is not None)
        m, heading = (hidden, hidden.string) if hidden is not None else (m, heading)
    if m is None:
        _attempt(heading, path, lineno, types, problems)
        return None
    hh, mm, ss = int(m["h"]), int(m["m"]), int(m["s"] or 0)
    if hh > 23 or mm > 59 or ss > 59:
        problems.append(Problem(path, lineno, f"invalid time {heading.split()[0]} in '## {heading}'; "
                                "its text is read as a note", code="MV004"))
        return None
    if entry_kind(m["type"], m["rest"], types) is None:  # a timed title: `## 14:00 - Standup with the team`
        _attempt(heading, path, lineno, types, problems)
        return None
    if not dated:  # a bad date in the name is already reported (line 1)
        if not DATE_SHAPED_RE.match(path.rsplit("/", 1)[-1]):
            problems.append(Problem(path, lineno, f"entry heading '## {heading}' in a file with no date (none in its "
                                    "name, front matter `date:` or title); its text is read as a note", "warning", "MV001"))
        return None
    return m


def _attempt(heading: str, path: str, lineno: int, types: tuple[str, ...], problems: list[Problem]) -> None:
    """MV003 for a `## ` heading that tries to be an entry heading (docs/format.md "Notes")."""
    clock = attempt(heading, types)
    if clock is None:
        return
    ascii_only = "" if clock.isascii() else "; write the time in ASCII digits 0-9"
    problems.append(Problem(path, lineno, f"malformed entry heading '## {heading}': expected '## HH:MM - Type'{ascii_only}; "
                            "its text is read as a note", code="MV003"))


class _EntryFile:
    """What building a file's typed entries needs, and the per-minute count behind `-2` ids."""

    def __init__(self, path: str, day: date | None, canonical: bool, key: str, config: Config,
                 defaults: dict[str, Any], problems: list[Problem], lines: list[str], in_fence: list[bool]):
        self.path, self.day, self.canonical, self.key = path, day, canonical, key
        self.tz: tzinfo = config.tz
        self.types = config.types
        self.defaults, self.problems, self.lines, self.in_fence = defaults, problems, lines, in_fence
        self.per_minute: dict[str, int] = {}
        self.prefix = f"{day.isoformat()}T" if canonical and day is not None else f"{key}@"

    def entry(self, m: re.Match[str], idx: int, end: int) -> Event:
        """The entry whose heading (matched by `m`) is line `idx`, running to line `end`."""
        lines, path, day = self.lines, self.path, self.day
        assert day is not None  # _typed reads no entry in an undated file
        heading = m.string
        lineno = idx + 1
        hh, mm, ss = int(m["h"]), int(m["m"]), int(m["s"] or 0)
        etype = m["type"].lower()
        if etype not in self.types:
            near = near_type(etype, self.types)
            hint = f"did you mean '{near.capitalize()}'? " if near else ""
            self.problems.append(Problem(
                path, lineno, f"unknown entry type '{m['type']}'; {hint}known: {', '.join(self.types)} "
                "(add more with [vault] extra_types)", code="MV005"))
        rest = m["rest"]
        title = rest.strip().lstrip("-\u2013\u2014:").strip() if rest else ""
        body_end = end
        while body_end > idx + 1 and not lines[body_end - 1].strip():
            body_end -= 1
        k, meta_lines = (trailing_meta(lines, self.in_fence, idx + 1, body_end)
                         if ":" in lines[body_end - 1] else (body_end, None))
        start = idx + 1
        while start < k and not lines[start].strip():
            start += 1
        while k > start and not lines[k - 1].strip():
            k -= 1
        content = "\n".join(lines[start:k])
        minute = f"{self.prefix}{hh:02d}:{mm:02d}"
        n = self.per_minute[minute] = self.per_minute.get(minute, 0) + 1
        values: dict[str, Any] = {}
        meta_tags: list[str] = []
        reconfirms: tuple[str, ...] = ()
        raw: dict[str, str] = {}
        if meta_lines:
            meta = Meta.read(meta_lines, path, self.tz, self.problems)
            values, meta_tags, reconfirms, raw = meta.values, meta.tags, tuple(meta.reconfirms), meta.raw
        explicit = values.get("id")
        defaults = self.defaults
        tags = defaults.get("tags", []) + meta_tags + inline_tags(content) if defaults or meta_tags or "#" in content else ()
        return Event(
            id=explicit or (minute if n == 1 else f"{minute}-{n}"),
            type=etype,
            timestamp=datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=self.tz),
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
            forgotten=values.get("forgotten"),
            scope=values.get("scope", defaults.get("scope")),
            supersedes=values.get("supersedes"),
            reconfirms=reconfirms,
            explicit_id=explicit is not None,
            meta=raw,
        )



def _hidden_heading(
    heading: str, path: str, lineno: int, problems: list[Problem], types: tuple[str, ...], *, known_only: bool,
) -> re.Match[str] | None:
    """An entry heading (of a known type, when `known_only`) but for invisible characters: read
    as the entry it looks like (so nothing is hidden, and its id does not change once `check
    --fix` removes them), and an error."""
    m = ENTRY_RE.match(clean_invisible(heading))
    if m is None:
        return None
    kind = entry_kind(m["type"], m["rest"], types)
    if kind is None or (known_only and kind != "entry"):
        return None
    problems.append(Problem(path, lineno, f"entry heading '## {m.string}' holds {', '.join(invisible_in(heading))}; "
                            "remove it (memvault check --fix)", code="MV017"))
    return m
