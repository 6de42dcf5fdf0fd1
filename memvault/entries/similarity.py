"""Whether two texts say the same, for curate: the content words they share, and nothing they
state that differs.

Two entries (or an entry and a bullet) "say the same" when their stemmed content words overlap
enough (Dice) and `differs` finds no reason to keep them apart: a different name, number, date or
value, one that says `not`, one that states a change, or one word swapped for another in an
otherwise identical text (docs/curate.md, "Same thing, said twice").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from memvault.entries.facts import CANON, Facts, facts, facts_differ, number_keys
from memvault.entries.facts import NEGATION_WORDS as ALL_NEGATIONS
from memvault.entries.words import STOPWORDS, WORD_RE, stem

EXTRA_STOP = frozenset({
    "user", "users", "they", "them", "their", "he", "she", "his", "her", "i", "we", "you", "me", "my",
    "our", "said", "says", "say", "mentioned", "again", "also", "still", "really", "very", "just",
    "has", "have", "had", "will", "would", "should", "does", "do", "did", "are", "am", "been", "being",
    "must", "can", "could", "only", "as", "usual", "every", "each", "always", "confirmed", "confirm", "confirms", "repeated",
    "repeat", "repeats", "reminded", "remind", "reminder", "lesson", "learned", "learnt", "noted", "note",
    # German function words: without them German texts share "der"/"die" and differ in "wir"/"wird".
    *"""der die das dem den des ein eine einer einem einen eines und oder aber ist sind war waren wird
    werden wurde wurden bin bist sein hat haben habe hatte ich du er sie es wir ihr uns euch mich mir dich
    mit für auf im am um zu zur zum von vom bei beim aus als auch noch schon nur so wie wieder weiterhin
    immer bleibt bleiben""".split(),
})
# Verbs that carry little of a fact: "holds" for "lives in", "takes" for "lasts". A text that swaps
# one of these for another word is still a rewording, not a different fact.
LIGHT_WORDS = ("""be take get go make keep stay use run hold live happen need put come give seem become
    remain work want like prefer love wish go went sent send ship""".split())
NEGATION_WORDS = frozenset({"not", "no", "never", "nor", "without", "cannot"})
DEFAULT_SIMILARITY = 0.6  # [curate] similarity's default


@dataclass(frozen=True)
class Sig:
    tokens: frozenset[str]
    negated: bool
    text: str = ""

    @cached_property
    def facts(self) -> Facts:
        """What the text states; read only for pairs similar enough to merge (it costs ~20 µs a word)."""
        return facts(self.text)


IRREGULAR = {"paid": "pay", "ran": "run", "went": "go", "sent": "send", "made": "make", "took": "take",
              "held": "hold", "kept": "keep", "bought": "buy", "chose": "choose", "chosen": "choose"}


@lru_cache(maxsize=65536)
def norm(word: str) -> str:
    """`stem`, a little less crude: running = run, jammed = jam, takes = take = tak, paid = pay."""
    w = stem(IRREGULAR.get(word, word))
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    if len(w) >= 5 and w.endswith("ing"):
        w = w[:-3]
    if len(w) >= 3 and w.endswith("e"):
        w = w[:-1]
    return w


LIGHT = frozenset(norm(w) for w in LIGHT_WORDS)


@lru_cache(maxsize=65536)
def _canon(word: str) -> str:
    """`norm`, with a class synonym written as its value and a number word as its number."""
    canon = CANON.get(word)
    return norm(word) if canon is None else canon if canon[0] == "#" else norm(canon)


def signature(text: str) -> Sig:
    low = text.lower()
    words = WORD_RE.findall(low)
    # The same test as facts.NEGATION_RE, without scanning the text with a regex again.
    negated = not ALL_NEGATIONS.isdisjoint(words) or "n't" in low or "n’t" in low
    toks = frozenset(
        _canon(w) for w in words
        if w not in STOPWORDS and w not in EXTRA_STOP and w not in NEGATION_WORDS and len(w) > 1 and not w.isdigit()
    ) | {f"#{key}" for key in number_keys(text)}  # a shared number or date counts as a shared word
    return Sig(toks, negated, text)


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


def _sig(x: Sig | str) -> Sig:
    return signature(x) if isinstance(x, str) else x


def _near(word: str, others: frozenset[str]) -> bool:
    """`word`, or a word that starts as it does ("format" / "formatt", "allergic" / "allergy")."""
    return word in others or any(_prefix(word, o) >= max(4, min(len(word), len(o)) - 2) for o in others)


def _prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def differs(a: Sig | str, b: Sig | str) -> str | None:
    """Why two texts are different facts however many words they share, or None."""
    sa, sb = _sig(a), _sig(b)
    why = facts_differ(sa.facts, sb.facts)
    if why:
        return why
    only_a, only_b = sa.tokens - sb.tokens, sb.tokens - sa.tokens
    if len(only_a) > 8 or len(only_b) > 8:
        return None  # not a swap of a word or two (and comparing prefixes would cost |a|·|b|)
    only_a = frozenset(w for w in only_a if not _near(w, sb.tokens))
    only_b = frozenset(w for w in only_b if not _near(w, sa.tokens))
    if 1 <= len(only_a) <= 2 and 1 <= len(only_b) <= 2 and len(sa.tokens & sb.tokens) >= 2 \
            and LIGHT.isdisjoint(only_a | only_b):
        # A word or two swapped in a text that otherwise says the same: those words are the fact.
        return f"words differ: {' '.join(sorted(only_a))} / {' '.join(sorted(only_b))}"
    return None


def same_fact(a: Sig | str, b: Sig | str, threshold: float = DEFAULT_SIMILARITY) -> bool:
    """Whether two texts say the same: enough shared words, and nothing they state differs."""
    sa, sb = _sig(a), _sig(b)
    return similarity(sa, sb) >= threshold and differs(sa, sb) is None
