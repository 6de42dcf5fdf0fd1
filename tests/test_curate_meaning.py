"""Curate's "same thing, said twice" by meaning (issue 18): with semantic search on, two texts
whose vectors are close enough say the same, and `differs` still keeps apart every pair that
states something different (curate/meaning.py, docs/curate.md).

The vault tests run the tiny test model (tests/data/semantic-model): words of one concept group
are close, so "Caroline paints landscapes" and "to relax and unwind, Caroline likes painting"
(the leisure group) share a meaning and almost no word.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.config.curate import Settings
from memvault.curate.meaning import Meaning, joins, reason
from memvault.curate.promote import explain, plan_curation
from memvault.entries.similarity import differs, same_fact
from memvault.errors import ConfigError
from memvault.vault import Vault

from .conftest import DATA
from .helpers_index import UTC_TOML, at, entry, make_vault, write_log
from .helpers_semantic import needs_extra, semantic_toml

AT = "2026-03-10T12:00"
LEISURE_A = "Caroline paints landscapes, her favourite hobby."
LEISURE_B = "To relax and unwind, Caroline likes painting."

# Pairs that share a topic, often most words, and state different things: by meaning they are
# close (a real model puts most of them above 0.9), so only `differs` keeps them apart.
NEAR_MISSES = [
    ("User prefers dark mode", "User prefers light mode"),
    ("The build takes about 12 minutes", "The build takes about 20 minutes"),
    ("Anna is allergic to peanuts", "Tom is allergic to peanuts"),
    ("We deploy to production on Fridays", "We deploy to production on Thursdays"),
    ("We deploy to staging on Fridays", "We deploy to production on Fridays"),
    ("The staging database is Postgres", "The staging database is MySQL"),
    ("Backups run nightly at 2am", "Backups run nightly at 4am"),
    ("User likes long meetings", "User does not like long meetings"),
    ("Mia starts school in September", "Mia starts school in October"),
    ("Release v2 ships on 2026-03-01", "Release v2 ships on 2026-04-01"),
    ("Tests must pass before merging", "Tests must pass after merging"),
    ("Anna reports to Tom", "Tom reports to Anna"),
    ("Standup is daily", "Standup is weekly"),
    ("Budget is at most 500 EUR", "Budget is at least 500 EUR"),
    ("The user was a vegetarian", "The user is a vegetarian"),
    ("Feature flags are enabled in production", "Feature flags are disabled in production"),
    ("Nutzer bevorzugt den dunklen Modus", "Nutzer bevorzugt den hellen Modus"),
    ("Der Build dauert 12 Minuten", "Der Build dauert 20 Minuten"),
    ("Wir deployen freitags in die Produktion", "Wir deployen donnerstags in die Produktion"),
    ("Tom mag lange Meetings", "Tom mag keine langen Meetings"),
    ("Sie wohnt in Köln", "Sie wohnt in München"),
    ("Der Vertrag läuft bis März", "Der Vertrag läuft bis Mai"),
    ("Deploys auf Staging vor 17 Uhr", "Deploys auf Staging nach 17 Uhr"),
    ("Die Funktion ist aktiviert", "Die Funktion ist deaktiviert"),
]


# ------------------------------------------------------------------------------ pure


def test_joins_needs_the_cosine_and_no_difference():
    assert joins(0.91, 0.85, None)
    assert joins(0.85, 0.85, None)
    assert not joins(0.84, 0.85, None)
    assert not joins(1.0, 0.85, "numbers differ: 3 / 5")
    assert reason(0.912) == "same meaning (cosine 0.91)"


@pytest.mark.parametrize(("a", "b"), NEAR_MISSES)
def test_a_near_miss_never_joins_however_close_its_meaning(a, b):
    assert differs(a, b) and differs(b, a)
    assert not joins(1.0, 0.1, differs(a, b))


def test_no_different_fact_or_correction_of_the_labelled_set_joins_by_meaning():
    pairs = [json.loads(line) for line in (DATA / "curate_pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    apart = [p for p in pairs if p["label"] in ("different", "correction")]
    assert len(apart) >= 150
    assert [p for p in apart if joins(1.0, 0.1, differs(p["a"], p["b"]))] == []  # precision 1.0 at any cosine


@needs_extra
@pytest.mark.parametrize("cells", [1 << 24, 4], ids=["one-product", "row-by-row"])
def test_neighbours_are_the_texts_above_the_threshold_nearest_first(cells, monkeypatch):
    import numpy as np

    from memvault.curate import meaning

    monkeypatch.setattr(meaning, "PRODUCT_CELLS", cells)  # a large vault is compared in parts

    matrix = np.array([[1.0, 0.0], [0.8, 0.6], [0.96, 0.28], [0.0, 1.0]], dtype=np.float32)
    meaning = Meaning.from_vectors(["e:a", "b:x", "e:c", "e:d"], matrix, ["e:a", "e:d"], 0.75)
    assert [k for k, _ in meaning.near("e:a")] == ["e:c", "b:x"]  # not itself, not e:d (cosine 0)
    assert meaning.near("e:a")[0][1] == pytest.approx(0.96)
    assert [k for k, _ in meaning.near("e:d")] == []
    assert meaning.near("b:x") == []  # only the keys asked for get neighbours


def test_the_threshold_is_a_checked_setting(vault_dir: Path):
    make_vault(vault_dir, UTC_TOML + "[curate]\nsemantic_similarity = 0.9\n")
    assert Settings.from_config(Vault.open(vault_dir).config).semantic_similarity == 0.9
    make_vault(vault_dir, UTC_TOML + "[curate]\nsemantic_similarity = 2\n")
    with pytest.raises(ConfigError, match="semantic_similarity"):
        Settings.from_config(Vault.open(vault_dir).config)


# ------------------------------------------------------------------------- a vault


def _two_days(root: Path, toml: str, first: str = LEISURE_A, second: str = LEISURE_B) -> None:
    make_vault(root, toml)
    write_log(root, "2026-03-02", entry("09:00", "observation", first))
    write_log(root, "2026-03-05", entry("18:30", "observation", second))


def _proposals(root: Path) -> list[tuple[str, tuple[str, ...]]]:
    with Vault.open(root) as vault:
        return [(p.kind, tuple(p.entries)) for p in plan_curation(vault, at=at(AT)).proposals]


@needs_extra
def test_said_twice_in_other_words_joins_by_meaning(vault_dir: Path):
    assert not same_fact(LEISURE_A, LEISURE_B)  # words alone do not see it
    _two_days(vault_dir, semantic_toml())
    # Neither entry matters alone; said on two days, they do.
    assert _proposals(vault_dir) == [("add", ("2026-03-02T09:00", "2026-03-05T18:30"))]


@needs_extra
def test_explain_says_the_pair_joined_by_meaning(vault_dir: Path, runner):
    _two_days(vault_dir, semantic_toml())
    out = runner.invoke(cli, ["curate", "--explain", "2026-03-05 18:30", "--at", AT])
    assert out.exit_code == 0, out.output
    assert "same meaning (cosine 0.9" in out.output
    assert "as entry 2026-03-02T09:00" in out.output


@needs_extra
@pytest.mark.parametrize("toml", [semantic_toml("lexical"), UTC_TOML], ids=["mode-lexical", "no-model"])
def test_lexical_curate_compares_words_only(vault_dir: Path, toml: str):
    _two_days(vault_dir, toml)
    assert _proposals(vault_dir) == []
    assert not (vault_dir / ".memvault" / "vectors").exists()  # no model was asked for anything


@needs_extra
def test_a_higher_threshold_keeps_them_apart(vault_dir: Path):
    _two_days(vault_dir, semantic_toml(extra="[curate]\nsemantic_similarity = 0.999\n"))
    assert _proposals(vault_dir) == []


@needs_extra
def test_close_in_meaning_but_a_different_day_named_stays_apart(vault_dir: Path):
    _two_days(vault_dir, semantic_toml(), "Caroline paints landscapes on Saturdays.",
              "Caroline paints landscapes on Sundays.")
    assert _proposals(vault_dir) == []
    with Vault.open(vault_dir) as vault:
        why = {x["id"]: x["reason"] for x in explain(plan_curation(vault, at=at(AT)), vault)}
    assert "dates differ" in why["2026-03-05T18:30"]


@needs_extra
def test_vectors_come_from_the_cache_the_index_filled(vault_dir: Path):
    from memvault.search.index import open_index

    _two_days(vault_dir, semantic_toml())
    with Vault.open(vault_dir) as vault, open_index(vault) as index:
        index.update()  # embeds both entries into the content-hash cache
    cache = next((vault_dir / ".memvault" / "vectors").glob("*/cache.sqlite"))

    def held() -> int:
        with contextlib.closing(sqlite3.connect(cache)) as conn:
            return int(conn.execute("SELECT count(*) FROM vec").fetchone()[0])

    before = held()
    assert _proposals(vault_dir) == [("add", ("2026-03-02T09:00", "2026-03-05T18:30"))]
    assert held() == before  # curate embeds an entry as the index does: no text was new to the cache


@needs_extra
def test_a_bullet_that_says_it_in_other_words_is_reconfirmed(vault_dir: Path):
    make_vault(vault_dir, semantic_toml())
    (vault_dir / "MEMORY.md").write_text("# Memory\n\n## Notes\n\n- Caroline paints landscapes as a hobby.\n")
    write_log(vault_dir, "2026-03-05", entry("18:30", "observation", LEISURE_B))
    assert not same_fact("Caroline paints landscapes as a hobby.", LEISURE_B)
    assert _proposals(vault_dir) == [("reconfirm", ("2026-03-05T18:30",))]
