"""Helpers for the semantic search tests: a vault pointed at the tiny test model
(tests/data/semantic-model, see its README), and reading its vectors back."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from .helpers_index import UTC_TOML, make_vault

MODEL = Path(__file__).parent / "data" / "semantic-model"

# the tests that run the model skip without the extra (test_semantic_missing runs either way)
needs_extra = pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("numpy", "onnxruntime",
                                                                                "tokenizers")),
                                 reason="needs the semantic extra (numpy, onnxruntime, tokenizers)")


def semantic_toml(mode: str | None = None, model: Path | str = MODEL, extra: str = "") -> str:
    lines = [UTC_TOML, "[semantic]", f'model = "{model}"']
    if mode:
        lines.append(f'mode = "{mode}"')
    return "\n".join(lines) + "\n" + extra


@pytest.fixture
def semantic_vault(vault_dir: Path) -> Path:
    """An empty vault (memory/ and memvault.toml) whose `[semantic] model` is the test model."""
    make_vault(vault_dir, semantic_toml())
    return vault_dir


def live_vectors(root: Path) -> list[tuple[str, str]]:
    """Sorted (entry id, hash of its vector) of every live vector, read through the library."""
    import numpy as np

    from memvault.search.index import open_index, store
    from memvault.vault import Vault

    with Vault.open(root) as vault, open_index(vault) as index:
        index.update()
        conn, _ = index.reader()
        ids = {rowid: ev.id for rowid, ev in store.load_events(conn)}
        view = index.semantic_side().store.view()
        keep = view.alive.astype(bool)
        rows, matrix = view.rows[keep], np.asarray(view.matrix[keep])
        pairs = [(ids.get(int(r), f"<rowid {int(r)} not in the index>"), hashlib.sha256(np.round(v, 4).tobytes()).hexdigest()[:16])
                 for r, v in zip(rows, matrix, strict=True)]
        del view
    return sorted(pairs)


def embedded_ids(root: Path) -> set[str]:
    """The ids of the entries with a live vector now (reads only: no update, no encoding)."""
    from memvault.search.index import open_index, store
    from memvault.vault import Vault

    with open_index(Vault.open(root)) as index:
        if not index.db_path.exists():
            return set()
        conn = store.connect(index.db_path)
        try:
            ids = {rowid: ev.id for rowid, ev in store.load_events(conn)}
        finally:
            conn.close()
        view = index.semantic_side().store.view()
        rows = [int(r) for r in view.rows[view.alive.astype(bool)]]
        del view
    return {ids[r] for r in rows if r in ids}
