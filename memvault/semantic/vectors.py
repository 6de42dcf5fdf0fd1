"""The vectors of one model: derived state under `.memvault/vectors/<model key>/`.

Two parts, both rebuilt from the files when deleted:

- `cache.sqlite`: content hash -> vector. An entry whose text did not change is never encoded
  again, whatever happened to the index (a rebuild renumbers its rows; the cache survives).
- the live table, one vector per index row, read with `numpy.memmap` so a search process
  pays no load: `rows.<g>.i64` (index rowids, ascending), `matrix.<g>.f32` (the vectors),
  `alive.<g>.u8` (0 once the row left the index) and `hashes.<g>.bin` (16-byte content
  hashes), with `state.json` saying how many rows of generation `g` are written. Rows are
  only appended (new index rows have higher rowids) or marked dead; when a quarter is dead the
  live rows are copied to generation g+1 and `state.json` is swapped to it (a reader holding
  generation g keeps reading it: its files stay readable until it closes them).

Writers hold `write.lock`. A reader takes `state.json` first, so it never reads a row past the
count it names.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault import derived_db
from memvault.fsio import atomic_write, locked

if TYPE_CHECKING:
    import numpy as np

HASH_BYTES = 16
COMPACT_SHARE = 0.25  # compact when this share of the rows is dead (and COMPACT_MIN rows)
COMPACT_MIN = 1000
SPLIT_ROWS = 20_000  # from this many rows the product is split across the cores


@dataclass
class State:
    gen: int = 0
    count: int = 0  # rows written in generation `gen`
    dead: int = 0
    high_water: int = 0  # the highest index rowid seen (rows above it are new)
    index_id: str = ""  # which index numbering the rowids belong to
    dim: int = 0
    model: str = ""

    @property
    def live(self) -> int:
        return self.count - self.dead


CACHE_PAGE = 16384  # a WITHOUT ROWID row over ~1/4 page overflows onto a page of its own


def _cache_setup(conn: sqlite3.Connection) -> None:
    # A 384-dim vector is 1,536 bytes: on 4 KB pages every row took a leaf cell plus an overflow
    # page (~4.7 KB a vector, 3x its size); on 16 KB pages rows sit inline (~1.9 KB). Takes
    # effect on a new cache, and on an old one at its next VACUUM (_prune_cache).
    conn.execute(f"PRAGMA page_size = {CACHE_PAGE}")
    conn.execute("CREATE TABLE IF NOT EXISTS vec (hash BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")


def quiet_blas() -> None:
    """One BLAS thread for numpy, when memvault is the first to import it: the one product a
    search makes is bound by memory, and on a busy 2-core machine waiting for OpenBLAS's workers
    cost 15.9 ms against 0.7 ms alone (performance.md). A program that imported numpy itself
    keeps its own setting."""
    import sys

    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ.setdefault(var, "1")


class VectorStore:
    """One model's vectors (see the module's docstring)."""

    def __init__(self, folder: Path, model: str):
        quiet_blas()
        self.folder = Path(folder)
        self.model = model
        self.state_path = self.folder / "state.json"
        self.lock_path = self.folder / "write.lock"
        self._cache: sqlite3.Connection | None = None
        self._kept: tuple[tuple[int, int, int], View] | None = None  # (state.json's stamp, its view)

    # -- state -----------------------------------------------------------------------

    def state(self) -> State:
        """The state to read by: state.json, when its generation's files hold what it says.
        Files that do not are read again once: a writer may have swapped generations between
        reading state.json and looking at the files; short files under an unchanged
        state.json are a crash's, not trusted (empty: rebuilt from the cache)."""
        got = self._read_state()
        for _ in range(3):
            if got is None or got.model != self.model:
                break
            if self._files_hold(got):
                return got
            again = self._read_state()
            if again == got:
                break
            got = again
        return State(model=self.model)

    def _read_state(self) -> State | None:
        try:
            raw = json.loads(self.state_path.read_text(encoding="utf-8"))
            return State(**{k: raw[k] for k in asdict(State()) if k in raw})
        except (OSError, ValueError, TypeError):
            return None

    def _files_hold(self, st: State) -> bool:
        """The generation's files hold at least `st.count` rows (a crash can leave them short)."""
        if st.count == 0:
            return True
        try:
            return (self._path("rows", st.gen).stat().st_size >= 8 * st.count
                    and self._path("matrix", st.gen).stat().st_size >= 4 * st.dim * st.count
                    and self._path("alive", st.gen).stat().st_size >= st.count
                    and self._path("hashes", st.gen).stat().st_size >= HASH_BYTES * st.count)
        except OSError:
            return False

    def _path(self, part: str, gen: int) -> Path:
        ext = {"rows": "i64", "matrix": "f32", "alive": "u8", "hashes": "bin"}[part]
        return self.folder / f"{part}.{gen}.{ext}"

    def _save(self, st: State) -> None:
        atomic_write(self.state_path, json.dumps(asdict(st), sort_keys=True) + "\n")

    @contextlib.contextmanager
    def writing(self, timeout: float = 30.0) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with locked(self.lock_path, timeout=timeout, what="the semantic vectors",
                    setting="[index] lock_timeout in memvault.toml sets the wait"):
            yield

    # -- the cache: content hash -> vector ---------------------------------------------

    def _cache_conn(self) -> sqlite3.Connection:
        if self._cache is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # a search reads it from the thread that embeds its query (index/semantic.py Probe),
            # never at the same time as another thread
            self._cache = derived_db.connect(self.folder / "cache.sqlite", _cache_setup,
                                             what="the semantic vector cache", check_same_thread=False)
        return self._cache

    def cached(self, hashes: list[bytes]) -> dict[bytes, bytes]:
        """The stored vectors (raw float32 bytes) of those `hashes` the cache holds."""
        conn = self._cache_conn()
        out: dict[bytes, bytes] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), 500):
            chunk = unique[i:i + 500]
            marks = ",".join("?" * len(chunk))
            out.update(conn.execute(f"SELECT hash, v FROM vec WHERE hash IN ({marks})", chunk).fetchall())
        return out

    def put(self, pairs: list[tuple[bytes, bytes]]) -> None:
        conn = self._cache_conn()
        with conn:
            conn.executemany("INSERT OR REPLACE INTO vec (hash, v) VALUES (?, ?)", pairs)

    def cache_size(self) -> int:
        return int(self._cache_conn().execute("SELECT count(*) FROM vec").fetchone()[0])

    # -- the live table ----------------------------------------------------------------

    def reset(self, index_id: str, dim: int) -> State:
        """Forget every live row (the index was renumbered); the cache stays. Under `writing`."""
        old = self.state()
        st = State(gen=old.gen + 1, index_id=index_id, dim=dim, model=self.model)
        for part in ("rows", "matrix", "alive", "hashes"):
            self._path(part, st.gen).write_bytes(b"")
        self._save(st)
        self._drop_generations(keep=st.gen)
        return st

    def append(self, st: State, rowids: list[int], hashes: list[bytes], vectors: bytes, high_water: int) -> State:
        """Add rows (rowids above `st.high_water`, ascending) and their vectors. Under `writing`."""
        import numpy as np

        n = len(rowids)
        if n:
            self._write_at(self._path("rows", st.gen), 8 * st.count, np.asarray(rowids, dtype=np.int64).tobytes())
            self._write_at(self._path("matrix", st.gen), 4 * st.dim * st.count, vectors)
            self._write_at(self._path("alive", st.gen), st.count, b"\x01" * n)
            self._write_at(self._path("hashes", st.gen), HASH_BYTES * st.count, b"".join(hashes))
        st = State(**{**asdict(st), "count": st.count + n, "high_water": max(st.high_water, high_water)})
        self._save(st)
        return st

    @staticmethod
    def _write_at(path: Path, offset: int, data: bytes) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, offset)  # a crash may have left bytes past the count
            os.pwrite(fd, data, offset)
        finally:
            os.close(fd)

    def remove(self, st: State, rowids: Any) -> State:
        """Mark the rows of `rowids` (those held) dead. Under `writing`."""
        import numpy as np

        if st.count == 0 or len(rowids) == 0:
            return st
        rows = self._map("rows", st, np.int64)
        want = np.asarray(sorted(rowids), dtype=np.int64)
        pos = np.searchsorted(rows, want)
        inside = pos < st.count
        pos, want = pos[inside], want[inside]
        pos = pos[rows[pos] == want]
        alive = np.memmap(self._path("alive", st.gen), dtype=np.uint8, mode="r+", shape=(st.count,))
        newly = int(alive[pos].sum())
        alive[pos] = 0
        alive.flush()
        del alive
        st = State(**{**asdict(st), "dead": st.dead + newly})
        self._save(st)
        if st.dead >= COMPACT_MIN and st.dead >= COMPACT_SHARE * st.count:
            st = self.compact(st)
        return st

    def compact(self, st: State) -> State:
        """Copy the live rows to a new generation. Under `writing`."""
        import numpy as np

        view = self.view(st)
        keep = view.alive.astype(bool)
        new = State(**{**asdict(st), "gen": st.gen + 1, "count": int(keep.sum()), "dead": 0})
        self._path("rows", new.gen).write_bytes(np.ascontiguousarray(view.rows[keep]).tobytes())
        self._path("matrix", new.gen).write_bytes(np.ascontiguousarray(view.matrix[keep]).tobytes())
        self._path("alive", new.gen).write_bytes(b"\x01" * new.count)
        self._path("hashes", new.gen).write_bytes(np.ascontiguousarray(view.hashes[keep]).tobytes())
        del view
        self._save(new)
        self._drop_generations(keep=new.gen)
        self._prune_cache(new)
        return new

    def _prune_cache(self, st: State) -> None:
        """Drop cached vectors no live row uses, when they outnumber the live rows (old versions
        of edited entries). Those of recent edits go too: re-encoding them is cheap."""
        conn = self._cache_conn()
        if self.cache_size() <= 2 * max(st.live, 1000):
            return
        view = self.view(st)
        live = [bytes(h) for h in view.hashes[view.alive.astype(bool)]]
        with conn:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep (hash BLOB PRIMARY KEY) WITHOUT ROWID")
            conn.execute("DELETE FROM keep")
            conn.executemany("INSERT OR IGNORE INTO keep VALUES (?)", [(h,) for h in live])
            conn.execute("DELETE FROM vec WHERE hash NOT IN (SELECT hash FROM keep)")
        conn.execute("VACUUM")

    def _drop_generations(self, keep: int) -> None:
        for path in self.folder.glob("*.*.*"):
            parts = path.name.split(".")
            if len(parts) == 3 and parts[0] in ("rows", "matrix", "alive", "hashes") and parts[1].isdigit() \
                    and int(parts[1]) != keep:
                with contextlib.suppress(OSError):
                    path.unlink()

    # -- reading -----------------------------------------------------------------------

    def _map(self, part: str, st: State, dtype: Any, shape: tuple[int, ...] | None = None) -> np.ndarray:
        import numpy as np

        if st.count == 0:
            return np.zeros(shape or (0,), dtype=dtype)
        return np.memmap(self._path(part, st.gen), dtype=dtype, mode="r", shape=shape or (st.count,))

    def view(self, st: State | None = None) -> View:
        """The live table as arrays (memory-mapped), as of `st` (default: now; taken again when
        a writer swaps generations while it is mapped)."""
        if st is not None:
            return self._view(st)
        stamp = _stamp(self.state_path)
        if stamp is not None and self._kept is not None and self._kept[0] == stamp:
            return self._kept[1]  # a kept-open index (server, watcher) maps the files once per change
        for _ in range(3):
            try:
                view = self._view(self.state())
            except FileNotFoundError:
                continue
            if stamp is not None and stamp == _stamp(self.state_path):
                self._kept = (stamp, view)
            return view
        return self._view(State(model=self.model))

    def _view(self, st: State) -> View:
        import numpy as np

        return View(
            st,
            self._map("rows", st, np.int64),
            self._map("matrix", st, np.float32, (st.count, st.dim)),
            self._map("alive", st, np.uint8),
            self._map("hashes", st, np.dtype((np.void, HASH_BYTES))),
        )

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob("*") if p.is_file()) if self.folder.is_dir() else 0

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


