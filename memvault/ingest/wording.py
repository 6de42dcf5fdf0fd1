"""The words the built-in extractor looks for, English and German, and how it words a fact. Pure."""

from __future__ import annotations

import re

from memvault.entries.words import WORD_RE

ABBREV_RE = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Nr|ca|bzw|z\.B|d\.h|e\.g|i\.e|vs|Str)\.$")

INSTRUCTION_EN = re.compile(
    r"^(?:please,?\s+)?(?P<c1>(?:don'?t|do not)\s+\w.+)$"
    r"|(?:^(?:please,?\s+)?|[,;:]\s*|\b(?:and|so|please|but)\s*,?\s+)"
    r"(?P<clause>(?:always|never|from now on|make sure (?:to|you)|remember to)\b.+)$", re.IGNORECASE)
INSTRUCTION_DE = re.compile(
    r"^(?!ich\b)(?=.*\b(?:immer|nie|niemals|ab sofort|ab jetzt|künftig|in zukunft)\b)"
    r"(?=.*\bbitte\b|(?:ab sofort|ab jetzt|künftig|in zukunft)\b|(?:nenn|schreib|ruf|sprich|schick|antworte|sag|mach)\w*\b)", re.IGNORECASE)
NAME_RE = re.compile(
    r"\b(?P<verb>(?i:call me|you can call me|address me as|my name is|my name's|i go by|nenn(?:t|en sie)? mich|"
    r"ich heiße|ich heisse|mein name ist))\s+"
    r"(?P<name>(?:(?:Dr|Prof|Mr|Mrs|Ms|Mx|Herr|Frau)\.?\s+)?[A-ZÄÖÜ][\w'’-]+(?:\s+[A-ZÄÖÜ][\w'’-]+){0,3})")
PREFERENCE_EN = re.compile(
    r"(?:^|[,;]\s*|\b(?:and|but|so|honestly|actually)\s*,?\s+)(?:i|we)\s+"
    r"(?:(?:really|much|definitely|strongly|generally|usually|also|still)\s+)?"
    r"(?P<verb>prefer|(?:would|'d)\s+rather|(?:love|like|hate|dislike|can'?t stand|don'?t like|do not like)(?!\s+to\b))"
    r"\s+(?P<what>.+)$", re.IGNORECASE)
PREFERENCE_DE = re.compile(
    r"\b(?:ich|wir)\s+(?:\w+\s+)?(?:bevorzuge|bevorzugen|mag|mögen|liebe|lieben|hasse|hassen)\b"
    r"|\b(?:mir|uns)\s+(?:ist|wäre|sind)\s.{1,40}\blieber\b"
    r"|\b(?:ich|wir)\s+(?:hätte|hätten|möchte|möchten|nehme|nehmen|würde|würden)\s.{0,40}\blieber\b", re.IGNORECASE)
DECISION_EN = re.compile(
    r"\b(?:(?P<past>(?:we|i)(?:'ve| have)? (?:decided|agreed|chosen|booked)|it'?s decided|we went with)"
    r"(?:\s+(?:to|on|that|for))?|let'?s go with|let'?s book|we'?ll go with|we(?:'re| are) going with|"
    r"i'?ll go with|go ahead with|the decision is)\s+(?P<what>.+)$", re.IGNORECASE)
DECISION_DE = re.compile(
    r"\b(?:(?P<past>(?:wir haben|ich habe) (?:uns |mich )?(?:\S+ ){0,6}?(?:entschieden|beschlossen|gebucht)|"
    r"wir sind uns einig)|wir nehmen|lass(?:t)? uns (?:\S+ ){1,6}?nehmen|machen wir es so|wir machen das mit)\b", re.IGNORECASE)
