"""Recorded-time search (history.recorded_search.StateSearch) scores exactly as
search.rank.bm25_scores does."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from memvault.history.recorded_search import StateSearch
from memvault.history.timelines import StateTimeline, VersionInfos
from memvault.search.bm25 import bm25_scores
from memvault.search.rank import make_filter, rank_candidates
from memvault.search.textproc import parse_query
from memvault.search.weights import Weights

from .test_history_timelines import CFG, corpus

QUERIES = ["weekly updates", "dark mode", "Friday", "monday updates friday", '"light mode"',
           "ADR-016 updates", "dashboard colours", "type:belief mode", "nothing-matches-this",
           '"weekly updates" friday', "monday-friday", '"mode"', "updates updates"]


def test_state_search_scores_equal_bm25_over_the_pool():
    files = corpus()
    w = Weights.from_config(CFG)
    search = StateSearch(w)
    infos = VersionInfos(CFG)
    rng = random.Random(9)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for _ in range(60):
        state = []
        for path, versions in files.items():
            if rng.random() < 0.7:
                k = rng.randrange(len(versions))
                state.append(((path, str(k)), versions[k]))
        at = base + timedelta(hours=rng.randrange(0, 24 * 60))  # some versions are partly after T
        pool = [e for _, evs in state for e in evs if e.timestamp is None or e.timestamp <= at]
        for text in rng.sample(QUERIES, 3):
            q = parse_query(text)
            want = {id(pool[i]): s for i, s in bm25_scores(pool, q, w).items()}
            got = {id(ev): s for ev, s in search.scores(state, q, at)}
            assert got == want, text
            # and the ranking over them is search's
            timeline = StateTimeline([infos.get(key, evs) for key, evs in state], CFG)
            hits = search.rank(state, text, timeline, at, 5)
            expect = rank_candidates(sorted(((ev, s) for ev, s in search.scores(state, q, at)), key=lambda p: -p[1]),
                                     q, timeline, at, w, keep=make_filter(q.types, q.tags), limit=5)
            assert [h.id for h in hits] == [h.id for h in expect]
