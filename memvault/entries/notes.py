"""Notes: the freeform sections of a daily log, read as `note` events.

Whatever a daily log holds outside its `## HH:MM - Type` entries is memory too: a heading's
section (to the next heading), the preamble before the first heading. Each becomes one note,
or several: a section whose top-level list items start with a time (`- 14:30 did X`) or an
agent's timestamp (`- 2026-03-19T03:14:04Z …`) is split at those items, each dated at its time; a part longer than `BOUND` characters is split along
its own blocks (list items, paragraphs, fenced code kept whole). Every note keeps its heading
path. Ids are derived from the file's key, the slugs of the heading path and the position
among equal paths, so they survive edits elsewhere. `docs/format.md` ("Notes") is normative.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any

from memvault.entries.markdown import BULLET_RE, FENCE_RE, block_ids, dedupe, inline_tags, wikilinks
from memvault.entries.meta import Meta, trailing_meta
from memvault.entries.model import NOTE, Event, Problem
from memvault.entries.naming import log_name, real_day
from memvault.entries.timeparse import day_in_range

# A note's text is split into parts of at most about this many characters (a paragraph, a few
# list items: ~100 tokens), measured on LoCoMo as freeform logs (docs/decisions.md): R@10 0.596
# at 1,200, 0.664 at 600, 0.703 at 400, 0.713 at 300, against 0.697 for one typed entry per turn.
BOUND = 400

Clock = tuple[int, int, int]
Timed = tuple[int, Clock, date | None, str]  # a timed list item: line index, time, own day, id label

# A time at the start of a heading or list item: `14:30`, `9:05`, `14:30:15`, `2:30 pm`, also
# bold, code or bracketed (`**14:30**`, `[14:30]`), after a checkbox. ASCII digits and a colon
# only: `14.30` is as often a German date (`14.03.`) or a version as a time.
LEAD_TIME_RE = re.compile(
    r"^(?:\[[ xX]\][ \t]+)?(?:\*\*|__|`|\[|\()?"
    r"(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:[ \t]?(?P<ap>[AaPp]\.?[Mm]\.?))?"
    r"(?:\*\*|__|`|\]|\))?(?=[ \t\-\u2013\u2014:,;|)]|$)"
)
# The end of a time range that carries the am/pm its start leaves out (`9:18-10:00 PM`,
# `~12:30-12:45am`): the start takes it, or the other half when that would put it after the end.
RANGE_END_RE = re.compile(
    r"[ \t]{0,3}(?:-|\u2013|\u2014|to|bis)[ \t]{0,3}(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?"
    r"[ \t]?(?P<ap>[AaPp]\.?[Mm]\.?)(?!\w)"
)
# A time anywhere in a heading (`Workboard API Fix (10:00-11:00 BST)`, `Call at 2:30 pm`): a whole
# token, so no part of a version (`v1.10:30`), a longer number or a word (`14:30h`).
ANY_TIME_RE = re.compile(
    r"(?<![\w:.,/])(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:[ \t]?(?P<ap>[AaPp]\.?[Mm]\.?))?"
    r"(?!\w|[:.,][0-9])"
)
# Month names and their abbreviations, English and German (`January`, `Feb.`, `März`, `Okt`).
_MONTH = (r"(?i:jan(?:uary|uar)?|j\u00e4n(?:ner)?|feb(?:ruary|ruar)?|mar(?:ch)?|m\u00e4r(?:z)?|maerz|apr(?:il)?"
          r"|may|mai|jun[ei]?|jul[yi]?|aug(?:ust)?|sep(?:t(?:ember)?)?|o[ck]t(?:ober)?|nov(?:ember)?|de[cz](?:ember)?)")
MONTHS = {"jan": 1, "j\u00e4n": 1, "feb": 2, "mar": 3, "m\u00e4r": 3, "mae": 3, "apr": 4, "may": 5, "mai": 5, "jun": 6,
          "jul": 7, "aug": 8, "sep": 9, "oct": 10, "okt": 10, "nov": 11, "dec": 12, "dez": 12}
# A date anywhere in a heading, as a whole token: ISO `2026-01-31` (also before `T23:30`), German
# `24.01.2026` / `24.1.2026` (day first), `January 26, 2026`, `Feb 8, 2026`, `26. Januar 2026`,
# `26 January 2026`, `2026年1月31日`. Not after a letter, digit, `.`, `:`, `/` or `-` and not before
# a digit or `.1`, `-1`, `:1`, `/1`, so no version (`v2026.01.31`, `1.2.2026.3`) or id reads as one.
HEAD_DATE_RE = re.compile(
    r"(?<![\w.:/-])(?:"
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})(?![0-9]|[.:/-][0-9])"
    r"|(?P<gd>[0-9]{1,2})\.(?P<gm>[0-9]{1,2})\.(?P<gy>[0-9]{4})(?![0-9]|[.:/-][0-9])"
    r"|(?P<em>" + _MONTH + r")\.?[ \t]{1,3}(?P<ed>[0-9]{1,2})(?:st|nd|rd|th)?,?[ \t]{1,3}(?P<ey>[0-9]{4})(?!\w)"
    r"|(?P<nd>[0-9]{1,2})\.?[ \t]{1,3}(?P<nm>" + _MONTH + r")\.?,?[ \t]{1,3}(?P<ny>[0-9]{4})(?!\w)"
    r"|(?P<cy>[0-9]{4})\u5e74(?P<cm>[0-9]{1,2})\u6708(?P<cd>[0-9]{1,2})\u65e5"
    r")"
)
# Four digits: every date above has a year, and most headings have none (a cheap first look).
YEAR_RE = re.compile(r"[0-9]{4}")
# A date and time a top-level list item starts with, as agents log (`2026-03-19T03:14:04.630Z`,
# `2026-03-19 03:14`, `[2026-03-19 03:14:04 +01:00]`); `Z`, `UTC` or an offset gives its zone.
STAMP_RE = re.compile(
    r"^(?:\*\*|`|\[)?(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})(?:T|[ \t]{1,3})"
    r"(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2})(?:[.,][0-9]{1,9})?)?"
    r"(?:[ \t]?(?P<z>Z|UTC|[+-][0-9]{2}:?[0-9]{2}))?(?:\*\*|`|\])?(?=[ \t\-\u2013\u2014:,;|)]|$)"
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
    return _clock(m, text)


def _clock(m: re.Match[str], text: str | None = None) -> Clock | None:
    """The real time a match of `h`, `m`, `s` and `ap` names, or None. Without am/pm of its own
    it takes that of a range's end right after it in `text` (`9:18-10:00 PM` is 21:18)."""
    hh, mm, ss = int(m["h"]), int(m["m"]), int(m["s"] or 0)
    ap = m["ap"]
    if ap is None and text is not None and 1 <= hh <= 12 and text.find(":", m.end(), m.end() + 12) > 0 \
            and _range_next(text, m.end()):
        r = RANGE_END_RE.match(text, m.end())
        if r is not None and (end := _clock(r)) is not None:
            start = (hh % 12 + (12 if r["ap"][0] in "pP" else 0), mm, ss)
            if start > end:  # `11:00-1:00 PM`: the start is in the other half of the day
                start = ((start[0] + 12) % 24, mm, ss)
            return start if mm <= 59 and ss <= 59 else None
    if ap:
        if not 1 <= hh <= 12:
            return None
        hh = hh % 12 + (12 if ap[0] in "pP" else 0)
    return (hh, mm, ss) if hh <= 23 and mm <= 59 and ss <= 59 else None