@dataclass
class View:
    state: State
    rows: np.ndarray
    matrix: np.ndarray
    alive: np.ndarray
    hashes: np.ndarray

    def near(self, query: np.ndarray, k: int, also: list[int]) -> tuple[list[tuple[int, float]], dict[int, float], float, float]:
        """(the `k` nearest live rows, the cosine of those and of the rows `also` names that
        are held, the mean and the spread of the cosines over the live rows)."""
        return self.near_from(self.similarities(query), k, also)

    def similarities(self, query: np.ndarray) -> np.ndarray:
        """The cosine of `query` with every row (the one pass over the matrix; numpy releases
        the interpreter lock meanwhile, so a search runs its word side beside it)."""
        import numpy as np

        n = self.state.count
        if n == 0:
            return np.zeros(0, dtype=np.float32)
        q = query.astype(np.float32)
        parts = min(os.cpu_count() or 1, 4) if n >= SPLIT_ROWS else 1
        if parts == 1:
            return self.matrix @ q
        # one slice of rows per core, each product in its own thread (numpy lets go of the
        # interpreter lock): 13.4 -> 7.3 ms over 100k rows on 2 idle cores. Threads, not BLAS's
        # own pool: a waiting thread sleeps, where OpenBLAS's workers spin on a busy machine.
        out = np.empty(n, dtype=np.float32)
        bounds = [n * i // parts for i in range(parts + 1)]

        def product(i: int) -> None:
            out[bounds[i]:bounds[i + 1]] = self.matrix[bounds[i]:bounds[i + 1]] @ q

        helpers = [threading.Thread(target=product, args=(i,)) for i in range(1, parts)]
        for t in helpers:
            t.start()
        product(0)
        for t in helpers:
            t.join()
        return out

    def near_from(self, sims: np.ndarray, k: int, also: list[int],
                  ) -> tuple[list[tuple[int, float]], dict[int, float], float, float]:
        """`near` from the similarities already computed."""
        import numpy as np

        if self.state.count == 0:
            return [], {}, 0.0, 1.0
        live = self.alive.astype(bool) if self.state.dead else None
        pool = sims[live] if live is not None else sims
        mean, std = (float(pool.mean()), float(pool.std())) if len(pool) else (0.0, 1.0)
        top = self._best(np.where(live, sims, -np.inf) if live is not None else sims, k)
        scores = dict(top)
        if also:
            want = np.asarray(sorted(set(also)), dtype=np.int64)
            pos = np.searchsorted(self.rows, want)
            inside = pos < self.state.count
            pos, want = pos[inside], want[inside]
            hit = self.rows[pos] == want
            for p, r in zip(pos[hit], want[hit], strict=True):
                if live is None or live[p]:
                    scores[int(r)] = float(sims[p])
        return top, scores, mean, std

    def _best(self, sims: np.ndarray, k: int) -> list[tuple[int, float]]:
        import numpy as np

        n = len(sims)
        k = min(k, self.state.live)
        if k <= 0:
            return []
        idx = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        idx = idx[np.argsort(-sims[idx], kind="stable")]
        return [(int(self.rows[i]), float(sims[i])) for i in idx if np.isfinite(sims[i])]

    def top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The `k` live rows nearest `query` (cosine: vectors are unit length): (rowid, score),
        best first. Exact search: a matrix-vector product over every row."""
        return self.near(query, k, [])[0] if k > 0 else []
