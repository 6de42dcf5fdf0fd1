"""Notes: the freeform sections of a daily log, read as `note` events.

Whatever a daily log holds outside its `## HH:MM - Type` entries is memory too: a heading's
section (to the next heading), the preamble before the first heading. Each becomes one note,
or several: a section whose top-level list items start with a time (`- 14:30 did X`) is split
at those items, each dated at its time; a part longer than `BOUND` characters is split along
its own blocks (list items, paragraphs, fenced code kept whole). Every note keeps its heading
path. Ids are derived from the file's key, the slugs of the heading path and the position
among equal paths, so they survive edits elsewhere. `docs/format.md` ("Notes") is normative.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from functools import lru_cache
from typing import Any

from memvault.entries.markdown import BULLET_RE, FENCE_RE, block_ids, dedupe, inline_tags, wikilinks
from memvault.entries.meta import Meta, trailing_meta
from memvault.entries.model import NOTE, Event, Problem
from memvault.entries.naming import real_day

# A note's text is split into parts of at most about this many characters (a paragraph, a few
# list items: ~100 tokens), measured on LoCoMo as freeform logs (docs/decisions.md): R@10 0.596
# at 1,200, 0.664 at 600, 0.703 at 400, 0.713 at 300, against 0.697 for one typed entry per turn.
BOUND = 400

Clock = tuple[int, int, int]

# A time at the start of a heading or list item: `14:30`, `9:05`, `14:30:15`, `2:30 pm`, also
# bold, code or bracketed (`**14:30**`, `[14:30]`), after a checkbox. ASCII digits and a colon
# only: `14.30` is as often a German date (`14.03.`) or a version as a time.
LEAD_TIME_RE = re.compile(
    r"^(?:\[[ xX]\][ \t]+)?(?:\*\*|__|`|\[|\()?"
    r"(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:[ \t]?(?P<ap>[AaPp]\.?[Mm]\.?))?"
    r"(?:\*\*|__|`|\]|\))?(?=[ \t\-\u2013\u2014:,;|)]|$)"
)
# A date a heading starts with (`2026-01-24 — Daily notes`, `**2026-06-27** 23:00`, `2026-06-27T23:00`).
HEAD_DATE_RE = re.compile(r"^(?:\*\*|__|`|\[|\()?([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])(?:\*\*|__|`|\]|\))?(?:T(?=[0-9]))?")
# A time anywhere in a heading (`Workboard API Fix (10:00-11:00 BST)`, `Call at 2:30 pm`): a whole
# token, so no part of a version (`v1.10:30`), a longer number or a word (`14:30h`).
ANY_TIME_RE = re.compile(
    r"(?<![\w:.,/])(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:[ \t]?(?P<ap>[AaPp]\.?[Mm]\.?))?"
    r"(?!\w|[:.,][0-9])"
)
_SLUG_RE = re.compile(r"[\W_]+")
# A heading's slug is cut to this many characters at a word boundary: ids stay readable and
# short (real headings run to 150 characters), and the first words tell headings apart.
SLUG_MAX = 40


@lru_cache(maxsize=65536)
def slug(text: str) -> str:
    """A heading's part of a note id: NFKC, lower case, runs of other than letters and digits
    as one `-`, none at either end, at most `SLUG_MAX` characters (cut after a whole word
    when there is one to cut after); `_` when nothing is left."""
    out = _SLUG_RE.sub("-", unicodedata.normalize("NFKC", text).lower()).strip("-")
    if len(out) > SLUG_MAX:
        cut = out.rfind("-", 0, SLUG_MAX + 1)
        out = out[:cut] if cut > 0 else out[:SLUG_MAX]
    return out or "_"


def lead_clock(text: str) -> Clock | None:
    """The time a heading's or list item's text starts with, if it is a real one."""
    if not text or not (text[0].isdigit() or text[0] in "*_`[("):
        return None
    m = LEAD_TIME_RE.match(text)
    if m is None:
        return None
    return _clock(m)


def _clock(m: re.Match[str]) -> Clock | None:
    """The real time a match of `h`, `m`, `s` and `ap` names, or None."""
    hh, mm, ss = int(m["h"]), int(m["m"]), int(m["s"] or 0)
    if m["ap"]:
        if not 1 <= hh <= 12:
            return None
        hh = hh % 12 + (12 if m["ap"][0] in "pP" else 0)
    return (hh, mm, ss) if hh <= 23 and mm <= 59 and ss <= 59 else None


def heading_when(text: str, latest: date | None = None) -> tuple[date | None, Clock | None]:
    """The day and time a heading's text gives its section: a real date it starts with (not
    after `latest`, the day a file's name says: a later one is a plan, not when it was
    written), and the time at its start, after that date, or else the first time in it."""
    day, rest = None, text
    if text[:1].isdigit() or text[:1] in "*_`[(":
        m = HEAD_DATE_RE.match(text)
        if m is not None:
            day = real_day(m[1], m[2], m[3])
            if day is not None and latest is not None and day > latest:
                return None, None
            if day is not None:
                rest = text[m.end():].lstrip(" \t,;:-\u2013\u2014|")
    clock = lead_clock(rest)
    if clock is None and ":" in rest:
        t = ANY_TIME_RE.search(rest)
        while t is not None and (clock := _clock(t)) is None:
            t = ANY_TIME_RE.search(rest, t.end())
    return day, clock


@dataclass(slots=True)
class Section:
    """One freeform section: a heading (or none, for the preamble) and the lines under it."""

    head: int | None  # index of the heading line; None for a preamble
    text: str  # the heading's text
    path: tuple[str, ...]  # the headings above it (below the title) and its own
    start: int  # first line after the heading
    end: int  # the next heading's index (exclusive)
    clock: Clock | None  # its heading's time, else the nearest enclosing heading's
    leaf: bool  # no deeper section starts right after it
    day: date | None = None  # a date its heading (or an enclosing one) starts with; None: the file's


@dataclass
class NoteFile:
    """What building one file's notes needs, and the counts that number equal headings."""

    path: str
    key: str
    day: date | None
    tz: tzinfo
    lines: list[str]
    in_fence: list[bool]
    defaults: dict[str, Any]
    problems: list[Problem]
    seen: dict[str, int] = field(default_factory=dict)

    def notes(self, sec: Section) -> list[Event]:
        """The notes of one section, in file order (none for a blank one with children)."""
        lines = self.lines
        slugs = "/".join(slug(t) for t in sec.path) or "_"
        n = self.seen[slugs] = self.seen.get(slugs, 0) + 1
        base = f"{self.key}#{slugs}" + (f"~{n}" if n > 1 else "")
        b, e = sec.start, sec.end
        while b < e and _blank(lines[b]):
            b += 1
        while e > b and _blank(lines[e - 1]):
            e -= 1
        if b == e:  # a bare heading: its words are a note unless a section below carries them
            if sec.head is None or not sec.leaf:
                return []
            return [self._note(base, sec, sec.head, sec.head + 1, sec.clock, None, first=True)]
        k, found = trailing_meta(lines, self.in_fence, b, e)
        meta = Meta.read(found, self.path, self.tz, self.problems) if found else None
        while k > b and not lines[k - 1].strip():
            k -= 1
        out: list[Event] = []
        for seg_start, seg_end, clock, label in self._segments(sec, b, k):
            for p, (ps, pe) in enumerate(parts(lines, self.in_fence, seg_start, seg_end), 1):
                nid = base + label + (f".p{p}" if p > 1 else "")
                out.append(self._note(nid, sec, ps, pe, clock, meta, first=not out))
        if not out:  # metadata lines alone
            out.append(self._note(base, sec, b, b, sec.clock, meta, first=True))
        last = out[-1]
        last.end_line = max(last.end_line, e)  # the metadata lines are the section's last
        return out

    def _segments(self, sec: Section, b: int, k: int) -> list[tuple[int, int, Clock | None, str]]:
        """(start, end, time, id label): the text before the first timed item, then each timed
        item with what follows it up to the next one."""
        timed = timed_items(self.lines, self.in_fence, b, k)
        if not timed:
            return [(b, k, sec.clock, "")]
        out: list[tuple[int, int, Clock | None, str]] = []
        if timed[0][0] > b:
            out.append((b, timed[0][0], sec.clock, ""))
        count: dict[str, int] = {}
        for j, (i, clock) in enumerate(timed):
            hhmm = f"{clock[0]:02d}:{clock[1]:02d}"
            c = count[hhmm] = count.get(hhmm, 0) + 1
            end = timed[j + 1][0] if j + 1 < len(timed) else k
            out.append((i, end, clock, f"@{hhmm}" + (f"-{c}" if c > 1 else "")))
        return out

    def _note(self, nid: str, sec: Section, ps: int, pe: int, clock: Clock | None, meta: Meta | None,
              *, first: bool) -> Event:
        lines = self.lines
        while pe > ps and not lines[pe - 1].strip():
            pe -= 1
        content = "\n".join(lines[ps:pe]) if sec.head is None or ps > sec.head else ""
        values: dict[str, Any] = meta.values if meta else {}
        d = self.defaults
        tags = d.get("tags", []) + (meta.tags if meta else []) + inline_tags(content)
        explicit = values.get("id") if first else None
        hh, mm, ss = clock or (0, 0, 0)
        day = sec.day or self.day
        return Event(
            id=explicit or nid,
            type=NOTE,
            timestamp=datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=self.tz) if day else None,
            content=content,
            file=self.path,
            line=(sec.head + 1) if first and sec.head is not None else ps + 1,
            end_line=max(pe, ps + 1),
            title=sec.text,
            heading=sec.text if first else "",
            confidence0=values.get("confidence", d.get("confidence", 1.0)),
            tags=dedupe(tags) if tags else (),
            links=dedupe(wikilinks(content)) if "[[" in content else (),
            block_ids=dedupe(block_ids(content)) if "^" in content else (),
            source=values.get("source", d.get("source")),
            importance=values.get("importance", d.get("importance")),
            expires=values.get("expires"),
            scope=values.get("scope", d.get("scope")),
            supersedes=values.get("supersedes") if first else None,
            reconfirms=tuple(meta.reconfirms) if first and meta else (),
            explicit_id=explicit is not None,
            meta=meta.raw if first and meta else {},
            path=sec.path,
        )


