"""The stored said-again pairs equal a fresh computation: after any series of edits, and on
real-looking English and German facts said again."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.entries.similarity import signature
from memvault.search import said_join
from memvault.search.said_store import SaidStore

T = 0.6

FACTS = [
    "Lena's daughter Mia is allergic to peanuts, keep snacks nut-free at the offsite.",
    "Mia (Lena's daughter) is allergic to peanuts - snacks at the offsite must be nut-free.",
    "Mia is not allergic to peanuts any more.",
    "Wir nehmen für das Backup den Hetzner Storage Box BX21, nicht S3.",
    "Backup läuft auf der Hetzner Storage Box BX21, nicht auf S3.",
    "Backup läuft wieder sauber auf der Storage Box.",
    "The standup moved to 09:30 on Mondays.",
    "Standup is at 09:30 on Mondays.",
    "Standup is at 10:00 on Mondays.",
    "Jörg Wendt arbeitet jetzt beim Zoll in Hamburg-Altona.",
    "Jörg Wendt arbeitet jetzt beim Zoll in Hamburg-Altona (sagt er wieder).",
    "User prefers tabs over spaces in Go code",
    "User prefers spaces over tabs in Python code",
    "Coffee machine on floor 3 is broken again, use the one on floor 5.",
    "Coffee",
    "Deploy Friday",
    "Deploy on Friday",
    "Never deploy on Friday.",
    "Kaffee",
    "   ",
]
WORDS = ["peanuts", "allergic", "Mia", "backup", "Storage", "Box", "standup", "Friday", "deploy", "not",
         "09:30", "2026-03-01", "Hamburg", "Zoll", "arbeitet", "läuft", "nicht", "tea", "oolong", "coffee"]


def fresh(texts: list[str]) -> set[tuple[str, str]]:
    sigs = {t: signature(t) for t in dict.fromkeys(texts)}
    return said_join.brute_force(sigs, T)


def test_join_equals_every_pair_on_real_facts() -> None:
    sigs = {t: signature(t) for t in FACTS}
    pairs = said_join.join(sigs, T)
    assert pairs == said_join.brute_force(sigs, T)
    # the facts said twice, in English and German, are found; the changed and negated ones are not
    assert (FACTS[0], FACTS[1]) in pairs and (FACTS[1], FACTS[0]) in pairs
    assert (FACTS[9], FACTS[10]) in pairs
    assert (FACTS[7], FACTS[8]) not in pairs and (FACTS[0], FACTS[2]) not in pairs
    assert (FACTS[15], FACTS[16]) in pairs and (FACTS[16], FACTS[17]) not in pairs


def test_store_builds_probes_and_forgets_like_a_fresh_join(tmp_path: Path) -> None:
    store = SaidStore(tmp_path, T, rejoin_min=3)
    assert store.sync(FACTS[:2]) == fresh(FACTS[:2])
    assert store.sync(FACTS) == fresh(FACTS)  # 18 new texts > 3: joined anew
    assert store.report.rejoined
    fewer = FACTS[1:]
    assert store.sync(fewer) == fresh(fewer) and store.report.removed == 1
    back = [*fewer, FACTS[0]]
    assert store.sync(back) == fresh(back) and (store.report.added, store.report.rejoined) == (1, False)
    assert store.sync(back) == fresh(back) and store.report.added == 0  # unchanged: the digest answers


def test_a_damaged_store_is_rebuilt(tmp_path: Path) -> None:
    store = SaidStore(tmp_path, T)
    store.sync(FACTS)
    store.path.write_bytes(b"this is not a database" * 100)
    assert SaidStore(tmp_path, T).sync(FACTS) == fresh(FACTS)


def test_another_threshold_starts_anew(tmp_path: Path) -> None:
    SaidStore(tmp_path, T).sync(FACTS)
    loose = SaidStore(tmp_path, 0.3).sync(FACTS)
    sigs = {t: signature(t) for t in FACTS}
    assert loose == said_join.brute_force(sigs, 0.3)


texts_st = st.lists(
    st.one_of(st.sampled_from(FACTS),
              st.lists(st.sampled_from(WORDS), min_size=1, max_size=7).map(" ".join)),
    max_size=14)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(texts_st, min_size=1, max_size=5), st.integers(min_value=0, max_value=6))
def test_stored_pairs_after_random_edits_equal_a_fresh_join(tmp_path: Path, versions: list[list[str]],
                                                            rejoin_min: int) -> None:
    root = tmp_path / f"v{abs(hash((tuple(map(tuple, versions)), rejoin_min)))}"
    store = SaidStore(root, T, rejoin_min=rejoin_min)
    for texts in versions:  # each version: the vault's texts after an edit
        texts = [t for t in dict.fromkeys(texts) if t.strip()]
        assert store.sync(texts) == fresh(texts)


VOCAB = [f"{a}{b}" for a in ("kor", "lum", "sav", "tep", "vin") for b in ("ado", "ebu", "iru", "osa")] + WORDS


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=16).map(" ".join), max_size=25))
def test_join_equals_every_pair_on_long_texts(texts: list[str]) -> None:
    """Texts of up to 16 content words, where the prefixes are shorter than the texts: the
    filter must still find every pair."""
    sigs = {t: signature(t) for t in dict.fromkeys(texts)}
    assert said_join.join(sigs, T) == said_join.brute_force(sigs, T)
    assert said_join.join(sigs, 0.8) == said_join.brute_force(sigs, 0.8)
