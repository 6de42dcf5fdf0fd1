"""Search over a recorded state, in memory, as `memvault search` would rank it at T.

`bm25.bm25_scores` analyses every entry of the pool on each call: seconds for a 60k-entry
commit. Here each file version is analysed once per session into postings (term -> version,
entry, column-weighted frequency) and entry lengths, so a query walks only the postings of
its words; quoted phrases and compounds are counted on the few entries holding all their
words. Scores are bit for bit those of `bm25_scores` over the same pool — the same phrase
list, frequencies, lengths, IDF and sums in the same order (tests/test_history_recorded_search.py checks
it) — and, like `Index.search`, the best `[search] candidates` are then re-ranked by
`rank.rank_candidates` at T.

A version some of whose entries are newer than T (so not in the pool) changes its
neighbours' context field; such a version is analysed afresh for that query.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.search import bm25
from memvault.search.bm25 import frequency
from memvault.search.fields import contexts
from memvault.search.hits import Hit
from memvault.search.rank import make_filter, rank_candidates
from memvault.search.textproc import Query, parse_query
from memvault.search.weights import Weights

Phrase = tuple[tuple[str, ...], bool]  # (words, in the entry's own fields only)
Key = tuple[int, int]  # (vid, position in the version); negative vid: the entry is in `Rows`
Rows = dict[Key, tuple[Event, list[list[str]], int]]  # entry, analysed fields, length
State = Iterable[tuple[tuple[str, str], list[Event] | None]]  # (path, blob), parsed entries if at hand


def columns(events: list[Event]) -> list[list[list[str]]]:
    """Analysed fields of each entry of one file (entries in line order)."""
    return bm25.columns(events, contexts(events))


class _Postings:
    __slots__ = ("vid", "doc", "freq")

    def __init__(self) -> None:
        self.vid = array("i")
        self.doc = array("i")
        self.freq = array("d")


def analyse(ordered: list[Event], weights: Weights) -> tuple[array, dict[str, tuple[list[int], list[float]]]]:
    """One file version's entries (by line) as search sees them: each entry's length and,
    per term, the entries holding it with their column-weighted frequency."""
    lengths = array("i")
    terms: dict[str, tuple[list[int], list[float]]] = {}
    field_weights = weights.field_weights
    for i, cols in enumerate(columns(ordered)):
        lengths.append(sum(len(c) for c in cols))
        counts = [Counter(c) for c in cols]
        for term in dict.fromkeys(t for c in cols for t in c):
            # frequency(cols, (term,), False): the same sum; skipped zero terms add 0.0
            f: float = 0
            for weight, cnt in zip(field_weights, counts, strict=True):
                c = cnt.get(term, 0)
                if c:
                    f += weight * c
            row = terms.get(term)
            if row is None:
                row = terms[term] = ([], [])
            row[0].append(i)
            row[1].append(f)
    return lengths, terms


def newest(ordered: list[Event]) -> float:
    return max((e.timestamp.timestamp() for e in ordered if e.timestamp), default=-math.inf)


class StateSearch:
    """Per-session postings over every file version seen; queries restricted to a state.

    Subclassed by asof_postings.StoredSearch, which reads the same tables from disk: the
    code below reaches them only through `vid`, `_postings`, `events[vid]`, `lengths[vid]`,
    `total[vid]` and `newest[vid]`."""

    def __init__(self, weights: Weights):
        self.w = weights
        self.vids: dict[tuple[str, str], int] = {}
        self.events: Any = []  # vid -> the version's entries, by line
        self.total: Any = []  # vid -> summed length of its entries
        self.lengths: Any = []  # vid -> length of each entry
        self.newest: Any = []  # vid -> time of its newest dated entry
        self.postings: dict[str, _Postings] = {}

    def vid(self, key: tuple[str, str], events: list[Event] | None) -> int:
        vid = self.vids.get(key)
        if vid is not None:
            return vid
        assert events is not None
        vid = len(self.events)
        self.vids[key] = vid
        ordered = sorted(events, key=lambda e: e.line)
        self.events.append(ordered)
        lengths, terms = analyse(ordered, self.w)
        for term, (docs, freqs) in terms.items():
            p = self.postings.get(term)
            if p is None:
                p = self.postings[term] = _Postings()
            p.vid.extend([vid] * len(docs))
            p.doc.extend(docs)
            p.freq.extend(freqs)
        self.lengths.append(lengths)
        self.total.append(sum(lengths))
        self.newest.append(newest(ordered))
        return vid

    def _postings(self, term: str) -> _Postings | None:
        return self.postings.get(term)

    def _prefetch(self, vids: list[int]) -> None:
        """Entries of these versions are about to be read (StoredSearch loads them at once)."""

    def scores(self, state: State, q: Query, at: datetime) -> list[tuple[Event, float]]:
        """BM25 of every matching entry written by `at` in the state (the pool)."""
        keyed, rows = self.keyed_scores(state, q, at)
        return [(self._event(key, rows), score) for key, score in keyed]

    def _event(self, key: Key, rows: Rows) -> Event:
        return rows[key][0] if key[0] < 0 else self.events[key[0]][key[1]]

    def keyed_scores(self, state: State, q: Query,
                     at: datetime) -> tuple[list[tuple[Key, float]], Rows]:
        """`scores` with entries as (vid, position) keys (negative vid: rows[key] holds the
        entry), so that only the entries ranked need to exist as `Event`s."""
        scored: list[Phrase] = ([(p, True) for p in q.phrases] + [(p, False) for p in q.phrases]
                                + [((t,), False) for t in q.terms] + [(c, False) for c in q.compounds])
        if not scored:
            return [], {}
        self._cols: dict[int, list[list[list[str]]]] = {}  # per query: analysed versions
        clean: set[int] = set()
        dirty: list[list[Event]] = []  # versions partly newer than `at`: analysed afresh
        n = total = 0
        t = at.timestamp()
        for key, events in state:
            vid = self.vid(key, events)
            if self.newest[vid] <= t:
                clean.add(vid)
                n += len(self.lengths[vid])
                total += self.total[vid]
                continue
            pool = [e for e in self.events[vid] if e.timestamp is None or e.timestamp <= at]
            if pool:
                dirty.append(pool)
                n += len(pool)
        rows: Rows = {}
        freqs: dict[Key, dict[int, float]] = {}
        hits = [0] * len(scored)
        single = {words[0] for words, own in scored if len(words) == 1 and not own}
        for term in single:
            self._walk(term, clean, freqs, scored, hits)
        for k, (words, own) in enumerate(scored):
            if len(words) > 1 or own:
                self._phrase(k, words, own, clean, rows, freqs, hits)
        required = len(q.phrases)
        for pool in dirty:
            for ev, cols in zip(pool, columns(pool), strict=True):
                length = sum(len(c) for c in cols)
                total += length
                seen = [frequency(cols, words, own, self.w) for words, own in scored]
                for k, (occurs, _) in enumerate(seen):
                    hits[k] += occurs
                if any(occurs for occurs, _ in seen[required:]):
                    row_key = (-1 - len(rows), 0)
                    rows[row_key] = (ev, cols, length)
                    freqs[row_key] = {k: f for k, (_, f) in enumerate(seen)}
        return self._bm25(scored, q, rows, freqs, hits, n, total), rows

    def _walk(self, term: str, clean: set[int], freqs: dict[Key, dict[int, float]], scored: list[Phrase],
              hits: list[int]) -> None:
        p = self._postings(term)
        if p is None:
            return
        slots = [k for k, (words, own) in enumerate(scored) if words == (term,) and not own]
        count = 0
        for vid, doc, f in zip(p.vid, p.doc, p.freq, strict=True):
            if vid in clean:
                count += 1
                row = freqs.get((vid, doc))
                if row is None:
                    row = freqs[(vid, doc)] = {}
                for k in slots:
                    row[k] = f
        for k in slots:
            hits[k] += count

    def _phrase(self, k: int, words: tuple[str, ...], own: bool, clean: set[int], rows: Rows,
                freqs: dict[Key, dict[int, float]], hits: list[int]) -> None:
        """Entries holding every word of a phrase, counted on their analysed fields."""
        sets = []
        for word in dict.fromkeys(words):
            p = self._postings(word)
            if p is None:
                return
            sets.append({(v, d) for v, d in zip(p.vid, p.doc, strict=True) if v in clean})
        for key in set.intersection(*sets):
            ev, cols, _ = self._row(key, rows)
            occurs, f = frequency(cols, words, own, self.w)
            if occurs:
                hits[k] += 1
            freqs.setdefault(key, {})[k] = f

    def _row(self, key: Key, rows: Rows) -> tuple[Event, list[list[str]], int]:
        row = rows.get(key)
        if row is None:
            vid, doc = key
            if vid not in self._cols:
                self._cols[vid] = columns(self.events[vid])
            cols = self._cols[vid][doc]
            row = rows[key] = (self.events[vid][doc], cols, self.lengths[vid][doc])
        return row

    def _bm25(self, scored: list[Phrase], q: Query, rows: Rows, freqs: dict[Key, dict[int, float]],
              hits: list[int], n: int, total: int) -> list[tuple[Key, float]]:
        w = self.w
        avg = (total / n) if n else 1.0
        idf = [max(math.log((n - h + 0.5) / (h + 0.5)), 1e-6) for h in hits]
        required = len(q.phrases)
        out = []
        for key, got in freqs.items():
            row = [got.get(k, 0.0) for k in range(len(scored))]
            if q.phrases or q.compounds:
                ev, cols, length = self._row(key, rows) if key[0] >= 0 else rows[key]
                if not all(frequency(cols, p, True, w)[0] for p in q.phrases):
                    continue
                if not any(frequency(cols, words, False, w)[0] for words, _ in scored[required:]):
                    continue
            elif key[0] >= 0:
                length = self.lengths[key[0]][key[1]]
            else:
                length = rows[key][2]
            norm = w.k1 * (1 - w.b + w.b * length / (avg or 1.0))
            out.append((key, sum(idf[k] * f * (w.k1 + 1) / (f + norm) for k, f in enumerate(row) if f > 0)))
        return out

    def rank(
        self, state: list[tuple[tuple[str, str], list[Event]]], query: str, timeline: Timeline,
        at: datetime, limit: int,
    ) -> list[Hit]:
        """Ranked hits as `Index.search` gives them, over the state as of `at`."""
        return self.rank_with(state, query, lambda _: timeline, at, limit)[0]

    def rank_with(
        self, state: State, query: str,
        timeline_of: Callable[[list[Event]], Timeline], at: datetime, limit: int,
    ) -> tuple[list[Hit], Timeline | None]:
        """`rank`, with the state's timeline given per candidate set: `timeline_of(events)`
        must hold those events, their first occurrences and their superseder chains (a
        timeline cut down to them answers as the whole one, see recorded_index). Also
        returns the timeline the hits were ranked on."""
        q = parse_query(query)
        if q.empty:
            return [], None
        keyed, rows = self.keyed_scores(state, q, at)
        keyed.sort(key=lambda pair: -pair[1])
        keep = make_filter(q.types, q.tags)
        size = max(self.w.candidates, limit * 5)
        while True:
            self._prefetch([key[0] for key, _ in keyed[:size] if key[0] >= 0])
            found = [(self._event(key, rows), score) for key, score in keyed[:size]]
            timeline = timeline_of([ev for ev, _ in found])
            hits = rank_candidates(found, q, timeline, at, self.w, keep=keep, limit=limit)
            if len(hits) >= limit or len(found) < size:
                return hits, timeline
            size *= 4


def parts(hit: Hit) -> dict[str, Any]:
    return {
        "score": round(hit.score, 6),
        "score_parts": {
            "relevance": round(hit.relevance, 6), "importance": round(hit.importance, 6),
            "recency": round(hit.recency, 6), "confidence": round(hit.confidence, 6),
        },
        "snippet": hit.snippet, "matched": hit.matched,
    }
