"""The index's semantic side: vectors kept in step with the index's rows, and the nearest rows
to a query (the extra; docs/semantic.md).

`sync` brings the vectors up to date after the index changed: rows above the last one seen are
new (index rowids are never reused), rows gone from the index are marked dead, and a new text
is encoded only when the content-hash cache lacks it. `memvault index` and the watcher embed
every new entry; a search embeds up to `[semantic] search_encode_limit` itself and otherwise
ranks with the vectors there are (saying how many entries still wait).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.errors import LockTimeout
from memvault.search.fusion import Near, fuse
from memvault.search.index import store
from memvault.semantic import FUSIONS, settings
from memvault.semantic.choice import choose_mode, model_spec, runtime_missing, warn
from memvault.semantic.models import ModelSpec, SemanticUnavailable
from memvault.semantic.text import embed_text, text_hash
from memvault.semantic.vectors import State, VectorStore

if TYPE_CHECKING:
    import numpy as np

    from memvault.semantic.encoder import Encoder

log = logging.getLogger("memvault")

Progress = Any  # (done, total) -> None


@dataclass
class SyncReport:
    encoded: int = 0  # texts the model encoded
    reused: int = 0  # new rows whose vector the cache held
    removed: int = 0
    pending: int = 0  # index rows still without a vector
    live: int = 0
    seconds: float = 0.0
    model: str = ""
    reset: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "encoded": self.encoded, "reused": self.reused, "removed": self.removed,
                "pending": self.pending, "vectors": self.live, "seconds": round(self.seconds, 4),
                "reset": self.reset}


class Probe:
    """The semantic side of one search, worked out beside its word side: a thread opens the
    model, embeds the query and compares it with every vector (onnxruntime and numpy release the
    interpreter lock), while the search's own thread asks the text engine. `near` waits for it."""

    def __init__(self, sem: Semantic, text: str, asked: str | None):
        self.sem, self.asked, self.text = sem, asked, text
        self._view: Any = None
        self._sims: Any = None
        self._error: BaseException | None = None
        self._remote = _connect(sem.index.vault.derived / SOCKET_NAME)  # a watcher with the model open
        self._thread = threading.Thread(target=self._run, args=(text,), name="memvault-semantic", daemon=True)
        if self._remote is None:
            self._thread.start()

    def _run(self, text: str) -> None:
        try:
            vector = self.sem.query_vector(text)
            view = self.sem.store.view()
            if view.state.count and view.matrix.shape[1] == vector.shape[0]:
                self._view, self._sims = view, view.similarities(vector)
        except BaseException as exc:  # raised again in the search's thread, by `near`
            self._error = exc

    def found(self, mode: str, lexical: list[tuple[int, float]], n: int,
              fusion: str | None = None) -> tuple[list[tuple[int, float]], set[int]]:
        return found(self, mode, lexical, n, fusion)

    @staticmethod
    def mark(hits: list[Any], heads: dict[int, Any], lexical: list[tuple[int, float]], by_meaning: set[int]) -> None:
        """Say on each hit whether words, meaning or both found it (`matched_by` in --json)."""
        words = {heads[r].id for r, _ in lexical if r in heads}
        meaning = {heads[r].id for r in by_meaning if r in heads}
        for h in hits:
            h.matched_by = tuple(how for how, ids in (("words", words), ("meaning", meaning)) if h.id in ids)

    def near(self, k: int, also: list[int]) -> Near | None:
        """The `k` nearest rows and the cosines of `also`; None when the model cannot be loaded
        and the search falls back to words (an asked-for mode raises instead)."""
        if self._remote is not None:
            remote, self._remote = self._remote, None
            answer = _ask(remote, {"key": self.sem.spec.key, "text": self.text, "k": k, "also": also})
            if answer is not None:
                return answer
            self._thread.start()  # no answer: this process opens the model after all
        self._thread.join()
        if isinstance(self._error, SemanticUnavailable) and not self.asked:
            warn(str(self._error))
            return None
        if self._error is not None:
            raise self._error
        if self._view is None:
            return Near()
        top, scores, mean, std = self._view.near_from(self._sims, k, also)
        return Near(top, scores, mean, std)


