"""What a text is about, beyond its words: the names (a letter or a code too: room B, P0),
numbers, dates and other values it states (function words among them: until / from, is / was),
whether it says not or off, whether it states a change, its tense, and who stands where. Two texts
that share most words but state different values ("Use Postgres..." / "Use Redis...") are
different facts (docs/curate.md, "Same thing, said twice").

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
# A correction states the new value (and often the old one): never a repeat of either. "Used to",
# "formerly" say the fact is no longer true ("is used to deploy" and "as previously noted" do not).
CHANGE_RE = re.compile(
    r"\b(switch(?:ed|es|ing)?|mov(?:ed|es)|migrat\w+|replac(?:ed|es|ing)|renamed|chang(?:ed|es)|upgraded|"
    r"downgraded|raised|lowered|increased|decreased|extended|shortened|postponed|slipped|rescheduled|"
    r"instead|no longer|any ?more|no more|stopped|now|actually|correction|corrected|turns out|after all|"
    r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbe )(?<!\bbeen )(?<!\bget )(?<!\bgot )used to|"
    r"formerly|(?<!\bas )previously|"
    r"umgestiegen|gewechselt|umgezogen|ersetzt|geändert|erhöht|gesenkt|verschoben|verlängert|statt|"
    r"stattdessen|anstatt|nicht mehr|jetzt|nun|ab sofort|inzwischen|mittlerweile|sondern|korrektur|"
    r"früher|ehemals|ehemalig\w*|damals)\b",
    re.IGNORECASE)
_AGAIN = frozenset("again wieder erneut".split())  # and "once more"
# Saying a thing is off is a value of its own, like `not`: "The printer is off" / "The printer is
# on" (`on` is too common a word to compare), "enabled" / "disabled". Read per word, so `kick-off`
# is not off; German `aus` is off only at a clause's end ("Das Licht ist aus.", not "aus Berlin").
_OFF = frozenset("off disabled deactivated inactive paused deaktiviert ausgeschaltet abgeschaltet inaktiv "
                 "pausiert".split())
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
# states something else, however many words they share. Words between two `|` say the same value
# (the first is the key). Function words are here too: "until" / "from" Friday, "is" / "was" (one
# is no longer true), "and" / "or" differ though a reader's eye slides over them.
_CLASSES = {
    "modes": "dark dunkel | light hell",
    "environments": "production prod | staging | dev development | sandbox | local | frontend | backend",
    "times of day": "morning morgens vormittags | afternoon nachmittags | evening abends | night nachts "
                    "| noon mittags | midnight",
    "frequencies": "hourly stündlich | daily täglich | nightly | weekly wöchentlich | biweekly "
                   "| monthly monatlich | quarterly | yearly annually jährlich",
    "units": "second sekunde | minute | hour stunde | day tag | week woche | month monat | year jahr",
    "bounds": "minimum min least mindestens | maximum max most höchstens maximal",
    "before/after": "before prior vor | after nach | until till bis | from ab starting | since seit | to",
    "early/late": "early earlier früh | late later spät später",
    "order": "last letzte letzten letzter letztes final | next nächste nächsten nächster | previous vorherige",
    "more/less": "more mehr | less fewer weniger",
    "above/below": "above over über oberhalb | below under unter unterhalb",
    "higher/lower": "higher greater bigger larger höher größer | lower smaller niedriger kleiner",
    "in/out": "in inside drinnen | out outside draußen",
    "and/or": "and und | or oder",
    "how often": "always immer | usually normally meistens normalerweise | often frequently oft häufig "
                 "| sometimes manchmal | rarely seldom selten | occasionally gelegentlich",
    "how many": "all every each alle jeden jede jeder | some einige manche | few wenige | many viele",
    "must/may": "must muss müssen | should sollte sollten | may might darf dürfen | can could kann können",
    # Not "am": German "am Montag" is a preposition.
    "tense": "is are has have will ist sind bin bist hat haben wird werden | was were had war waren warst "
             "hatte hatten wurde wurden",
}
CLASS_OF = {w: (kind, group.split()[0]) for kind, groups in _CLASSES.items()
            for group in groups.split("|") for w in group.split()}
# How `similarity.signature` writes a word so that synonyms count as one shared word ("till" is
# "until", "three" is the number 3), not as a word swapped for another.
CANON = {w: key for w, (_, key) in CLASS_OF.items() if w != key} | {
    w: f"#{n}" for w, n in _NUMBER_WORDS.items()}
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
    off: str | None
    sides: tuple[tuple[str, str], ...]  # (stem, "L"/"R") near "A over B"
    frame: tuple[str, ...] = ()  # the content words in order, "*" where names stand
    roles: tuple[frozenset[str], ...] = ()  # the names in each "*" ("Anna and Tom" is one)
    past: tuple[str, ...] = ()  # verbs in the past tense ("lived"), not passives ("is used")
    again: bool = False  # says again, wieder: one more time of what the other says


# "Anna and Tom meet Lisa": Anna and Tom share a role. Filler words do not change the frame.
_CONJ = frozenset("and or und oder & sowie plus".split())
_FILLER = frozenset("again still also today yesterday confirmed reconfirmed wieder noch weiterhin heute".split())
# Before a participle these make a passive or a perfect ("is used", "has moved") or an adjective
# ("a detailed report"), not a past tense; verbs that report a saying are past whatever the fact's
# tense ("User mentioned ...").
_AUX = frozenset("is are was were be been being get gets got has have had ist sind war wurde a an the".split())
# Common irregular pasts, to their present: "took" / "takes" the train.
_IRREGULAR = dict(w.split(":") for w in """took:take went:go ran:run paid:pay sent:send made:make kept:keep
    held:hold bought:buy chose:choose led:lead met:meet wrote:write drove:drive gave:give came:come
    sat:sit stood:stand spent:spend taught:teach thought:think wore:wear ate:eat drank:drink flew:fly
    knew:know sold:sell told:tell brought:bring found:find lost:lose""".split())
_REPORTING = frozenset("""mentioned noted confirmed reconfirmed decided agreed asked repeated reminded added
    stated explained reiterated emphasized stressed insisted requested suggested""".split())


_DAY_OF = {f: en for en, de in _DAYS.items() for f in (en, de, en + "s", de + "s")} | dict.fromkeys(
    "weekday weekdays workday workdays werktag werktage werktags wochentag wochentage wochentags".split(),
    "weekday") | dict.fromkeys("weekend weekends wochenende wochenenden".split(), "weekend")
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


def _letter(tok: str, initial: bool) -> Value | None:
    """A letter alone names something (room B, plan A, option c), except the words a, A (first in
    a sentence), I and i."""
    if tok in "aiI" or (tok == "A" and initial):
        return None
    return ("names", tok.lower(), tok)


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
    if len(tok) == 1 and tok.isalpha():
        return _letter(tok, initial)
    kind = CLASS_OF.get(low) or CLASS_OF.get(_stem(low))
    if kind:
        return (kind[0], kind[1], tok)
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
    frame: list[str] = []
    roles: list[set[str]] = []
    past: list[str] = []
    compare_at, prev_end, prev, in_role, off, again = -1, 0, "", False, "", False
    for m in TOKEN_RE.finditer(text):
        gap, raw = text[prev_end:m.start()], m.group()
        # A sentence starts the text, a line, or follows . ! ? (capitals there are not names).
        initial = not prev or prev.endswith(".") or any(c in ".!?\n" for c in gap) or raw in "-*"
        after = prev.lower()
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
        if raw[:1] in "/@" and len(raw) > 1:
            value: Value | None = ("names", low, raw)
        elif low == "other" and after == "every":
            value = ("numbers", "2", "every other")  # "every other month" is every second one
        else:
            value = _classify(tok, initial or (tok == "A" and after.endswith((":", "-", "—"))))
        if value is not None:
            values.append(value)
            keys.add(value[1])
        # A name, or a capitalised word ("Anna" first in the sentence), fills a role; "and" joins two
        # names in one role, any other word ends it.
        if value is not None and value[0] == "names" or (
                tok[:1].isupper() and low not in _NOT_NAMES and low not in STOPWORDS):
            if not in_role:
                frame.append("*")
                roles.append(set())
            roles[-1].add(low)
            in_role = True
        elif low not in _CONJ:
            in_role = False
            if low not in STOPWORDS and low not in _FILLER:
                frame.append(_stem(low))
        if (low in _IRREGULAR or low.endswith("ed")) and _is_past(low, after.strip(".:'’-/")):
            past.append(low)
        if low in _OFF or low == "aus" and _ends_clause(text, m.end()):
            off = off or low
        again = again or low in _AGAIN or low == "more" and after == "once"
        # "Use tabs, not spaces": what stands before and after `, not` is compared like over/than.
        if (COMPARE_RE.match(tok) or (low in ("not", "nicht") and "," in gap)) and compare_at < 0:
            compare_at = len(words)
        elif low not in STOPWORDS:
            words.append(_stem(low))
    sides: tuple[tuple[str, str], ...] = ()
    if compare_at >= 0:
        sides = tuple((w, "L") for w in words[max(0, compare_at - 2):compare_at]) + tuple(
            (w, "R") for w in words[compare_at:compare_at + 2])
    neg, change = NEGATION_RE.search(text), CHANGE_RE.search(text)
    return Facts(tuple(values), frozenset(keys), neg.group().lower() if neg else None,
                 change.group().lower() if change else None, off or None, sides,
                 tuple(frame), tuple(frozenset(r) for r in roles), tuple(past), again)


def _ends_clause(text: str, i: int) -> bool:
    """Only blanks between `i` and the text's end or . ! ? ; , (no regex: a search for blanks from
    every position would be quadratic on a run of blanks; this scan stops at the next word)."""
    n = len(text)
    while i < n and text[i].isspace():
        i += 1
    return i == n or text[i] in ".!?;,"


def _is_past(low: str, after: str) -> bool:
    return (low in _IRREGULAR or len(low) > 4 and low.endswith("ed") and low.isalpha()) \
        and after not in _AUX and low not in _REPORTING


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


def _tense_differs(a: Facts, b: Facts) -> str | None:
    """"lived" in `a` where `b` says "lives" or "live": one is no longer true."""
    for word in a.past:
        if word in b.keys:
            continue
        if word in _IRREGULAR:
            s = _IRREGULAR[word]
            forms: tuple[str, ...] = (s, _stem(s + "s"), s + "s", s + "es")
        else:
            s = _stem(word)
            forms = (s, s + "e", s[:-1] if len(s) > 3 and s[-1] == s[-2] else s, s[:-1] + "y")
        if any(f in b.keys for f in forms):
            return f"one says it in the past tense ({word})"
    return None


def facts_differ(a: Facts, b: Facts) -> str | None:
    """Why two texts state different facts, or None when nothing they state differs."""
    if (a.negation is None) != (b.negation is None):
        return f"one says not ({a.negation or b.negation})"
    if (a.change is None) != (b.change is None):
        return f"one states a change ({a.change or b.change}), not a repeat"
    if (a.off is None) != (b.off is None):
        return f"one says off ({a.off or b.off})"
    # "Standup was at 9 again" is one more time of a habit, not a fact that is no longer true.
    kinds = dict.fromkeys(k for k, _, _ in a.values + b.values if k != "tense" or not (a.again or b.again))
    for kind in kinds:
        mine, theirs = _unmatched(a, b, kind), _unmatched(b, a, kind)
        if mine and theirs:
            return f"{kind} differ: {', '.join(mine)} / {', '.join(theirs)}"
        if (mine or theirs) and kind in ONE_SIDED:
            return f"{kind} differ: {', '.join(mine) or 'none'} / {', '.join(theirs) or 'none'}"
    if a.frame == b.frame and a.roles != b.roles and set().union(*a.roles) == set().union(*b.roles):
        return "the names swap places (who does what to whom)"
    tense = None if a.again or b.again else _tense_differs(a, b) or _tense_differs(b, a)
    if tense:
        return tense
    side_b = dict(b.sides)
    for word, side in a.sides:
        if side_b.get(word, side) != side:
            return f"the order is reversed ({word} on the other side of over/than)"
    return None
