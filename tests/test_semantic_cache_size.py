"""The content-hash cache keeps a vector near its own size on disk (no overflow page each)."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("numpy")

from memvault.semantic.vectors import VectorStore  # noqa: E402


def test_a_384_dim_vector_costs_under_2_5_kb_in_the_cache(tmp_path):
    store = VectorStore(tmp_path / "vectors", "m")
    rng = random.Random(3)
    pairs = [(rng.randbytes(16), rng.randbytes(384 * 4)) for _ in range(1000)]
    store.put(pairs)
    assert store.cached([pairs[7][0]]) == {pairs[7][0]: pairs[7][1]}
    store.close()
    size = (tmp_path / "vectors" / "cache.sqlite").stat().st_size
    assert size / len(pairs) < 2500  # 4 KB pages: ~4,700 bytes a vector
