"""Which texts say the same (curate's `same_fact`), for every pair of a vault's texts at once.

Retention counts each later entry that says the same as an entry (entries/presentations.py).
Comparing every pair costs n² `same_fact` calls; this join finds the same pairs by comparing only
texts that share enough of their rarest signature words (pure, no I/O; said_store.py keeps the
answer). Exact for curate's test:

- `same_fact` needs Dice ≥ t over the signature tokens, so two texts share at least
  α(x) = ⌈t·|x|/(2−t)⌉ tokens (the fewest any partner of x can share with it), and both say
  `not` or neither (`similarity`'s negation guard: the two kinds are joined apart).
- m-extended prefix filtering (m = 2): with every text's tokens sorted rarest first, two texts
  sharing o ≥ max(α(x), α(y)) tokens share at least min(2, o) of their first |x| − α(x) + 2
  tokens (the k-th shared token stands at most o − k places from x's end). Texts with α < 2
  (one or two tokens) are few and are compared with every text sharing a token with them.
- The candidates' `same_fact` is asked both ways (`facts_differ` compares two texts' facts in
  order); a pair is kept in each direction it holds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import TypeVar

from memvault.entries.similarity import Sig, same_fact, similarity

K = TypeVar("K")
H = TypeVar("H")
PREFIX_EXTRA = 2  # m of the m-extended prefix


def keyed_tokens(sig: Sig) -> list[str]:
    """The signature's tokens, marked by whether the text says `not` (never joined across)."""
    mark = "!" if sig.negated else ""
    return [mark + t for t in sig.tokens]


def min_overlap(size: int, threshold: float) -> int:
    """α: the fewest tokens a text of `size` tokens shares with any text it is as similar to as `threshold`."""
    return max(1, math.ceil(threshold * size / (2 - threshold) - 1e-9))


def verify(a: K, b: K, sigs: Mapping[K, Sig], threshold: float) -> list[tuple[K, K]]:
    """The directions in which `a` and `b` say the same."""
    sa, sb = sigs[a], sigs[b]
    if similarity(sa, sb) < threshold:
        return []
    return [pair for pair, (x, y) in (((a, b), (sa, sb)), ((b, a), (sb, sa))) if same_fact(x, y, threshold)]


def self_same(sig: Sig, threshold: float) -> bool:
    """Whether two entries with this very text say the same (no tokens: never)."""
    return same_fact(sig, sig, threshold)


def join(sigs: Mapping[K, Sig], threshold: float, extra: int = PREFIX_EXTRA) -> set[tuple[K, K]]:
    """Every ordered pair (a, b), a ≠ b, with `same_fact(sigs[a], sigs[b], threshold)`."""
    keys = [k for k, s in sigs.items() if s.tokens]
    toks = {k: keyed_tokens(sigs[k]) for k in keys}
    df: Counter[str] = Counter()
    for k in keys:
        df.update(toks[k])
    order = {t: (n, t) for t, n in df.items()}
    pairs: set[tuple[K, K]] = set()
    small: list[K] = []
    postings: dict[str, list[int]] = {}
    normal: list[K] = []
    sets: list[frozenset[str]] = []
    half = threshold / 2
    for k in keys:
        ranked = sorted(toks[k], key=order.__getitem__)
        alpha = min_overlap(len(ranked), threshold)
        if alpha < extra:
            small.append(k)
            continue
        me = len(normal)
        found_in = [postings.setdefault(t, []) for t in ranked[: len(ranked) - alpha + extra] if df[t] > 1]
        normal.append(k)
        mine = sigs[k].tokens
        sets.append(mine)
        floor = half * len(mine)
        # Dice first, inline (most candidates fail it); `verify` asks the whole test of the rest.
        for j in [j for j in at_least(found_in, extra) if len(mine & sets[j]) >= floor + half * len(sets[j])]:
            pairs.update(verify(normal[j], k, sigs, threshold))
        for found in found_in:
            found.append(me)
    pairs |= _small_pairs(small, keys, toks, threshold, sigs)
    return pairs


def at_least(lists: list[list[H]], times: int) -> set[H]:
    """The numbers found in `times` of `lists` or more (each list without repeats), counted with
    set operations in C: a Python loop over every posting is what made the join slow."""
    if times <= 1:
        return set().union(*lists)
    if times > 2:  # a level per count costs more than counting each posting once
        return {h for h, n in Counter(chain.from_iterable(lists)).items() if n >= times}
    levels: list[set[H]] = [set() for _ in range(times)]
    for found in lists:
        for lvl in range(times - 1, 0, -1):
            if levels[lvl - 1]:
                levels[lvl].update(levels[lvl - 1].intersection(found))
        levels[0].update(found)
    return levels[-1]


def _small_pairs(small: list[K], keys: list[K], toks: Mapping[K, list[str]], threshold: float,
                 sigs: Mapping[K, Sig]) -> set[tuple[K, K]]:
    """Pairs with a text of few tokens (α below the prefix's `extra`): compared with every text
    sharing α of its tokens, counted over all tokens."""
    if not small:
        return set()
    wanted = {t for k in small for t in toks[k]}
    holders: dict[str, list[K]] = {t: [] for t in wanted}
    for k in keys:
        for t in toks[k]:
            if t in wanted:
                holders[t].append(k)
    pairs: set[tuple[K, K]] = set()
    for k in small:
        alpha = min_overlap(len(toks[k]), threshold)
        for other in at_least([holders[t] for t in toks[k]], alpha):
            if other != k:
                pairs.update(verify(k, other, sigs, threshold))
    return pairs


def brute_force(sigs: Mapping[K, Sig], threshold: float) -> set[tuple[K, K]]:
    """Every ordered pair by asking `same_fact` of each: the definition `join` must equal (tests)."""
    return {(a, b) for a in sigs for b in sigs if a != b and same_fact(sigs[a], sigs[b], threshold)}


def probe_floor(sig: Sig, threshold: float) -> int:
    """How many of its tokens a stored text must share with `sig` to be compared with it."""
    return min_overlap(len(sig.tokens), threshold)


def partners(new: K, candidates: Iterable[K], sigs: Mapping[K, Sig], threshold: float) -> set[tuple[K, K]]:
    """The pairs of `new` with the candidates (a store's texts sharing at least `probe_floor` tokens)."""
    out: set[tuple[K, K]] = set()
    for other in candidates:
        if other != new:
            out.update(verify(new, other, sigs, threshold))
    return out
