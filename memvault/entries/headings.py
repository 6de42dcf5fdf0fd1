"""What a `## HH:MM - Word…` heading of a daily log is: an entry, an attempt at one, or a title.

Real logs put a time and a dash before plain titles (`## 14:00 — Brand Lead Gen Deep Dive`,
`## 12:00 - Observation deck visit`), so the word after the dash is a type only when it stands
alone: a known type followed by the end of the heading or a separator before a title
(`## 09:15 - Decision - Hosting`, `## 09:15 - Decision: Hosting`). A word that is no known type
is a title, unless it looks like a slip of one (`Decison`, `Decisions`, `Belie`) standing
alone the same way, or it is the whole heading (`## 14:30 - Meeting`): those are entries of an
unknown type (MV005), as an attempt should be. `docs/format.md` ("Entries", "What MV003
means") is normative.
"""

from __future__ import annotations

import re
from typing import Literal

ENTRY_RE = re.compile(
    r"^(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?[ \t]*[-\u2013\u2014][ \t]*"
    r"(?P<type>[A-Za-z][\w-]*)(?P<rest>.*)$"
)
# What makes a `## ` heading an attempt at an entry heading (MV003): a time-like start (any
# digits, `:` or `.`, or `9am`) followed by a type; or a type after a dash, alone or before a title.
ATTEMPT_TIME_RE = re.compile(r"^(?P<clock>\d{1,2}(?:[:.]\d{2}(?:[:.]\d{2})?|[ \t]*[AaPp]\.?[Mm]\.?))[\W_]*(?P<type>[A-Za-z][\w-]*)")
# A time typed halfway (`12:0`, `12:`, `1200 -`), alone or before a dash or a known type: an
# entry heading being written. The hour has two digits and a lone minute digit is 0-5 where the
# minutes are cut short, so a ratio (`1:1`, `16:9`) stays a title; four digits are an HHMM time
# followed by a dash or a type, so `## 2026 plans` and `## 1200` stay notes.
HALF_TIME_RE = re.compile(
    r"^(?:(?P<hm>(?:[01]?[0-9]|2[0-3]):|(?:[01][0-9]|2[0-3]):[0-5])|(?P<four>(?:[01][0-9]|2[0-3])[0-5][0-9])(?=[ \t]*[-\u2013\u2014A-Za-z]))"
    r"(?![0-9])[ \t]*(?P<dash>[-\u2013\u2014])?[ \t]*(?P<type>[A-Za-z][\w-]*)?(?P<rest>.*)$"
)
# (The dash after the type is looked at, not taken: `Standup - Decision` after `14:38 -`.)
ATTEMPT_DASH_RE = re.compile(r"(?:^|(?<=[ \t]))[-\u2013\u2014][ \t]*+(?P<type>[A-Za-z][\w-]*+)[ \t]*+(?=$|[-\u2013\u2014:])")

# What may follow a type before its title: a dash, a colon, a bar or slash, an opening bracket,
# a `#tag`. A type followed by a word (`Observation deck visit`) begins a title instead.
SEPARATORS = frozenset("-\u2013\u2014:|/([#")
_WORDY = re.compile(r"[^\W_]")  # a letter or digit

Kind = Literal["entry", "unknown"]


def type_ends(rest: str) -> bool:
    """True when the text after a type (`rest`) leaves the type alone: nothing, a separator
    before a title, or only marks (`✅`, `!`) and no letter or digit."""
    if not rest:
        return True
    bare = rest.lstrip(" \t")
    return not bare or bare[0] in SEPARATORS or _WORDY.search(bare) is None


def entry_kind(word: str, rest: str, types: tuple[str, ...]) -> Kind | None:
    """What the word after `HH:MM -` and the text after it make of a heading: an entry of a
    known type, an entry of an unknown type (MV005: an attempt), or None (a titled note)."""
    lower = word.lower()
    if lower in types:
        return "entry" if type_ends(rest) else None
    if not rest.strip() or (type_ends(rest) and near_type(lower, types)):
        return "unknown"
    return None


