"""How alike two texts are, for curate: the content words they share, unless one denies it.

Two entries (or an entry and a bullet) "say the same" when their stemmed content words overlap
enough (Dice); one that says `not` never matches one that does not, so a correction is not
taken for a repeat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memvault.entries.timeline import STOPWORDS, WORD_RE, stem

EXTRA_STOP = frozenset({
    "user", "users", "they", "them", "their", "he", "she", "his", "her", "i", "we", "you", "me", "my",
    "our", "said", "says", "say", "mentioned", "again", "also", "still", "really", "very", "just",
    "has", "have", "had", "will", "would", "should", "does", "do", "did", "are", "am", "been", "being",
})
NEGATION_RE = re.compile(r"\b(?:not|no|never|nor|without|cannot)\b|n[’']t\b", re.IGNORECASE)
NEGATION_WORDS = frozenset({"not", "no", "never", "nor", "without", "cannot"})


@dataclass(frozen=True)
class Sig:
    tokens: frozenset[str]
    negated: bool


def signature(text: str) -> Sig:
    words = WORD_RE.findall(text.lower())
    toks = frozenset(
        stem(w) for w in words
        if w not in STOPWORDS and w not in EXTRA_STOP and w not in NEGATION_WORDS and len(w) > 1 and not w.isdigit()
    )
    return Sig(toks, bool(NEGATION_RE.search(text)))


def similarity(a: Sig, b: Sig, *, guard: bool = True) -> float:
    """Dice overlap of content words; 0 when one says `not` and the other does not."""
    if guard and a.negated != b.negated:
        return 0.0
    if not a.tokens or not b.tokens:
        return 0.0
    shared = len(a.tokens & b.tokens)
    if shared < min(2, len(a.tokens), len(b.tokens)):
        return 0.0
    return 2 * shared / (len(a.tokens) + len(b.tokens))