ROWS_PER_APPEND = 2048  # a first build's vectors become searchable this many rows at a time
SOCKET_NAME = "semantic.sock"  # watch/query_server.py listens there


def _connect(path: Any) -> socket.socket | None:
    """A connection to the watcher's query socket, or None (no watcher, or a stale socket)."""
    if not path.exists() or len(os.fsencode(path)) >= 104:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def _ask(sock: socket.socket, request: dict[str, Any]) -> Near | None:
    """The watcher's answer (watch/query_server.py), or None when it gives none in time, answers
    with an error or for another model."""
    with sock:
        try:
            sock.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
            answer = json.loads(data)
        except (OSError, ValueError):
            return None
    if not isinstance(answer, dict) or "error" in answer or answer.get("key") != request["key"]:
        return None
    try:
        return Near([(int(r), float(c)) for r, c in answer["top"]], {int(r): float(c) for r, c in answer["scores"]},
                    float(answer["mean"]), float(answer["std"]))
    except (KeyError, TypeError, ValueError):
        return None


def prepare(index: Any, mode: str, text: str, asked: str | None) -> tuple[str, Probe | None]:
    """The mode a search runs in and its semantic side, started. A model whose files are there
    but cannot be loaded (a damaged graph) is found only when the model is opened: an asked-for
    mode fails, the default falls back to words with a warning, as `choose_mode` does."""
    if mode == "lexical" or not text:
        return mode, None
    try:
        sem = index.semantic(mode)
    except SemanticUnavailable as exc:
        if asked:
            raise
        warn(str(exc))
        return "lexical", None
    return mode, Probe(sem, text, asked)


def after_update(index: Any, progress: Progress | None = None) -> dict[str, Any] | None:
    """Embed what an index update added, when the vault searches by meaning. Never fails the
    update: a model that cannot be loaded is said once, the report's `semantic` holds the
    `error`, and the index stays lexical. A search's
    update embeds nothing: the search itself does, as far as its mode needs (`Index.semantic`),
    so a `--mode lexical` search never loads the model."""
    if index.for_search:
        return None
    opts = settings(index.vault.config)
    named = opts.get("model", "auto") != "auto" and opts.get("mode", "auto") != "lexical"
    try:
        if named and not runtime_missing():
            model_spec(index.vault.config, index.vault.root)  # a model the user named that is not there: say so
        if choose_mode(index.vault.config, None, index.vault.root) == "lexical":
            return None
        sem = index.semantic_side()
        if progress is not None and hasattr(progress, "stage"):
            progress.stage("embedding")  # `memvault index`'s bar: a second one for the embedding
        report = sem.sync(progress=progress)
    except SemanticUnavailable as exc:  # the words are indexed; the report says why nothing was embedded
        warn(str(exc))
        return {"error": str(exc)}
    return report.to_dict()