def near_type(word: str, types: tuple[str, ...]) -> str | None:
    """The known type a lower-case `word` plausibly misspells, else None: its plural, a prefix
    of 3+ letters (`obs`, `belie`), or a few edits away with the same first letter (slips
    seldom hit it): one edit for types of 5-7 letters, two for longer ones when the first two
    letters agree. So `Brief`, `Relief`, `Revision` and `Reservation` stay titles; `Decison`,
    `Desicion`, `Beleif` and `Obervaton` do not."""
    for t in types:
        if word in (t + "s", t + "es") or (len(word) >= 3 and t.startswith(word)):
            return t
        if len(t) < 5 or abs(len(word) - len(t)) > 2 or word[:1] != t[:1]:
            continue
        limit = 2 if len(t) >= 8 and word[:2] == t[:2] else 1
        if edits(word, t, limit) <= limit:
            return t
    return None


def edits(a: str, b: str, limit: int) -> int:
    """Edit distance with adjacent swaps (optimal string alignment), or `limit + 1` once it
    is known to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


def attempt(heading: str, types: tuple[str, ...]) -> str | None:
    """For a `## ` heading that is not an entry heading: the time-like token it starts with
    ("" when it has none) if it looks like an attempt at one (MV003), else None."""
    timed = ATTEMPT_TIME_RE.match(heading)
    if timed is not None and timed["type"].lower() in types and type_ends(heading[timed.end():]):
        return timed["clock"]
    if half_time(heading, types):
        return heading.split()[0] if heading.split() else ""
    if any(m["type"].lower() in types for m in ATTEMPT_DASH_RE.finditer(heading)):
        return ""
    return None


def half_time(heading: str, types: tuple[str, ...]) -> bool:
    """True for a heading that is a time typed halfway (`12:0`, `12:`, `1200 -`, `12:3 -
    Decision`): nothing after it, a dash and nothing, or a known type standing alone."""
    m = HALF_TIME_RE.match(heading.strip())
    if m is None:
        return False
    word, rest = m["type"], m["rest"]
    if word is None:
        return not rest.strip() and (m["hm"] is not None or m["dash"] is not None)
    return word.lower() in types and type_ends(rest)


# The heading forms `check --fix` repairs (MV003): a `H:MM`/`HH:MM` time, a known type with only
# spaces (or a colon) before it where the dash belongs, and the type in any case. What it leaves
# needs a guess: a dotted time or `9am` (which clock?), a type that is no known type, no time.
REPAIRABLE_RE = re.compile(
    r"^(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?P<sep>:?[ \t]+|[ \t]*[-\u2013\u2014][ \t]*)"
    r"(?P<type>[A-Za-z][\w-]*)(?P<rest>.*)$"
)


def repair_attempt(heading: str, types: tuple[str, ...]) -> tuple[str | None, str]:
    """The entry heading (text after `## `) an attempt at one plainly means, and "", or None and
    why `check --fix` leaves it: `10:00 Decision`, `9:05 decision`, `10:00: Belief - Hosting`
    become `10:00 - Decision`, `09:05 - Decision`, `10:00 - Belief - Hosting`."""
    m = REPAIRABLE_RE.match(heading.strip())
    if m is None:
        if half_time(heading, types):
            return None, "its time is cut short; --fix does not guess which time is meant"
        if ATTEMPT_TIME_RE.match(heading.strip()):
            return None, "its time is not written H:MM or HH:MM; --fix does not guess which time is meant"
        return None, "it has no time at its start; --fix does not guess one"
    lower = m["type"].lower()
    if lower not in types or not type_ends(m["rest"]):
        return None, f"'{m['type']}' is not a type on its own; --fix does not guess the type"
    hour, minute, second = int(m["h"]), int(m["m"]), int(m["s"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None, "its time is not a time of day; --fix does not guess which time is meant"
    clock = f"{hour:02d}:{m['m']}" + (f":{m['s']}" if m["s"] else "")
    return f"{clock} - {lower.capitalize()}{m['rest'].rstrip()}", ""