def _range_next(text: str, at: int) -> bool:
    """A cheap look before `RANGE_END_RE`: a dash, `to` or `bis` follows `at`, after a space or not."""
    c = text[at:at + 1]
    if c in (" ", "\t"):
        at += 1
        c = text[at:at + 1]
    return c in ("-", "\u2013", "\u2014") or text.startswith(("to", "bis"), at)


def heading_when(text: str, latest: date | None = None) -> tuple[date | None, Clock | None]:
    """The day and time a heading's text gives its section: the one real date in it (none when
    it names two different days: a range or a reference; none when after `latest`, the day a
    file's name says: a later one is a plan, not when it was written), and the time right after
    that date, else the time it starts with, else the first time in it."""
    day, clock = None, None
    found = head_dates(text) if YEAR_RE.search(text) else None
    if found:
        day, end = found[0]
        if any(d != day for d, _ in found) or (latest is not None and day > latest):
            return None, None
        clock = lead_clock(_after_date(text, end))
    if clock is None:
        clock = lead_clock(text)
    if clock is None and ":" in text:
        t = ANY_TIME_RE.search(text)
        while t is not None and (clock := _clock(t, text)) is None:
            t = ANY_TIME_RE.search(text, t.end())
    return day, clock


def head_dates(text: str) -> list[tuple[date, int]]:
    """The real dates in a heading's text, each with where it ends, in order."""
    out: list[tuple[date, int]] = []
    for m in HEAD_DATE_RE.finditer(text):
        if m["y"]:
            day = real_day(m["y"], m["m"], m["d"])
        elif m["gy"]:
            day = real_day(m["gy"], m["gm"], m["gd"])
        elif m["ey"]:
            day = real_day(m["ey"], MONTHS[m["em"][:3].lower()], m["ed"])
        elif m["ny"]:
            day = real_day(m["ny"], MONTHS[m["nm"][:3].lower()], m["nd"])
        else:
            day = real_day(m["cy"], m["cm"], m["cd"])
        if day is not None:
            out.append((day, m.end()))
    return out


def _after_date(text: str, end: int) -> str:
    """The text after a date, from where a time written with it would start (`T23:00`,
    `** 23:00`, `, 14:00`)."""
    rest = text[end:].lstrip("*_`])")
    if rest[:1] == "T":
        rest = rest[1:]
    return rest.lstrip(" \t,;:-\u2013\u2014|")


