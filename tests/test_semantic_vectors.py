"""The vector store (semantic/vectors.py): append, remove, compact, crash safety, the cache."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy")

from memvault.semantic.vectors import HASH_BYTES, VectorStore, View  # noqa: E402

DIM = 4


def unit(rows: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(rows, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def h(i: int) -> bytes:
    return i.to_bytes(HASH_BYTES, "big")


def filled(tmp_path, rowids=(1, 2, 3, 5)):
    store = VectorStore(tmp_path / "vec", "m1")
    vectors = unit(len(rowids))
    with store.writing():
        state = store.reset("build-a", DIM)
        state = store.append(state, list(rowids), [h(r) for r in rowids], vectors.tobytes(), max(rowids))
    return store, state, vectors


def test_append_then_read_back_through_a_new_store(tmp_path):
    store, state, vectors = filled(tmp_path)
    again = VectorStore(tmp_path / "vec", "m1").state()
    assert (again.count, again.dead, again.high_water, again.index_id, again.dim) == (4, 0, 5, "build-a", DIM)
    view = VectorStore(tmp_path / "vec", "m1").view()
    assert view.rows.tolist() == [1, 2, 3, 5]
    assert np.allclose(view.matrix, vectors) and view.alive.tolist() == [1, 1, 1, 1]
    assert [bytes(x) for x in view.hashes] == [h(1), h(2), h(3), h(5)]


def test_a_state_of_another_model_is_not_taken(tmp_path):
    filled(tmp_path)
    assert VectorStore(tmp_path / "vec", "m2").state().count == 0


def test_remove_marks_dead_and_ignores_rows_not_held(tmp_path):
    store, state, vectors = filled(tmp_path)
    with store.writing():
        state = store.remove(state, [2, 4, 99])
    assert (state.count, state.dead, state.live) == (4, 1, 3)
    view = store.view()
    assert view.alive.tolist() == [1, 0, 1, 1]
    assert 2 not in [r for r, _ in view.top(vectors[1], 10)]  # a dead row is never found
    assert len(view.top(vectors[1], 10)) == 3


def test_compact_swaps_the_generation_and_an_old_reader_keeps_reading(tmp_path):
    store, state, vectors = filled(tmp_path)
    with store.writing():
        state = store.remove(state, [1, 3])
    old = store.view()  # a search holding generation g
    old_rows, old_gen = old.rows.tolist(), old.state.gen
    with store.writing():
        new = store.compact(state)
    assert new.gen == old_gen + 1 and (new.count, new.dead) == (2, 0)
    assert not (tmp_path / "vec" / f"matrix.{old_gen}.f32").exists()  # the old files are gone ...
    assert old.rows.tolist() == old_rows and np.allclose(old.matrix[1], vectors[1])  # ... yet still readable
    assert [r for r, _ in old.top(vectors[3], 1)] == [5]
    view = store.view()
    assert view.rows.tolist() == [2, 5] and np.allclose(view.matrix, vectors[[1, 3]])
    assert [bytes(x) for x in view.hashes] == [h(2), h(5)]


def test_many_dead_rows_compact_by_themselves(tmp_path, monkeypatch):
    from memvault.semantic import vectors as mod

    monkeypatch.setattr(mod, "COMPACT_MIN", 2)
    store, state, _ = filled(tmp_path)
    with store.writing():
        state = store.remove(state, [1])
        assert state.gen == 1 and state.dead == 1  # one in four: not yet
        state = store.remove(state, [2])
    assert (state.gen, state.count, state.dead) == (2, 2, 0)
    assert store.view().rows.tolist() == [3, 5]


@pytest.mark.parametrize("part", ["rows.1.i64", "matrix.1.f32", "alive.1.u8", "hashes.1.bin"])
def test_files_left_short_by_a_crash_are_not_trusted(tmp_path, part):
    store, state, _ = filled(tmp_path)
    path = tmp_path / "vec" / part
    path.write_bytes(path.read_bytes()[:-1])
    got = VectorStore(tmp_path / "vec", "m1").state()
    assert got.count == 0 and got.index_id == ""  # rebuilt from the cache, never read past the files


def test_a_torn_state_file_is_not_trusted(tmp_path):
    store, _, _ = filled(tmp_path)
    store.state_path.write_text('{"gen": 1, "count": ')
    assert store.state().count == 0
    store.state_path.write_text(json.dumps({"gen": "x", "model": "m1"}))
    assert store.state().count == 0


def test_an_append_after_a_crash_overwrites_the_bytes_past_the_count(tmp_path):
    store, state, vectors = filled(tmp_path, (1, 2))
    with open(tmp_path / "vec" / "matrix.1.f32", "ab") as f:
        f.write(b"\xff" * 7)  # half a row a crashed writer left behind
    more = unit(1, seed=9)
    with store.writing():
        store.append(state, [7], [h(7)], more.tobytes(), 7)
    view = store.view()
    assert view.rows.tolist() == [1, 2, 7] and np.allclose(view.matrix[2], more[0])


def test_the_cache_is_keyed_by_content_hash(tmp_path):
    store = VectorStore(tmp_path / "vec", "m1")
    v = unit(2)
    store.put([(h(1), v[0].tobytes()), (h(2), v[1].tobytes())])
    got = store.cached([h(2), h(3), h(2)])
    assert set(got) == {h(2)} and np.allclose(np.frombuffer(got[h(2)], dtype=np.float32), v[1])
    store.close()
    again = VectorStore(tmp_path / "vec", "m1")
    assert again.cache_size() == 2  # it survives the live table's reset
    with again.writing():
        again.reset("build-b", DIM)
    assert again.cache_size() == 2
    again.close()


@st.composite
def tables(draw):
    n = draw(st.integers(1, 30))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(n, DIM)).astype(np.float32)
    if draw(st.booleans()):
        matrix[rng.integers(0, n, size=n // 2)] = matrix[0]  # ties
    alive = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.uint8)
    query = rng.normal(size=DIM).astype(np.float32)
    return matrix, alive, query, draw(st.integers(0, n + 3))


@settings(max_examples=60, deadline=None)
@given(tables())
def test_top_equals_a_brute_force_ranking(table):
    from memvault.semantic.vectors import State

    matrix, alive, query, k = table
    n = len(matrix)
    rows = np.arange(10, 10 + 2 * n, 2, dtype=np.int64)
    state = State(count=n, dead=int(n - alive.sum()), dim=DIM)
    got = View(state, rows, matrix, alive, np.zeros(n, dtype=np.dtype((np.void, HASH_BYTES)))).top(query, k)
    sims = matrix @ query
    brute = sorted(((float(sims[i]), int(rows[i])) for i in range(n) if alive[i]), key=lambda p: -p[0])[:k]
    assert [s for _, s in got] == pytest.approx([s for s, _ in brute])
    assert all(s == pytest.approx(float(sims[(r - 10) // 2])) for r, s in got)  # each its own score
    assert all(alive[(r - 10) // 2] for r, _ in got) and len({r for r, _ in got}) == len(got)


def test_a_reader_racing_a_generation_swap_reads_the_new_generation(tmp_path, monkeypatch):
    store, state, vectors = filled(tmp_path)
    stale = store._read_state()  # read just before the writer swaps generations
    with store.writing():
        store.compact(store.remove(state, [1, 2]))
    reader = VectorStore(tmp_path / "vec", "m1")
    real, calls = reader._read_state, []
    monkeypatch.setattr(reader, "_read_state", lambda: calls.append(1) or (stale if len(calls) == 1 else real()))
    got = reader.state()
    assert (got.gen, got.count) == (stale.gen + 1, 2)  # not "no vectors" for a moment
    calls.clear()
    assert reader.view().rows.tolist() == [3, 5]


def test_a_product_split_across_threads_equals_the_whole(tmp_path, monkeypatch):
    # from SPLIT_ROWS rows the product runs a slice per core: the same cosines, in row order
    import numpy as np

    from memvault.semantic import vectors

    monkeypatch.setattr(vectors, "SPLIT_ROWS", 10)
    monkeypatch.setattr(vectors.os, "cpu_count", lambda: 3)
    rng = np.random.default_rng(5)
    store = vectors.VectorStore(tmp_path / "v", "m")
    with store.writing():
        st = store.reset("ix", 8)
        m = rng.normal(size=(37, 8)).astype(np.float32)
        st = store.append(st, list(range(1, 38)), [bytes([i]) * 16 for i in range(37)], m.tobytes(), 37)
    q = rng.normal(size=8).astype(np.float32)
    assert np.allclose(store.view(st).similarities(q), m @ q, atol=1e-6)
