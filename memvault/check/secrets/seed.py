"""Wallet seed phrases: "seed phrase: rocket velvet island … canyon" (12 to 24 words).

A BIP-39 mnemonic is the whole wallet, and agents that trade keep them in notes. It has no
fixed shape a regex could name, so the rule is led by its word (seed phrase, mnemonic,
recovery phrase, Wiederherstellungsphrase) and judges what follows by shape: 12, 15, 18, 21
or 24 words of 3 to 8 lower-case letters (numbered or not), and nothing after them but the
end of the line or a closing mark. Prose after the word ("seed phrase: written on paper and
kept in the safe") fails on its length, its short words or the words that go on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

# One str.find pass over the text per hint: "phrase" stands for recovery, backup and
# Wiederherstellungs-phrase alike.
HINTS = ("seed", "mnemonic", "phrase")
LEAD_RE = re.compile(
    r"(?i)(?<![\w-])(?:seed(?:[ -]?phrase|[ -]?words?)?|mnemonic(?:[ -]phrase)?|(?:secret[ -])?recovery[ -]phrase|"
    r"backup[ -]phrase|wiederherstellungsphrase)(?![\w-])"
)
LENGTHS = {12, 15, 18, 21, 24}
WORD_RE = re.compile(r"(?:\d{1,2}[.)])?([A-Za-z][a-z]{2,7})")
# Words of English prose that are not BIP-39 words: one of them in the run means prose.
PROSE_WORDS = {"the", "and", "for", "was", "are", "not", "but", "you", "your", "our", "has", "had", "its", "his",
               "her", "with", "from", "been", "were", "into"}
CONNECTORS = {"is", "was", "ist", "lautet", "=", ":", "-", "\u2013", "\u2014"}
TOKEN_RE = re.compile(r"\S+")
CLOSERS = "\"'`)]}>*"


def _clean(token: str) -> str:
    return token.strip(CLOSERS + "([{").rstrip(".,;").strip(CLOSERS)


def _words_from(tokens: list[re.Match[str]], i: int) -> tuple[int, int] | None:
    """(first, last) token index of a mnemonic starting at tokens[i], or None.

    Numbers between the words ("1. abandon 2. ability", "1 abandon") are numbering.
    """
    n, j, last = 0, i, -1
    while j < len(tokens) and n <= 24:
        raw = _clean(tokens[j][0])
        if raw.isdigit() and len(raw) <= 2:
            j += 1
            continue
        m = WORD_RE.fullmatch(raw)
        if m is None or (n and not m[1].islower()) or m[1].lower() in PROSE_WORDS:
            break
        n, last, j = n + 1, j, j + 1
    if n not in LENGTHS:
        return None
    after = tokens[j][0] if j < len(tokens) else ""
    if after[:1] != "(" and any(c.isalpha() for c in after):
        return None  # the words go on: prose, not a phrase
    return i, last


@lru_cache(maxsize=1024)  # a repeated line is judged once
def seed_phrase(tail: str) -> tuple[int, int] | None:
    """(start, end) in `tail` (the text after the lead word) of a stated mnemonic, if there is one."""
    tokens = list(TOKEN_RE.finditer(tail[:400]))
    start = 0
    for k, tok in enumerate(tokens[:6]):  # "seed phrase for the cold wallet: …", "mnemonic is …"
        if tok[0].lower() in CONNECTORS or tok[0].endswith((":", "=")):
            start = k + 1
            break
    found = _words_from(tokens, start) if start < len(tokens) else None
    if found is None:
        return None
    first, last = tokens[found[0]], tokens[found[1]]
    return first.start(), last.end()


def seed_hits(start: int, line: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, code) of each seed phrase stated after its word in `line`."""
    for m in LEAD_RE.finditer(line):
        span = seed_phrase(line[m.end() : m.end() + 400])
        if span is not None:
            yield start + m.end() + span[0], start + m.end() + span[1], "wallet seed phrase", "MV511"
            return