def stamp(text: str, tz: tzinfo, latest: date | None = None) -> tuple[date, Clock, str] | None:
    """The day and time (in `tz`) a list item's text starts with as a timestamp
    (`2026-03-19T03:14:04.630Z`), and its id label (`@2026-03-19T03:14`, as written); None
    when the date written is after `latest` (a plan)."""
    m = STAMP_RE.match(text)
    if m is None:
        return None
    day = real_day(m["y"], m["mo"], m["d"])
    hh, mm, ss = int(m["h"]), int(m["m"]), int(m["s"] or 0)
    if day is None or hh > 23 or mm > 59 or ss > 59 or (latest is not None and day > latest):
        return None
    label = f"@{day.isoformat()}T{hh:02d}:{mm:02d}"
    if m["z"]:
        zone = _zone(m["z"])
        if zone is None:
            return None
        at = datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=zone).astimezone(tz)
        if not day_in_range(at.date()):
            return None
        day, (hh, mm, ss) = at.date(), (at.hour, at.minute, at.second)
    return day, (hh, mm, ss), label


def _zone(text: str) -> tzinfo | None:
    """`Z`, `UTC`, `+01:00`, `-0530` as a zone (None for an offset of a day or more)."""
    if text in ("Z", "UTC"):
        return UTC
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:])
    if hours > 23 or minutes > 59:
        return None
    return timezone((-1 if text[0] == "-" else 1) * timedelta(hours=hours, minutes=minutes))


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
    latest: date | None = field(init=False)  # the day the file's name says: no later item date counts

    def __post_init__(self) -> None:
        self.latest = log_name(self.path).day

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
        for seg_start, seg_end, clock, label, day in self._segments(sec, b, k):
            for p, (ps, pe) in enumerate(parts(lines, self.in_fence, seg_start, seg_end), 1):
                nid = base + label + (f".p{p}" if p > 1 else "")
                out.append(self._note(nid, sec, ps, pe, clock, meta, first=not out, day=day))
        if not out:  # metadata lines alone
            out.append(self._note(base, sec, b, b, sec.clock, meta, first=True))
        last = out[-1]
        last.end_line = max(last.end_line, e)  # the metadata lines are the section's last
        return out

    def _segments(self, sec: Section, b: int, k: int) -> list[tuple[int, int, Clock | None, str, date | None]]:
        """(start, end, time, id label, day or None): the text before the first timed item,
        then each timed item with what follows it up to the next one."""
        timed = timed_items(self.lines, self.in_fence, b, k, self.tz, self.latest)
        if not timed:
            return [(b, k, sec.clock, "", None)]
        out: list[tuple[int, int, Clock | None, str, date | None]] = []
        if timed[0][0] > b:
            out.append((b, timed[0][0], sec.clock, "", None))
        count: dict[str, int] = {}
        for j, (i, clock, day, label) in enumerate(timed):
            c = count[label] = count.get(label, 0) + 1
            end = timed[j + 1][0] if j + 1 < len(timed) else k
            out.append((i, end, clock, label + (f"-{c}" if c > 1 else ""), day))
        return out

    def _note(self, nid: str, sec: Section, ps: int, pe: int, clock: Clock | None, meta: Meta | None,
              *, first: bool, day: date | None = None) -> Event:
        lines = self.lines
        while pe > ps and not lines[pe - 1].strip():
            pe -= 1
        content = "\n".join(lines[ps:pe]) if sec.head is None or ps > sec.head else ""
        values: dict[str, Any] = meta.values if meta else {}
        d = self.defaults
        tags = d.get("tags", []) + (meta.tags if meta else []) + inline_tags(content)
        explicit = values.get("id") if first else None
        hh, mm, ss = clock or (0, 0, 0)
        day = day or sec.day or self.day
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
            forgotten=values.get("forgotten"),
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


def timed_items(lines: list[str], in_fence: list[bool], b: int, k: int, tz: tzinfo | None = None,
                latest: date | None = None) -> list[Timed]:
    """Top-level list items in lines [b, k) that start with a time (`- 14:30`) or, given the
    vault's zone `tz`, a timestamp (`- 2026-03-19T03:14Z`, not dated after `latest`, the day
    the file's name says): (line index, time, its own day or None, id label)."""
    out: list[Timed] = []
    for i in range(b, k):
        line = lines[i]
        first = line[:1]
        if not first or not (first in "-*+" or first.isdigit()) or in_fence[i]:
            continue
        m = BULLET_RE.match(line)
        if m is None or m["indent"] or not m["text"]:
            continue
        text = m["text"]
        if not (text[0].isdigit() or text[0] in "*_`[("):  # most items: neither a time nor a stamp
            continue
        t = LEAD_TIME_RE.match(text)
        clock = _clock(t, text) if t is not None else None
        if clock is not None:
            out.append((i, clock, None, f"@{clock[0]:02d}:{clock[1]:02d}"))
        elif tz is not None and (text[0].isdigit() or text[1:2].isdigit() or text[2:3].isdigit()) \
                and (found := stamp(text, tz, latest)) is not None:
            out.append((i, found[1], found[0], found[2]))
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
