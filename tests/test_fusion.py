"""Fusing lexical and semantic candidates (search/fusion.py): pure properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.search.fusion import Near, fuse

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


def near(sem, mean=0.0, std=0.5):
    """The semantic side as search hands it over: the nearest rows and their cosines, with the
    spread of the cosines over the whole vault."""
    return Near(list(sem), dict(sem), mean, std)


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), weights, st.integers(1, 100))
def test_scores_are_positive_best_first_each_item_once(pair, method, weight, k):
    lex, sem = pair
    out = fuse(lex, near(sem), method, weight, k)
    assert all(s > 0 for _, s in out)
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
    assert fuse(lex, near(sem), method, weight)[0][0] == top


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), weights)
def test_ties_keep_lexical_order_then_semantic_order_and_the_result_is_stable(pair, method, weight):
    lex, sem = pair
    out = fuse(lex, near(sem), method, weight)
    assert out == fuse(list(lex), near(list(sem)), method, weight)
    first_seen = {r: i for i, r in enumerate(dict.fromkeys([r for r, _ in lex] + [r for r, _ in sem]))}
    for (a, sa), (b, sb) in zip(out, out[1:], strict=False):
        if sa == sb:
            assert first_seen[a] < first_seen[b]


@settings(max_examples=100, deadline=None)
@given(sides(), st.sampled_from(METHODS), st.floats(0.0, 0.99))
def test_with_no_semantic_side_the_lexical_order_stands(pair, method, weight):
    lex, _ = pair
    assert [r for r, _ in fuse(lex, Near(), method, weight)] == [r for r, _ in lex]


@pytest.mark.parametrize("method", METHODS)
def test_empty_sides(method):
    assert fuse([], Near(), method) == []
    out = fuse([], near([(7, 0.9), (8, 0.5), (9, 0.1)]), method)
    assert [r for r, _ in out] == [7, 8, 9]


def test_weighted_fusion_by_hand():
    # BM25 10 and 5 standardise to +1 and -1 (the lowest, -1, for a row BM25 did not find);
    # cosines 0.9 / 0.5 / 0.1 over a vault of mean 0.5 and spread 0.2 to +2 / 0 / -2, and row 1's
    # cosine (0.5, the mean) to 0
    side = Near([(2, 0.9), (3, 0.5), (4, 0.1)], {2: 0.9, 3: 0.5, 4: 0.1, 1: 0.5}, 0.5, 0.2)
    out = fuse([(1, 10.0), (2, 5.0)], side, "weighted", 0.5)
    assert [r for r, _ in out] == [1, 2, 3, 4]  # 1 and 2 tie (0.5): the lexical order keeps 1 first
    got = dict(out)
    assert got[1] == pytest.approx(got[2]) and got[1] - got[3] == pytest.approx(1.0)
    assert got[3] - got[4] == pytest.approx(1.0) and got[4] == pytest.approx(1e-6)
    rrf = dict(fuse([(1, 10.0), (2, 5.0)], near([(2, 0.9)]), "rrf", k=60))
    assert rrf[2] - rrf[1] == pytest.approx(1 / 61 + 1 / 62 - 1 / 61)


def test_a_semantic_only_candidate_beats_a_weak_word_match():
    # the point of hybrid: a row that BM25 missed but whose meaning is far above the vault's
    # usual similarity outranks the weakest word matches
    side = Near([(9, 0.95), (1, 0.4)], {9: 0.95, 1: 0.4, 2: 0.3, 3: 0.3}, 0.3, 0.1)
    out = [r for r, _ in fuse([(1, 9.0), (2, 3.0), (3, 2.5)], side, "weighted", 0.5)]
    assert out.index(9) < out.index(2) and out.index(9) < out.index(3)
