"""Answering a query from the index: which rows BM25 scores, then ranking the candidates.

`plan_for` asks the store's term counts which of the query's words select the rows (plan.py).
`rank` ranks the engine's candidates while decoding only those that can make the hits.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.timeline import Forgets, Timeline
from memvault.search import access
from memvault.search.hits import Hit
from memvault.search.index import links, store
from memvault.search.plan import EXHAUSTIVE, Plan, plan_query
from memvault.search.rank import Filter, rank_candidates
from memvault.search.textproc import Query
from memvault.search.weights import Weights, score_ceiling


def plan_for(conn: sqlite3.Connection, q: Query, weights: Weights) -> Plan:
    """The query's plan from the store's document frequencies (one-word and phrase queries
    need none: they are exhaustive)."""
    if q.phrases or len(q.terms) < 2 or weights.score_limit <= 0:
        return EXHAUSTIVE
    docs, n_docs = store.term_docs(conn, q.terms)
    return plan_query(q, docs, n_docs, weights.score_limit)


@dataclass
class Ranker:
    """Ranks one query's candidates against one index's store."""

    conn: sqlite3.Connection
    weights: Weights
    root: Path
    config: Config
    forgotten: Forgets | None = None  # what maintain forgot, judged on the whole vault (ParsedVault.forgotten)
    heads: dict[int, store.Head] = field(default_factory=dict)  # the last ranking's candidates

    def rank(self, found: list[tuple[int, float]], q: Query, when: datetime, keep: Filter,
             include_all: bool, limit: int, by_meaning: Collection[int] = ()) -> list[Hit]:
        """Rank the engine's candidates, decoding only those that can make the hits.

        Every candidate's score is first computed from stored columns (`weights.score_ceiling`:
        exact for a live entry that no other entry supersedes or reconfirms; a filtered-out or
        non-live one is no hit). Candidates are decoded best first until the next one's
        ceiling is below the last hit (all of them while the hits end with one found only through
        its neighbours, as any match goes above it); candidates linked to others (and all,
        with --all) are always decoded. The hits are those of ranking every candidate: decoding 200 entries and
        building their timeline was most of a search's time above the engine."""
        best = max((s for _, s in found), default=0.0)
        if best <= 0:
            return []
        heads = self.heads = store.load_heads(self.conn, [r for r, _ in found])
        ids = {h.id for h in heads.values()}
        near = {heads[r].id for r in by_meaning if r in heads}
        supersedes, reconfirms, involved = links.edges_for(self.conn, ids)
        stats = access.stats(self.root, involved)
        extra = store.load_ids(self.conn, involved - ids)
        linked = set(supersedes) | set(supersedes.values()) | {i for pair in reconfirms for i in pair}
        pinned, rest = self._triage(found, heads, linked if not include_all else None, stats, best, when)
        events: dict[int, Event] = {}
        m = limit
        while True:
            chosen = pinned + [(r, s) for _, r, s in rest[:m]]
            events.update(store.load_rowids(self.conn, [r for r, _ in chosen if r not in events]))
            cands = [(events[r], s) for r, s in chosen if r in events]
            timeline = Timeline([e for e, _ in cands] + extra, self.config, edges=(supersedes, reconfirms))
            timeline.forgotten = self.forgotten
            hits = rank_candidates(cands, q, timeline, when, self.weights, access=stats, include_all=include_all,
                                   keep=keep, limit=limit, best=best, by_meaning=near)
            if m >= len(rest):
                return hits
            if len(hits) < limit:  # filters or statuses took some: decode more
                m *= 4
                continue
            if not hits[-1].matched:  # any match still encoded goes above it: decode them all
                m = len(rest)
                continue
            floor = hits[-1].score - 1e-9  # ceilings read epoch seconds: allow for rounding
            more = next((k for k, (c, _, _) in enumerate(rest[m:]) if c < floor), len(rest) - m)
            if not more:
                return hits
            m += more

    def _triage(self, found: Iterable[tuple[int, float]], heads: dict[int, store.Head], linked: set[str] | None,
                stats: dict[str, access.Access], best: float, when: datetime,
                ) -> tuple[list[tuple[int, float]], list[tuple[float, int, float]]]:
        """(candidates always decoded, [(score ceiling, rowid, bm25)] of the others, best first).
        Everything is decoded when `linked` is None (--all)."""
        twice = {i for i, n in Counter(h.id for h in heads.values()).items() if n > 1}
        pinned: list[tuple[int, float]] = []
        rest: list[tuple[float, int, float]] = []
        for r, s in found:
            head = heads.get(r)
            if head is None:
                continue
            if linked is None or head.id in linked or head.id in twice:
                pinned.append((r, s))
            else:
                last = getattr(stats.get(head.id), "last_accessed", None)
                rest.append((score_ceiling(s / best, head, last, when, self.weights, self.config), r, s))
        rest.sort(reverse=True)
        return pinned, rest
