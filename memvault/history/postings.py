"""Recorded QUERY's postings on disk: every file version analysed once, not once per process.

`asof_search.StateSearch` analyses each file version of a commit into postings the first
time a process needs it: ~5 s for 100k entries, paid again by every cold
`asof --recorded T QUERY`. `PostingStore` keeps exactly those tables — per term the
(version, entry, column-weighted frequency) triples; per entry its length; per version the
summed length and its newest entry's time — in `.memvault/history.sqlite`, with versions
numbered as the recorded index numbers them (recorded_index.py). A query then reads the rows
of its own words, and `StoredSearch` builds `Event`s only for the entries ranking looks at.

The first recorded QUERY on a vault analyses every version and stores the result (the
one-off cost in performance.md); versions the index gains later (new commits) are analysed
and appended on the next QUERY. If the index is rebuilt with another numbering, the store
notices (a digest of the numbering) and starts over. Derived, like everything in .memvault.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from array import array
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memvault.derived_db import source_fingerprint
from memvault.entries.model import Event
from memvault.history.live_columns import StaleIndex
from memvault.history.recorded_search import StateSearch, _Postings, analyse, newest
from memvault.search.weights import Weights
from memvault.sqlutil import in_chunks

if TYPE_CHECKING:
    from memvault.history.live_columns import RecordedIndex

FORMAT = 2  # 2: zlib-compressed arrays (7x smaller: sorted version numbers, few distinct frequencies)
SOURCES = ("memvault.history.recorded_search", "memvault.history.postings", "memvault.search.fields",
           "memvault.search.bm25", "memvault.search.weights", "memvault.search.textproc")
PER_VERSION = {"lbase": "q", "total": "q", "newest": "d"}


def _digest(keys: list[tuple[str, str]]) -> str:
    return hashlib.sha1(json.dumps(keys, separators=(",", ":")).encode()).hexdigest()


def store_fingerprint(parse_fingerprint: str, weights: Weights) -> str:
    return source_fingerprint(f"{FORMAT} {parse_fingerprint} {list(weights.field_weights)}", *SOURCES)


class PostingStore:
    """The stored tables, for the versions 0..covered-1 of a recorded index."""

    def __init__(self, db: sqlite3.Connection, fingerprint: str,
                 on_damage: Callable[[BaseException], Any] = lambda _exc: None):
        self.db = db
        self.fingerprint = fingerprint
        self.on_damage = on_damage  # ParseCache.heal: a damaged file is deleted and started anew
        db.execute("CREATE TABLE IF NOT EXISTS postings (term TEXT PRIMARY KEY, vid BLOB, doc BLOB, freq BLOB)")
        db.execute("CREATE TABLE IF NOT EXISTS postings_meta (name TEXT PRIMARY KEY, data BLOB)")
        self.covered = 0
        self.lengths = array("i")
        self.cols: dict[str, array[Any]] = {name: array(code) for name, code in PER_VERSION.items()}
        self.analysed_in = 0.0  # seconds spent analysing versions in this process

    def _meta_row(self) -> bytes | None:
        row = self.db.execute("SELECT data FROM postings_meta WHERE name = 'meta'").fetchone()
        return row[0] if row else None

    def _load_meta(self, keys: list[tuple[str, str]]) -> bool:
        """Load the per-version tables if they fit `keys` (else start empty)."""
        self.covered = 0
        self.lengths = array("i")
        self.cols = {name: array(code) for name, code in PER_VERSION.items()}
        rows = dict(self.db.execute("SELECT name, data FROM postings_meta"))
        if "meta" not in rows:
            return False
        meta = json.loads(rows["meta"])
        covered = meta.get("covered", 0)
        if (meta.get("fingerprint") != self.fingerprint or covered > len(keys)
                or meta.get("digest") != _digest(keys[:covered])):
            return False
        self.covered = covered
        self.lengths.frombytes(rows["lengths"])
        for name in PER_VERSION:
            self.cols[name].frombytes(rows[name])
        return True

    def ensure(self, index: RecordedIndex, weights: Weights) -> None:
        """Cover every version of `index`: load what is stored, analyse and store the rest.

        The analysis (seconds the first time) runs outside any transaction, so other processes
        keep reading and writing the cache; the result is written only if the store did not
        change meanwhile, else it is read again (another process may have done the work)."""
        import time

        keys = index.keys
        for _ in range(3):
            seen = self._meta_row()
            stored = self._load_meta(keys)
            if stored and self.covered == len(keys):
                return
            start = time.perf_counter()
            first = self.covered
            added = self._analyse(index, keys, weights)
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if self._meta_row() != seen:
                    self.db.execute("ROLLBACK")
                    continue
                if not stored:
                    self.db.execute("DELETE FROM postings")
                self._write(added, keys, first)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.analysed_in += time.perf_counter() - start
            return

    def _analyse(self, index: RecordedIndex, keys: list[tuple[str, str]], weights: Weights) -> dict[str, tuple[array, array, array]]:
        """Postings of the versions not covered yet; the per-version tables grow in place."""
        added: dict[str, tuple[array, array, array]] = defaultdict(lambda: (array("i"), array("i"), array("d")))
        parsed = index.loader.events_of(keys[self.covered:])
        for vid in range(self.covered, len(keys)):
            ordered = sorted(parsed[keys[vid]], key=lambda e: e.line)
            lengths, terms = analyse(ordered, weights)
            self.cols["lbase"].append(len(self.lengths))
            self.lengths.extend(lengths)
            self.cols["total"].append(sum(lengths))
            self.cols["newest"].append(newest(ordered))
            for term, (docs, freqs) in terms.items():
                row = added[term]
                row[0].extend([vid] * len(docs))
                row[1].extend(docs)
                row[2].extend(freqs)
        return added

    def _write(self, added: dict[str, tuple[array, array, array]], keys: list[tuple[str, str]], first: int) -> None:
        if first:  # append to the stored rows of the terms seen again
            terms = list(added)
            for chunk, marks in in_chunks(terms):
                query = f"SELECT term, vid, doc, freq FROM postings WHERE term IN ({marks})"
                for term, *blobs in self.db.execute(query, chunk).fetchall():
                    old = [array(code) for code in "iid"]
                    for arr, blob in zip(old, blobs, strict=True):
                        arr.frombytes(zlib.decompress(blob))
                    for arr, more in zip(old, added[term], strict=True):
                        arr.extend(more)
                    added[term] = (old[0], old[1], old[2])
        self.db.executemany("INSERT OR REPLACE INTO postings VALUES (?, ?, ?, ?)",
                            [(t, *(zlib.compress(arr.tobytes(), 1) for arr in arrs)) for t, arrs in added.items()])
        self.covered = len(keys)
        meta = {"fingerprint": self.fingerprint, "covered": self.covered, "digest": _digest(keys)}
        rows = [("meta", json.dumps(meta).encode()), ("lengths", self.lengths.tobytes())]
        rows += [(name, arr.tobytes()) for name, arr in self.cols.items()]
        self.db.executemany("INSERT OR REPLACE INTO postings_meta VALUES (?, ?)", rows)

    def postings(self, term: str) -> _Postings | None:
        try:
            row = self.db.execute("SELECT vid, doc, freq FROM postings WHERE term = ?", (term,)).fetchone()
            if row is None:
                return None
            p = _Postings()
            columns: tuple[array[Any], ...] = (p.vid, p.doc, p.freq)
            for arr, blob in zip(columns, row, strict=True):
                arr.frombytes(zlib.decompress(blob))
        except (sqlite3.DatabaseError, zlib.error, ValueError) as exc:
            self.on_damage(exc)
            raise StaleIndex(f"stored postings of {term!r} unreadable: {exc}") from exc  # answered without them
        return p


class _Lazy:
    """vid -> value, computed on first use."""

    def __init__(self, make: Any):
        self.make = make
        self.got: dict[int, Any] = {}

    def __getitem__(self, vid: int) -> Any:
        value = self.got.get(vid)
        if value is None:
            value = self.got[vid] = self.make(vid)
        return value


class StoredSearch(StateSearch):
    """`StateSearch` over a `PostingStore`: nothing analysed at query time except versions
    partly newer than T and phrase candidates, as in the base class; `Event`s are read from
    the parse cache only for the versions whose entries ranking touches."""

    def __init__(self, weights: Weights, store: PostingStore, index: RecordedIndex):
        super().__init__(weights)
        self.store = store
        self.keys = index.keys
        self.loader = index.loader
        self.vids = {key: vid for vid, key in enumerate(index.keys[: store.covered])}
        lbase, lengths = store.cols["lbase"], store.lengths

        def entries(vid: int) -> list[Event]:
            events = sorted(index.events_list(vid), key=lambda e: e.line)
            if len(events) != len(self.lengths[vid]):
                raise StaleIndex(f"{index.keys[vid][0]} parses to {len(events)} entries, postings have {len(self.lengths[vid])}")
            return events

        self.events = _Lazy(entries)
        # a list, not a lazy lookup: scoring reads one length per matching entry
        ends = [*lbase[1:], len(lengths)]
        self.lengths = [lengths[start:end] for start, end in zip(lbase, ends, strict=True)]
        self.total = store.cols["total"]
        self.newest = store.cols["newest"]

    def vid(self, key: tuple[str, str], events: list[Event] | None) -> int:
        return self.vids[key]

    def _prefetch(self, vids: list[int]) -> None:
        todo = [self.keys[v] for v in dict.fromkeys(vids) if v not in self.events.got]
        if todo:
            self.loader.events_of(todo)  # one read of the parse cache; `entries` then hits memory

    def _postings(self, term: str) -> _Postings | None:
        if term not in self.postings:
            p = self.store.postings(term)
            if p is None:
                return None
            self.postings[term] = p
        return self.postings[term]
