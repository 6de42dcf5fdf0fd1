"""Fusing lexical and semantic candidates (search/fusion.py): pure properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.search.fusion import fuse

METHODS = ["weighted", "rrf", "max"]


@st.composite
def sides(draw):
    ids = draw(st.lists(st.integers(0, 40), unique=True, max_size=25))
    split = draw(st.lists(st.sampled_from("lsb"), min_size=len(ids), max_size=len(ids)))
    lex_ids = [i for i, s in zip(ids, split, strict=True) if s in "lb"]
    sem_ids = draw(st.permutations([i for i, s in zip(ids, split, strict=True) if s in "sb"]))
    lex_scores = sorted(draw(st.lists(st.floats(0.01, 50), min_size=len(lex_ids), max_size=len(lex_ids))),
                        reverse=True)
    sem_scores = sorted(draw(st.lists(st.floats(-1, 1), min_size=len(sem_ids), max_size=len(sem_ids))),
                        reverse=True)
    return list(zip(lex_ids, lex_scores, strict=True)), list(zip(sem_ids, sem_scores, strict=True))


weights = st.floats(0.0, 1.0)


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), weights, st.integers(1, 100))
def test_scores_lie_in_0_1_best_first_each_item_once(pair, method, weight, k):
    lex, sem = pair
    out = fuse(lex, sem, method, weight, k)
    assert all(0 < s <= 1 + 1e-9 for _, s in out)
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True)
    ids = [r for r, _ in out]
    assert len(ids) == len(set(ids)) and set(ids) <= {r for r, _ in lex} | {r for r, _ in sem}


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), weights)
def test_an_item_first_in_both_lists_comes_first(pair, method, weight):
    lex, sem = pair
    if not lex:
        return
    top = lex[0][0]
    sem = [(top, 1.0)] + [(r, min(s, 0.99)) for r, s in sem if r != top]
    assert fuse(lex, sem, method, weight)[0][0] == top


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), weights)
def test_ties_keep_lexical_order_then_semantic_order_and_the_result_is_stable(pair, method, weight):
    lex, sem = pair
    out = fuse(lex, sem, method, weight)
    assert out == fuse(list(lex), list(sem), method, weight)
    first_seen = {r: i for i, r in enumerate(dict.fromkeys([r for r, _ in lex] + [r for r, _ in sem]))}
    for (a, sa), (b, sb) in zip(out, out[1:], strict=False):
        if sa == sb:
            assert first_seen[a] < first_seen[b]


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), st.floats(0.0, 0.99))
def test_with_no_semantic_side_the_lexical_order_stands(pair, method, weight):
    lex, _ = pair
    assert [r for r, _ in fuse(lex, [], method, weight)] == [r for r, _ in lex]


@pytest.mark.parametrize("method", METHODS)
def test_empty_sides(method):
    assert fuse([], [], method) == []
    out = fuse([], [(7, 0.9), (8, 0.5), (9, 0.1)], method)
    assert [r for r, _ in out][:2] == [7, 8]  # a weighted fusion drops the least similar (min-max 0)


def test_weighted_fusion_by_hand():
    out = dict(fuse([(1, 10.0), (2, 5.0)], [(2, 0.9), (3, 0.5), (4, 0.1)], "weighted", 0.5))
    assert out == pytest.approx({1: 0.5, 2: 0.75, 3: 0.25})  # 4: the least similar, 0 after min-max
    rrf = dict(fuse([(1, 10.0), (2, 5.0)], [(2, 0.9)], "rrf", k=60))
    assert rrf == pytest.approx({1: 1 / 61, 2: 1 / 62 + 1 / 61})