@dataclass
class Semantic:
    """One index's vectors and (opened on first use) its model."""

    index: Any  # search/index/core.py's Index (not imported: it imports this module)
    spec: ModelSpec
    store: VectorStore
    opts: dict[str, Any] = field(default_factory=dict)
    _encoders: dict[bool, Encoder] = field(default_factory=dict)
    # A process that searches, or embeds new entries, a second time goes on doing so (a server,
    # the watcher, an agent's session): from then on the optimised session. It opens ~0.1 s
    # slower, then encodes a query or a saved entry 3-7x faster (unoptimised, an int8 graph
    # dequantizes its weights on every run; docs/performance.md, issue 18). A one-shot search,
    # even one that first embeds a fresh entry, keeps the quick-open session.
    _queries: int = 0
    _embeds: int = 0

    @classmethod
    def open(cls, index: Any) -> Semantic:
        spec = model_spec(index.vault.config, index.vault.root)
        folder = index.vault.derived / "vectors" / spec.key
        opts = settings(index.vault.config)
        if opts.get("fusion") not in FUSIONS:
            raise index.vault.config.error("semantic", "fusion", f"[semantic] fusion must be one of {', '.join(FUSIONS)}")
        return cls(index, spec, VectorStore(folder, spec.key), opts)

    def encoder(self, bulk: bool = False) -> Encoder:
        """The model's session: the optimised one (`bulk`) when asked, or when it is open already."""
        from memvault.semantic.encoder import Encoder

        bulk = bulk or True in self._encoders
        if bulk not in self._encoders:
            self._encoders[bulk] = Encoder(self.spec, bulk=bulk, threads=int(self.opts.get("threads", 0)))
            if bulk:
                self._encoders.pop(False, None)  # one session held (each is ~150 MB of RSS)
        return self._encoders[bulk]

    def close(self) -> None:
        self.store.close()

    # -- keeping step with the index ----------------------------------------------------

    def sync(self, *, limit: int | None = None, progress: Progress | None = None, wait: bool = True) -> SyncReport:
        """Vectors for every index row (see the module docstring). With `limit`, encode nothing
        when more than `limit` texts lack a vector (the report's `pending` says how many). Without
        `wait`, another process embedding (holding the lock) is left to it."""
        started = time.perf_counter()
        report = SyncReport(model=self.spec.name)
        conn, _ = self.index.reader()
        index_id = self._index_id(conn)
        st = self.store.state()
        if st.index_id == index_id and self._new_rows(conn, st) == 0 and self._held_rows(conn, st) == st.live:
            report.live = st.live
            return report  # the usual case: nothing to do, no lock taken
        try:
            with self.store.writing(float(self.index.settings.get("lock_timeout", 30.0)) if wait else 0.0):
                st = self.store.state()
                if st.index_id != index_id:
                    st = self.store.reset(index_id, st.dim)
                    report.reset = True
                st = self._drop_gone(conn, st, report)
                st = self._add_new(conn, st, report, limit, progress)
                report.live = st.live
        except (LockTimeout, OSError):  # busy, or a read-only .memvault: rank with what there is
            if wait:
                raise
            report.pending, report.live = self._new_rows(conn, st), st.live  # another process is embedding
        report.seconds = time.perf_counter() - started
        if report.pending and limit is not None:
            log.warning("%d entries have no vector yet: semantic search ranks without them until "
                        "`memvault index` embeds them", report.pending)
        return report

    def _index_id(self, conn: sqlite3.Connection) -> str:
        return store.get_meta(conn).get("build_id") or f"inode:{self.index.db_path.stat().st_ino}"

    @staticmethod
    def _new_rows(conn: sqlite3.Connection, st: State) -> int:
        return int(conn.execute("SELECT count(*) FROM events WHERE rowid > ?", (st.high_water,)).fetchone()[0])

    @staticmethod
    def _held_rows(conn: sqlite3.Connection, st: State) -> int:
        # every row less those above the high water: a bare count(*) reads only the b-tree's
        # page headers (~0.02 ms at 100k rows), a count over a rowid range decodes every row
        # (~50 ms), and every search asks (issue 18, docs/performance.md)
        total = int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
        return total - Semantic._new_rows(conn, st)

    def _drop_gone(self, conn: sqlite3.Connection, st: State, report: SyncReport) -> State:
        import numpy as np

        if self._held_rows(conn, st) == st.live:
            self.index.removed_rowids.clear()
            return st
        hinted = [r for r in self.index.removed_rowids if r <= st.high_water]
        self.index.removed_rowids.clear()
        if hinted:  # what this process's own update deleted: no scan of every row
            before = st.dead
            st = self.store.remove(st, hinted)
            report.removed = st.dead - before if st.dead >= before else len(hinted)
            if self._held_rows(conn, st) == st.live:
                return st
        present = np.fromiter((r for (r,) in conn.execute("SELECT rowid FROM events WHERE rowid <= ?",
                                                             (st.high_water,))), dtype=np.int64)
        view = self.store.view(st)
        mine = view.rows[view.alive.astype(bool)]
        gone = np.setdiff1d(mine, present, assume_unique=True)
        del view
        report.removed += len(gone)
        return self.store.remove(st, gone)

    def _add_new(self, conn: sqlite3.Connection, st: State, report: SyncReport, limit: int | None,
                 progress: Progress | None) -> State:
        """Vectors for the rows above the last one seen, appended a chunk of rows at a time (in
        row order), so a search sees the vectors done so far and a killed build keeps them."""
        new = store.load_events(conn, "rowid > ?", (st.high_water,))
        if not new:
            return st
        new.sort(key=lambda p: p[0])
        texts = [embed_text(ev) for _, ev in new]
        hashes = [text_hash(t) for t in texts]
        have = self.store.cached(hashes)
        missing = {h: t for h, t in zip(hashes, texts, strict=True) if h not in have}
        if limit is not None and len(missing) > limit:
            report.pending = len(new)
            return st
        report.encoded, report.reused = len(missing), len(new) - len(missing)
        encoder = None
        done = 0
        for start in range(0, len(new), ROWS_PER_APPEND):
            rows, part = new[start:start + ROWS_PER_APPEND], hashes[start:start + ROWS_PER_APPEND]
            todo = {h: missing[h] for h in part if h in missing and h not in have}
            if todo:
                if encoder is None:
                    self._embeds += 1
                    encoder = self.encoder(bulk=len(missing) > 64 or self._embeds > 1)
                items = sorted(todo.items(), key=lambda p: len(p[1]))  # batches of like length pad little
                vectors = encoder.encode([t for _, t in items])
                pairs = [(h, v.tobytes()) for (h, _), v in zip(items, vectors, strict=True)]
                self.store.put(pairs)
                have.update(pairs)
                done += len(pairs)
                if progress:
                    progress(done, len(missing))
            dim = len(have[part[0]]) // 4
            if st.dim != dim and st.count:  # vectors of another width (a model changed in place): start over
                return self._add_new(conn, self.store.reset(st.index_id, dim), report, limit, progress)
            if st.dim != dim:
                st = State(**{**st.__dict__, "dim": dim})
            st = self.store.append(st, [r for r, _ in rows], part, b"".join(have[h] for h in part), rows[-1][0])
        return st

    # -- reading -------------------------------------------------------------------------

    def pending(self) -> int:
        """Index rows without a vector (a stat and a count; no model loaded)."""
        conn, _ = self.index.reader()
        st = self.store.state()
        if st.index_id != self._index_id(conn):
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
        return self._new_rows(conn, st)

    def query_vector(self, text: str) -> np.ndarray:
        """The query's vector; kept in the cache, so asking again loads no model (an agent
        repeats its questions; a person re-runs a search with another --limit)."""
        import numpy as np

        key = text_hash("\0query\0" + text)
        held = self.store.cached([key]).get(key)
        if held is not None:
            return np.frombuffer(held, dtype=np.float32)
        self._queries += 1  # a process that asks again (a server, a bench) earns the optimised session
        vector = self.encoder(bulk=self._queries > 1).encode([text], query=True)[0]
        with contextlib.suppress(sqlite3.Error):  # a cache write lost to a busy database costs one encode
            self.store.put([(key, vector.tobytes())])
        return vector

    def nearest(self, vector: np.ndarray, k: int, also: list[int] | None = None) -> Near:
        """The `k` rows nearest `vector`, with the cosines of the rows `also` names (the lexical
        candidates) and the spread of all cosines (search/fusion.py)."""
        view = self.store.view()
        if view.state.count == 0 or view.matrix.shape[1] != vector.shape[0]:
            return Near()
        top, scores, mean, std = view.near(vector, k, also or [])
        return Near(top, scores, mean, std)




def found(probe: Probe | None, mode: str, lexical: list[tuple[int, float]], n: int,
          fusion: str | None = None) -> tuple[list[tuple[int, float]], set[int]]:
    """The candidates a search ranks under `mode`, and the rows found by meaning (which count
    as matching the query: search/rank.py puts matches before entries found through neighbours)."""
    if probe is None:
        return lexical, set()
    sem = probe.sem
    # the nearest `candidates` (more as a search that ran short of hits asks for more words)
    near = probe.near(max(int(sem.opts.get("candidates", 50)), n // 4), [r for r, _ in lexical])
    if near is None:
        return lexical, set()
    floor = sem.opts.get("min_similarity")
    floor = sem.spec.min_similarity if floor is None else float(floor)
    near.top = [(r, c) for r, c in near.top if c >= floor]  # nearest, and near enough to be about it
    if mode == "semantic":
        top = near.top[:n]
        return top, {r for r, _ in top}
    fused = fuse(lexical, near, fusion or str(sem.opts.get("fusion", "weighted")), float(sem.opts.get("weight", 0.5)),
                 int(sem.opts.get("rrf_k", 60)))
    return fused, {r for r, _ in near.top}
