"""Which entries BM25 scores at all, planned per query.

When a query's words together occur in more than `score_limit` entries, its rarer words select
the entries and the commoner ones only add to their scores (the common-terms cutoff,
docs/search.md). The index's backends and the in-memory BM25 follow the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memvault.search.textproc import Query


@dataclass(frozen=True)
class Plan:
    """Which entries a query's BM25 scores. Exhaustive (`select` empty): every entry that holds
    any query word. Otherwise only entries that hold any word of `select` (all of them when
    `every`) or one of the query's compounds; their scores still count every query word."""

    select: tuple[str, ...] = ()
    every: bool = False

    @property
    def exhaustive(self) -> bool:
        return not self.select

    def admits(self, has: Callable[[str], bool], has_compound: bool) -> bool:
        if self.exhaustive or has_compound:
            return True
        return (all if self.every else any)(has(t) for t in self.select)


EXHAUSTIVE = Plan()


def plan_query(query: Query, docs: Mapping[str, int], n_docs: int, limit: int) -> Plan:
    """Keep the entries BM25 scores near `limit` (Elasticsearch's common-terms cutoff).

    `docs` is each word's document frequency. A query whose words occur in at most `limit`
    entries together is scored exhaustively. Otherwise the rarest words whose entries fit in
    `limit` select the rows, and the commoner words only add to their scores: an entry that
    holds nothing but the query's common words is left out when the query has rarer ones. When
    even the rarest word is that common, entries must hold the rarest few together (the fewest
    whose expected overlap, taking words as independent, fits in `limit`). Queries with quoted
    phrases (already selective) and one-word queries are exhaustive; `limit` 0 turns this off.
    A word no entry holds selects nothing, so it is left out of the plan: selecting by it alone
    would find no row and fall back to scoring every match of the common words.
    """
    if query.phrases or len(query.terms) < 2 or limit <= 0:
        return EXHAUSTIVE
    df = {t: n for t in query.terms if (n := docs.get(t, 0)) > 0}
    terms = tuple(df)
    if len(terms) < 2 or sum(df.values()) <= limit:
        return EXHAUSTIVE
    order = sorted(terms, key=lambda t: (df[t], t))
    select: list[str] = []
    total = 0
    for t in order:
        if total + df[t] > limit:
            break
        select.append(t)
        total += df[t]
    if select:
        return Plan(tuple(select))
    select, expected = [order[0]], float(df[order[0]])
    for t in order[1:]:
        if expected <= limit:
            break
        select.append(t)
        expected *= df[t] / max(n_docs, 1)
    return Plan(tuple(select), every=True)
