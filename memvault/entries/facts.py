"""What a text is about, beyond its words: the names, numbers, dates and other values it states,
whether it says not, and whether it states a change. Two texts that share most words but state
different values ("Use Postgres..." / "Use Redis...") are different facts (docs/curate.md,
"Same thing, said twice").

Lexical and deliberately conservative: merging two different facts corrupts what the vault
believes, while keeping two wordings of one fact apart only costs a bullet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memvault.entries.words import STOPWORDS, stem

# A value is (kind, key, shown): the kind says what differs, the key compares, shown is the text.
Value = tuple[str, str, str]

TOKEN_RE = re.compile(r"[^\s()\[\]{}<>\"“”„!?;*`|,]+(?:,\d{3}(?!\d))*")
NEGATION_RE = re.compile(
    r"\b(not|no|never|nor|without|cannot|nicht|kein|keine|keinen|keinem|keiner|nie|niemals|ohne)\b|n[’']t\b",
    re.IGNORECASE)
# A correction states the new value (and often the old one): never a repeat of either.
CHANGE_RE = re.compile(
    r"\b(switch(?:ed|es|ing)?|mov(?:ed|es)|migrat\w+|replac(?:ed|es|ing)|renamed|chang(?:ed|es)|upgraded|"
    r"downgraded|raised|lowered|increased|decreased|extended|shortened|postponed|slipped|rescheduled|"
    r"instead|no longer|any ?more|no more|stopped|now|actually|correction|corrected|turns out|after all|"
    r"umgestiegen|gewechselt|umgezogen|ersetzt|geändert|erhöht|gesenkt|verschoben|verlängert|statt|"
    r"stattdessen|anstatt|nicht mehr|jetzt|nun|ab sofort|inzwischen|mittlerweile|sondern|korrektur)\b",
    re.IGNORECASE)
NEGATION_WORDS = frozenset(
    "not no never nor without cannot nicht kein keine keinen keinem keiner nie niemals ohne".split())
COMPARE_RE = re.compile(r"^(?:over|than|als|statt|anstatt)$", re.IGNORECASE)

_DAYS = {
    "monday": "montag", "tuesday": "dienstag", "wednesday": "mittwoch", "thursday": "donnerstag",
    "friday": "freitag", "saturday": "samstag", "sunday": "sonntag",
}
_MONTHS = {
    "january": "januar", "february": "februar", "march": "märz", "april": "april", "may": "mai",
    "june": "juni", "july": "juli", "august": "august", "september": "september", "october": "oktober",
    "november": "november", "december": "dezember",
}
_NUMBER_WORDS = {w: str(i) for i, ws in enumerate((
    "zero null", "one eins", "two zwei", "three drei", "four vier", "five fünf", "six sechs",
    "seven sieben", "eight acht", "nine neun", "ten zehn", "eleven elf", "twelve zwölf"), start=0)
    for w in ws.split()} | {w: str(i) for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth".split(), start=1)}
# Closed sets of words that are values: a text that says "dark" where the other says "light"
# states something else, however many words they share.
_CLASSES = {
    "modes": "dark light hell dunkel",
    "environments": "production prod staging dev development sandbox local frontend backend",
    "times of day": "morning afternoon evening night noon midnight morgens vormittags mittags "
                    "nachmittags abends nachts",
    "frequencies": "hourly daily nightly weekly biweekly monthly quarterly yearly annually "
                   "täglich wöchentlich monatlich jährlich",
    "units": "second minute hour day week month year sekunde minute stunde tag woche monat jahr",
    "bounds": "minimum maximum min max least most",
    "before/after": "before after until since earlier later",
}
CLASS_OF = {w: kind for kind, words in _CLASSES.items() for w in words.split()}
# Capitalised words that start many memory lines or are capitalised by habit, never names.
_NOT_NAMES = frozenset(
    "i user users lesson lessons learned reminder note notes todo confirmed again still also update "
    "correction decision decided observation belief fact done ok okay yes".split())


ONE_SIDED = frozenset(("numbers", "dates"))  # "every Friday" / "every second Friday"


@dataclass(frozen=True)
class Facts:
    values: tuple[Value, ...]
    keys: frozenset[str]  # every word, lower-cased and stemmed, and every value's key
    negation: str | None
    change: str | None
    sides: tuple[tuple[str, str], ...]  # (stem, "L"/"R") near "A over B"


_DAY_OF = {f: en for en, de in _DAYS.items() for f in (en, de, en + "s", de + "s")}
_DAY_ABBR = {en[:3]: en for en in _DAYS}
_MONTH_OF = {f: en for en, de in _MONTHS.items() for f in (en, de)} | {
    en[:3]: en for en in _MONTHS if en != "may"}


def _when(tok: str, low: str) -> str | None:
    """A day of the week or a month; "may", "march" and "sat" are words too, so those need a capital."""
    if low in _DAY_OF:
        return _DAY_OF[low]
    if tok[:1].isupper():
        return _DAY_ABBR.get(low) or _MONTH_OF.get(low)
    return None


_stem = lru_cache(maxsize=65536)(stem)


def _number_key(num: str, unit: str) -> str:
    parts = num.replace(",", "").split(":") if ":" in num else [num.replace(",", "")]
    parts = [p.lstrip("0") or "0" for p in parts]
    if len(parts) == 2 and parts[1] == "0":
        parts = parts[:1]  # 9:00 == 9
    unit = unit.lower()
    if unit in ("st", "nd", "rd", "th", "am", "h", "uhr"):
        unit = ""
    if unit == "pm" and len(parts) <= 2 and len(parts[0]) <= 2 and int(parts[0]) < 12:
        parts[0], unit = str(int(parts[0]) + 12), ""
    return ":".join(parts) + unit


_NUM_RE = re.compile(r"^(\d+(?:[.,:]\d+)*)([a-zA-Z%€$]*)$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SPLIT_RE = re.compile(r"[^\w]+")
_NAMEY_RE = re.compile(r"[a-z][A-Z]|[A-Z]{2}|\d|[a-z][./][a-z]", re.ASCII)


def _classify(tok: str, initial: bool) -> Value | None:
    low = tok.lower()
    if _DATE_RE.match(tok):
        return ("dates", tok, tok)
    m = _NUM_RE.match(tok)
    if m:
        return ("numbers", _number_key(m[1], m[2]), tok)
    if low in _NUMBER_WORDS:
        return ("numbers", _NUMBER_WORDS[low], tok)
    when = _when(tok, low)
    if when:
        return ("dates", when, tok)
    kind = CLASS_OF.get(low) or CLASS_OF.get(_stem(low))
    if kind:
        return (kind, _stem(low), tok)
    if low in STOPWORDS or low in _NOT_NAMES or NEGATION_RE.fullmatch(low):
        return None
    if _NAMEY_RE.search(tok) and any(c.isalpha() for c in tok):
        return ("names", low, tok)  # GitHub, AWS, gpt-4o, k8s, memvault.dev, Europe/Berlin
    if tok[:1].isupper() and not initial and not tok.isupper():
        return ("names", low, tok)
    return None


_NUMBERS_RE = re.compile(r"(?<![\w.])(\d{4}-\d{2}-\d{2}|\d+(?:[.,:]\d+)*)(?![\w-])")


_DIGIT_RE = re.compile(r"\d")


def number_keys(text: str) -> set[str]:
    """The numbers and ISO dates in `text`, as `facts` keys them (9:00 = 9): cheap, for every entry."""
    if not _DIGIT_RE.search(text):
        return set()
    return {m if "-" in m else _number_key(m, "") for m in _NUMBERS_RE.findall(text)}


def facts(text: str) -> Facts:
    values: list[Value] = []
    keys: set[str] = set()
    words: list[str] = []
    compare_at, prev_end, prev = -1, 0, ""
    for m in TOKEN_RE.finditer(text):
        gap, raw = text[prev_end:m.start()], m.group()
        # A sentence starts the text, a line, or follows . ! ? (capitals there are not names).
        initial = not prev or prev.endswith(".") or any(c in ".!?\n" for c in gap) or raw in "-*"
        prev_end, prev = m.end(), raw
        tok = raw.strip(".:'’-/")
        if tok.endswith(("'s", "’s")):
            tok = tok[:-2]
        if not tok:
            continue
        low = tok.lower()
        keys.add(low)
        keys.add(_stem(low))
        if not low.isalnum():
            keys.update(_stem(p) for p in _SPLIT_RE.split(low) if p)
        # A path or a handle (/healthz, @anna) is a name however written; `#word` is a tag, not a fact.
        value = ("names", low, raw) if raw[:1] in "/@" and len(raw) > 1 else _classify(tok, initial)
        if value is not None:
            values.append(value)
            keys.add(value[1])
        if COMPARE_RE.match(tok) and compare_at < 0:
            compare_at = len(words)
        elif low not in STOPWORDS:
            words.append(_stem(low))
    sides: tuple[tuple[str, str], ...] = ()
    if compare_at >= 0:
        sides = tuple((w, "L") for w in words[max(0, compare_at - 2):compare_at]) + tuple(
            (w, "R") for w in words[compare_at:compare_at + 2])
    neg, change = NEGATION_RE.search(text), CHANGE_RE.search(text)
    return Facts(tuple(values), frozenset(keys), neg.group().lower() if neg else None,
                 change.group().lower() if change else None, sides)


def _unmatched(mine: Facts, other: Facts, kind: str) -> list[str]:
    """`mine`'s values of `kind` that `other` does not say, as written (at most 3, shortened)."""
    out: list[str] = []
    names = [o for k, o, _ in other.values if k == "names" and o.isalpha() and len(o) >= 5][:200]
    for k, key, shown in mine.values:
        if k != kind or key in other.keys or _stem(key) in other.keys:
            continue
        if kind == "names" and len(key) >= 5 and key.isalpha() and any(
                o.startswith(key) or key.startswith(o) for o in names):
            continue  # Frankfurt / Frankfurter, Postgres / PostgreSQL
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        if shown not in out:
            out.append(shown)
            if len(out) == 3:
                break
    return out


def facts_differ(a: Facts, b: Facts) -> str | None:
    """Why two texts state different facts, or None when nothing they state differs."""
    if (a.negation is None) != (b.negation is None):
        return f"one says not ({a.negation or b.negation})"
    if (a.change is None) != (b.change is None):
        return f"one states a change ({a.change or b.change}), not a repeat"
    kinds = dict.fromkeys(k for k, _, _ in a.values + b.values)
    for kind in kinds:
        mine, theirs = _unmatched(a, b, kind), _unmatched(b, a, kind)
        if mine and theirs:
            return f"{kind} differ: {', '.join(mine)} / {', '.join(theirs)}"
        if (mine or theirs) and kind in ONE_SIDED:
            return f"{kind} differ: {', '.join(mine) or 'none'} / {', '.join(theirs) or 'none'}"
    side_b = dict(b.sides)
    for word, side in a.sides:
        if side_b.get(word, side) != side:
            return f"the order is reversed ({word} on the other side of over/than)"
    return None
