"""whoosh backend (optional extra `memvault[whoosh]`): the text lives in a whoosh directory
beside the store. whoosh is unmaintained and slow to build; it is kept because the design
card chose it, and it passes the same contract tests as the default backend.

Writes are two commits (whoosh, then SQLite). The store is marked `dirty` before and the
whoosh directory carries a generation token that the store records after; a crash between
the two is therefore seen as stale and rebuilt, never trusted.

whoosh reports unreadable files with whatever its decoders raise (pickle, struct, zlib,
EOF errors); every error of a read or write of the directory is therefore `Damaged`, and
the index rebuilds itself (heal.py) instead of failing every search.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Concatenate, ParamSpec, TypeVar

from memvault.derived_db import Damaged
from memvault.errors import ConfigError, MemvaultError
from memvault.fsio import atomic_write
from memvault.search.index.engine import Doc
from memvault.search.plan import EXHAUSTIVE, Plan
from memvault.search.textproc import Query

FIELDS = ("title", "body", "tags", "extra", "context")
GENERATION_FILE = "GENERATION"
P = ParamSpec("P")
R = TypeVar("R")


def _reading(method: Callable[Concatenate[WhooshEngine, P], R]) -> Callable[Concatenate[WhooshEngine, P], R]:
    """whoosh's errors while it reads or writes its files mean damaged files."""

    @functools.wraps(method)
    def wrapper(self: WhooshEngine, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except (MemvaultError, MemoryError):
            raise
        except Exception as exc:
            raise Damaged(f"whoosh index {self.directory}: {type(exc).__name__}: {exc}") from exc

    return wrapper


def _whoosh() -> ModuleType:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # whoosh 2.7 has invalid escapes (SyntaxWarning)
            import whoosh.analysis
            import whoosh.fields
            import whoosh.index
            import whoosh.query
            import whoosh.scoring
    except ImportError:
        raise ConfigError(
            "the whoosh backend needs the optional extra: pip install 'memvault[whoosh]'"
        ) from None
    return whoosh


class WhooshEngine:
    name = "whoosh"
    atomic = False
    counts_terms = False  # the build counts document frequencies itself

    def __init__(self, directory: Path, weights: tuple[float, ...]):
        self.w = _whoosh()
        self.directory = Path(directory)
        self.weights = dict(zip(FIELDS, weights, strict=True))
        # whoosh has no type hints: its index and writer objects are Any to the checker
        self._ix: Any = None
        self._writer: Any = None

    def _schema(self) -> Any:
        f = self.w.fields
        text = f.TEXT(analyzer=self.w.analysis.SpaceSeparatedTokenizer(), phrase=True)
        return f.Schema(rid=f.ID(stored=True, unique=True),
                        **{name: text for name in FIELDS})

    @property
    @_reading
    def ix(self) -> Any:
        if self._ix is None:
            if not self.w.index.exists_in(str(self.directory)):
                self.create()
            else:
                self._ix = self.w.index.open_dir(str(self.directory))
        return self._ix

    def create(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._ix = self.w.index.create_in(str(self.directory), self._schema())
        self._new_generation()

    def _new_generation(self) -> None:
        atomic_write(self.directory / GENERATION_FILE, uuid.uuid4().hex)

    @_reading
    def begin(self) -> None:
        self._writer = self.ix.writer(timeout=30.0)

    @_reading
    def add(self, docs: list[Doc]) -> None:
        if self._writer is None:
            self.begin()
        for rowid, fields in docs:
            self._writer.add_document(rid=str(rowid), **dict(zip(FIELDS, fields, strict=True)))

    @_reading
    def delete(self, docs: list[Doc]) -> None:
        if self._writer is None:
            self.begin()
        for rowid, _ in docs:
            self._writer.delete_by_term("rid", str(rowid))

    @_reading
    def commit(self) -> None:
        if self._writer is not None:
            self._new_generation()  # before: a crash after the commit must not look current
            self._writer.commit()
            self._writer = None

    def abort(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.cancel()
            self._writer = None

    def _query(self, q: Query, plan: Plan) -> Any:
        Q = self.w.query
        fields = [f for f in FIELDS if self.weights[f] > 0]

        def any_field(terms: tuple[str, ...], among: list[str] = fields) -> Any:
            if len(terms) == 1:
                return Q.Or([Q.Term(f, terms[0], boost=self.weights[f]) for f in among])
            return Q.Or([Q.Phrase(f, list(terms), boost=self.weights[f]) for f in among])

        optional = [any_field((t,)) for t in q.terms] + [any_field(c) for c in q.compounds]
        if not q.phrases and not plan.exhaustive:
            # the plan's words (and the compounds) select the documents; the others only add
            chosen = [any_field((t,)) for t in plan.select]
            rows = Q.Or([Q.And(chosen) if plan.every else Q.Or(chosen)] + [any_field(c) for c in q.compounds])
            rest = [any_field((t,)) for t in q.terms if t not in plan.select]
            return Q.AndMaybe(rows, Q.Or(rest)) if rest else rows
        # a quoted phrase must be in the entry itself, not only in its neighbours' context
        own = [f for f in fields if f != "context"]
        required = [any_field(p, own) for p in q.phrases]
        if not required:
            return Q.Or(optional)
        return Q.And(required + [Q.Or(required + optional)])

    @_reading
    def search(self, query: Query, limit: int, plan: Plan = EXHAUSTIVE) -> list[tuple[int, float]]:
        if query.empty:
            return []
        weighting = self.w.scoring.BM25F(B=0.75, K1=1.2)
        with self.ix.searcher(weighting=weighting) as s:
            results = s.search(self._query(query, plan), limit=limit)
            return [(int(hit["rid"]), float(hit.score)) for hit in results]

    def term_counts(self) -> None:
        return None

    def generation(self) -> str | None:
        try:
            return (self.directory / GENERATION_FILE).read_text().strip()
        except OSError:
            return None

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.glob("*") if p.is_file())

    def close(self) -> None:
        self.abort()
        if self._ix is not None:
            self._ix.close()
            self._ix = None