PERSONAL_EN = re.compile(
    r"(?:^|\b(?:and|but|so|also)\s+|[,;]\s*)my\s+(?P<what>(?!day\b|week\b|weekend\b|morning\b|pleasure\b|bad\b|"
    r"fault\b|guess\b|point\b|question\b|problem\b|name\b)[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,3}?)\s+"
    r"(?P<verb>is|are|will be)\s+(?P<val>.+)$", re.IGNORECASE)
PERSONAL_DE = re.compile(
    r"^(?:also,?\s+|und\s+)?(?:mein|meine)\s+(?!tag\b|woche\b)[\wäöüß-]+(?:\s+[\wäöüß-]+){0,2}?\s+"
    r"(?:ist|sind|wird|liegt|beträgt)\s+\S", re.IGNORECASE)
CORRECTION_EN = re.compile(
    r"^(?:(?:oh|um|uh|hm+),?\s+)?(?P<how>(?:actually|correction|wait|oops|sorry)\b[,:!]?"
    r"|no[,.!]\s+(?=(?:it'?s|it is|that'?s|the|make it|i meant|my|our)\b)|i meant\b)\s*(?P<what>.+)$", re.IGNORECASE)
CORRECTION_DE = re.compile(
    r"^(?:(?:ach|äh|ähm|oh),?\s+)?(?P<how>(?:eigentlich|korrektur|moment|sorry|halt)\b[,:!]?"
    r"|nein[,.!]\s+|doch\s+|ich meinte\b)\s*(?P<what>.+)$", re.IGNORECASE)
SOFT_CORRECTION = ("actually", "wait", "oops", "sorry", "eigentlich", "moment", "halt")  # need a "not Y"
# One blank before "not" (the value is stripped after): `\s+` after a lazy `.+?` would rescan a
# run of blanks at every step (quadratic on hostile input: tests/test_hostile_inputs.py).
NEW_NOT_OLD = re.compile(r"^(?P<new>.+?)[,;]?\s(?:not|nicht|statt|anstatt|instead of|rather than)\s"
                         r"(?P<old>[^,.;!?—–]+)", re.IGNORECASE)
NOT_OLD_BUT_NEW = re.compile(r"^(?:not|nicht)\s+(?P<old>.+?),?\s(?:but|sondern)\s+(?P<new>.+)$", re.IGNORECASE)
# What a decision's words begin with that is not the decision: "As we decided yesterday, we use
# Postgres" decided "we use Postgres"; "I booked it: confirmation number X" decided nothing (an id).
DECISION_LEAD_RE = re.compile(r"^(?:yesterday|today|earlier|before|last \w+|this \w+|on \w+day)\b,?\s*", re.IGNORECASE)
DECISION_EMPTY_RE = re.compile(r"^(?:it|that|this|them|those)\b(?:$|[:;,.!\-\u2013\u2014])", re.IGNORECASE)
# A reminder at a fact's end that is not part of it ("I prefer window seats, remember that").
REMINDER_TAILS = ("remember that", "remember this", "please remember", "don't forget that", "don't forget",
                  "keep that in mind", "keep it in mind", "note that", "merk dir das", "bitte merken")
FILLER_RE = re.compile(r"^(?:it'?s|it is|that'?s|that is|make it|rather|it should be|it will be|it'?ll be|"
                       r"es ist|das ist|es sind|es wird|lieber|doch|eher|the right one is)\s+", re.IGNORECASE)
ID_RE = re.compile(
    r"\b(?P<label>(?i:order|tracking|booking|confirmation|reservation|ticket|invoice|case|shipment|policy|"
    r"customer|contract|bestellung|bestellnummer|auftragsnummer|auftrag|sendungsnummer|sendung|trackingnummer|"
    r"buchungsnummer|buchung|kundennummer|vertragsnummer|rechnungsnummer|rechnung|reservierungsnummer|"
    r"reservierung|vorgangsnummer|aktenzeichen|ticketnummer))"
    r"(?:\s+(?i:number|no\.?|nr\.?|id|code|reference|ref\.?|#))?(?:\s+(?i:is|lautet|ist))?\s*[:#,]?\s*"
    r"(?P<id>(?=[A-Z0-9-]*[0-9])[A-Z0-9][A-Z0-9-]{3,})\b")