_RULE_RE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")


def _blank(line: str) -> bool:
    """Blank, or a thematic break (`---`, `***`): a section of rules alone says nothing."""
    return not line.strip() or (line.lstrip()[:1] in "-*_" and _RULE_RE.match(line) is not None)


def timed_items(lines: list[str], in_fence: list[bool], b: int, k: int) -> list[tuple[int, Clock]]:
    """Top-level list items in lines [b, k) that start with a time: (line index, time)."""
    out = []
    for i in range(b, k):
        line = lines[i]
        first = line[:1]
        if not first or not (first in "-*+" or first.isdigit()) or in_fence[i]:
            continue
        m = BULLET_RE.match(line)
        if m is None or m["indent"] or not m["text"]:
            continue
        clock = lead_clock(m["text"])
        if clock is not None:
            out.append((i, clock))
    return out


def parts(lines: list[str], in_fence: list[bool], s: int, t: int, bound: int | None = None) -> list[tuple[int, int]]:
    """Lines [s, t) as parts of about `bound` characters, cut only between blocks (top-level
    list items, paragraphs, fenced code); a block longer than `bound` is cut between its
    lines, unless it is code, which stays whole."""
    bound = bound or BOUND
    t = _trim_end(lines, s, t)
    sizes = [len(lines[i]) + 1 for i in range(s, t)]
    if sum(sizes) <= bound:
        return [(s, t)]
    starts = block_starts(lines, s, t)
    cuts: list[int] = []
    for j, bs in enumerate(starts):
        be = starts[j + 1] if j + 1 < len(starts) else t
        cuts.append(bs)
        if not in_fence[bs] and sum(sizes[bs - s : be - s]) > bound:
            cuts.extend(range(bs + 1, be))
    out: list[tuple[int, int]] = []
    cur, size = s, 0
    for q, c in enumerate(cuts):
        n = sum(sizes[c - s : (cuts[q + 1] if q + 1 < len(cuts) else t) - s])
        if size and size + n > bound:
            out.append((cur, c))
            cur, size = c, 0
        size += n
    out.append((cur, t))
    return [(a, e) for a, b in out if (e := _trim_end(lines, a, b)) > a]


def _trim_end(lines: list[str], a: int, b: int) -> int:
    while b > a and not lines[b - 1].strip():
        b -= 1
    return b


def block_starts(lines: list[str], s: int, t: int) -> list[int]:
    """Where the blocks of lines [s, t) start: a fenced block's opening line, the line after
    its closing one, a top-level list item, a paragraph's first line; never inside code or
    on an indented continuation."""
    out = [s]
    blank = True
    fence: str | None = None
    after_fence = False
    for i in range(s, t):
        line = lines[i]
        m = FENCE_RE.match(line) if line[:1] in ("`", "~", " ", "\t") else None
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence, after_fence = None, True
            continue
        if m:
            fence = m.group(1)
            if i > s:
                out.append(i)
            blank = after_fence = False
            continue
        if not line.strip():
            blank = True
            continue
        if i > s and (after_fence or (blank and line[:1] not in (" ", "\t")) or _top_item(line)):
            out.append(i)
        blank = after_fence = False
    return out


def _top_item(line: str) -> bool:
    first = line[:1]
    if not (first in "-*+" or first.isdigit()):
        return False
    m = BULLET_RE.match(line)
    return m is not None and not m["indent"]
