"""Which model session a process holds: the quick-open one for a one-shot search, the optimised
one once it searches (or embeds new entries) again. Needs the test model (tests/data/semantic-model)."""

from __future__ import annotations

from pathlib import Path

import pytest

MODEL = Path(__file__).parent / "data" / "semantic-model"
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytestmark = pytest.mark.skipif(not (MODEL / "model.onnx").is_file(), reason="the test model is not built yet")


def _vault(root: Path):
    from memvault.vault import Vault

    (root / "memory" / "2026").mkdir(parents=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "UTC"\n\n[semantic]\nmodel = "{MODEL}"\n')
    (root / "memory" / "2026" / "2026-03-01.md").write_text(
        "# 2026-03-01\n\n## 09:00 - Observation\nJörg fixed the Kaffeemaschine in the office.\n\n"
        "## 10:00 - Decision\nWe deploy the database migration on friday.\n")
    return Vault.open(root)


def test_a_second_query_moves_to_the_optimised_session_and_holds_one(tmp_path):
    from memvault.search.index import open_index

    with open_index(_vault(tmp_path), for_search=True) as index:
        first = index.search("coffee machine", mode="semantic", record_access=False)
        assert set(index.semantic_side()._encoders) == {False}
        again = index.search("coffee machine", mode="semantic", record_access=False)
        assert set(index.semantic_side()._encoders) == {False}  # the query's vector came from the cache
        index.search("coffee machine office", mode="semantic", record_access=False)
        assert set(index.semantic_side()._encoders) == {True}
        assert [h.id for h in first] == [h.id for h in again]


def test_a_second_embedding_moves_to_the_optimised_session(tmp_path):
    from memvault.search.index import open_index

    vault = _vault(tmp_path)
    day = tmp_path / "memory" / "2026" / "2026-03-01.md"
    with open_index(vault) as index:
        index.update()
        assert set(index.semantic_side()._encoders) == {False}
        day.write_text(day.read_text() + "\n## 11:00 - Observation\nThe printer ran out of toner.\n")
        index.update(["memory/2026/2026-03-01.md"])
        assert set(index.semantic_side()._encoders) == {True}


def test_an_entry_removed_leaves_the_vectors_and_the_hits(tmp_path):
    from memvault.search.index import open_index

    vault = _vault(tmp_path)
    day = tmp_path / "memory" / "2026" / "2026-03-01.md"
    with open_index(vault) as index:
        index.update()
        sem = index.semantic_side()
        assert sem.store.state().live == 2
        day.write_text(day.read_text().split("\n## 10:00")[0] + "\n")  # the decision deleted
        index.update(["memory/2026/2026-03-01.md"])
        assert sem.store.state().live == 1
        hits = index.search("database migration friday", mode="semantic", record_access=False)
        assert hits == []  # the entry about it is gone, and nothing left is near it
        day.write_text(day.read_text() + "\n## 12:00 - Decision\nThe database migration moves to monday.\n")
        index.update(["memory/2026/2026-03-01.md"])
        hits = index.search("database migration friday", mode="semantic", record_access=False)
        assert [h.content for h in hits] == ["The database migration moves to monday."]  # not the removed one