ID_LABELS = {
    "bestellung": "order", "bestellnummer": "order", "auftragsnummer": "order", "auftrag": "order",
    "sendungsnummer": "tracking", "sendung": "tracking", "trackingnummer": "tracking", "shipment": "tracking",
    "buchungsnummer": "booking", "buchung": "booking", "kundennummer": "customer", "vertragsnummer": "contract",
    "rechnungsnummer": "invoice", "rechnung": "invoice", "reservierungsnummer": "reservation",
    "reservierung": "reservation", "vorgangsnummer": "case", "aktenzeichen": "case", "ticketnummer": "ticket",
}
GERMAN = frozenset("""ich und nicht ist wir bitte der die das mit für auf mich mir uns eine ein zu kein keine nein
    doch eigentlich lieber schon auch aber wie was wann wo dass es sie ihr mein meine den dem sind haben
    nehmen gibt noch gerne danke""".split())
ENGLISH = frozenset("""the and i is we please not to my me you it of for with a an are have be that this
    what when where yes no thanks can will would""".split())
THIRD_PERSON = [
    (re.compile(r"\bI'm\b|\bI am\b"), "the user is"), (re.compile(r"\bI've\b"), "the user has"),
    (re.compile(r"\bI'd\b"), "the user would"), (re.compile(r"\bI'll\b"), "the user will"),
    (re.compile(r"\bI\b"), "the user"), (re.compile(r"\b(?:me|myself)\b", re.IGNORECASE), "the user"),
    (re.compile(r"\b(?:my|mine)\b", re.IGNORECASE), "the user's"),
]


def german(text: str) -> bool:
    words = WORD_RE.findall(text.lower())
    de = sum(w in GERMAN for w in words)
    return de > sum(w in ENGLISH for w in words)


def third_person(text: str) -> str:
    """The user's own words about themselves, as a memory says them ("me" -> "the user")."""
    for pattern, repl in THIRD_PERSON:
        text = pattern.sub(repl, text)
    return text


def sentence(text: str) -> str:
    """One line, a capital first letter, one final full stop."""
    text = " ".join(text.split()).rstrip(" .!?…")
    return (text[:1].upper() + text[1:] + ".") if text else ""


def drop_reminder(text: str) -> str:
    """`text` without a trailing "remember that" (string ends, no pattern: nothing to backtrack)."""
    core = text.rstrip(" .!")
    low = core.lower().replace("\u2019", "'")
    for tail in REMINDER_TAILS:
        if low.endswith(tail) and (len(low) == len(tail) or not low[-len(tail) - 1].isalnum()):
            return core[: len(core) - len(tail)].rstrip(" ,;:-\u2013\u2014")
    return text


def split_correction(what: str) -> tuple[str, str | None]:
    """A correction's new value and the old one it names ("X, not Y", "not Y but X"), if any."""
    m = NOT_OLD_BUT_NEW.match(what) or NEW_NOT_OLD.match(what)
    if not m:
        return what, None
    return m["new"].strip(" ,;"), m["old"].strip(" .!,;—–-") or None


def new_value(text: str, old: str | None = None) -> str:
    """The value a correction gives: "it's March 14" -> "March 14"; with a short old value, as many
    words from the end ("let's move on March 14, not March 12" -> "March 14")."""
    text = text.strip(" ,.;!—–-")
    while (m := FILLER_RE.match(text)) is not None:
        text = text[m.end():]
    words, n = text.split(), len(old.split()) if old else 0
    if words and words[-1].lower().strip(" ,.;!") in ("instead", "stattdessen"):
        words = words[:-1]
        text = " ".join(words)
    return " ".join(words[-n:]) if 0 < n <= 3 and len(words) > n else text
