"""Search over a recorded state, in memory, as `memvault search` would rank it at T.

`rank.bm25_scores` analyses every entry of the pool on each call: ~3 s for a 60k-entry
commit. Here each file version is analysed once per session into global postings (term ->
version, entry, weighted tf, first position), so a query walks only the postings of its
terms. Scores are bit-for-bit those of `bm25_scores` over the same pool (same sums in the
same order; tests/test_asof_search.py checks it), then, like `Index.search`, the best
`[search] candidates` are re-ranked by `rank.rank_candidates` at T.

A version some of whose entries are newer than T (so not in the pool) changes its
neighbours' context field; such a version is analysed afresh for that query.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .events import Timeline
from .model import Event
from .rank import (
    FIELDS,
    Hit,
    Weights,
    _has_phrase,
    contexts,
    field_texts,
    make_filter,
    rank_candidates,
)
from .textproc import Query, analyze, parse_query


@dataclass
class _Doc:
    """One entry's analysis: tf of every term in first-seen order, length, body tokens."""

    tf: dict[str, float]
    length: float


def analyse(events: list[Event], w: Weights) -> list[_Doc]:
    """What `bm25_scores` computes per entry, for all terms; `events` are one file's, by line."""
    out = []
    for ev, ctx in zip(events, contexts(events), strict=True):
        tf: dict[str, float] = {}
        length = 0.0
        for weight, text in zip(w.field_weights, field_texts(ev, ctx), strict=True):
            toks = analyze(text)
            length += len(toks)
            for t in toks:
                tf[t] = tf.get(t, 0) + weight  # Counter's 0 + weight + ... in the same order
        out.append(_Doc(tf, length))
    return out


def body_terms(ev: Event, ctx: str, w: Weights) -> list[str]:
    out: list[str] = []
    for name, text in zip(FIELDS, field_texts(ev, ctx), strict=True):
        if name != "context":
            out += analyze(text) + ["\x00"]
    return out


class _Postings:
    __slots__ = ("vid", "doc", "tf", "first")

    def __init__(self) -> None:
        self.vid = array("I")
        self.doc = array("I")
        self.tf = array("d")
        self.first = array("I")


class StateSearch:
    """Per-session postings over every file version seen; queries restricted to a state."""

    def __init__(self, weights: Weights):
        self.w = weights
        self.vids: dict[tuple[str, str], int] = {}
        self.events: list[list[Event]] = []  # vid -> the version's entries, by line
        self.lengths: list[float] = []  # vid -> total length of its entries
        self.doc_lengths: list[array] = []  # vid -> length of each entry
        self.newest: list[float] = []  # vid -> time of its newest dated entry
        self.postings: dict[str, _Postings] = {}

    def vid(self, key: tuple[str, str], events: list[Event]) -> int:
        vid = self.vids.get(key)
        if vid is not None:
            return vid
        vid = len(self.events)
        self.vids[key] = vid
        ordered = sorted(events, key=lambda e: e.line)
        docs = analyse(ordered, self.w)
        self.events.append(ordered)
        self.lengths.append(sum(d.length for d in docs))
        self.doc_lengths.append(array("d", (d.length for d in docs)))
        self.newest.append(max((e.timestamp.timestamp() for e in ordered if e.timestamp), default=-math.inf))
        for i, d in enumerate(docs):
            for pos, (term, tf) in enumerate(d.tf.items()):
                p = self.postings.get(term)
                if p is None:
                    p = self.postings[term] = _Postings()
                p.vid.append(vid)
                p.doc.append(i)
                p.tf.append(tf)
                p.first.append(pos)
        return vid

    def scores(self, state: Iterable[tuple[tuple[str, str], list[Event]]], q: Query, at: datetime) -> list[tuple[Event, float]]:
        """BM25 of every matching entry written by `at` in the state (pool = those entries)."""
        terms = q.all_terms
        if not terms:
            return []
        clean: set[int] = set()
        dirty: list[list[Event]] = []  # versions with entries newer than `at`: analysed afresh
        n = 0
        total = 0.0
        t = at.timestamp()
        for key, events in state:
            vid = self.vid(key, events)
            if self.newest[vid] <= t:
                clean.add(vid)
                total += self.lengths[vid]
                n += len(self.events[vid])
                continue
            pool = [e for e in self.events[vid] if e.timestamp is None or e.timestamp <= at]
            if pool:
                dirty.append(pool)  # its lengths are added below
            n += len(pool)
        hits: dict[tuple[int, int], list[tuple[int, str, float]]] = {}
        for term in terms:
            p = self.postings.get(term)
            if p is None:
                continue
            for vid, doc, tf, first in zip(p.vid, p.doc, p.tf, p.first, strict=True):
                if vid in clean:
                    found = hits.get((vid, doc))
                    if found is None:
                        hits[(vid, doc)] = [(first, term, tf)]
                    else:
                        found.append((first, term, tf))
        docs: list[tuple[Event, dict[str, float], float, str | None]] = []
        for (vid, i), found in hits.items():
            found.sort()
            ev = self.events[vid][i]
            docs.append((ev, {t: f for _, t, f in found}, self.doc_lengths[vid][i], None))
        for pool in dirty:
            ordered = sorted(pool, key=lambda e: e.line)
            for ev, d, ctx in zip(ordered, analyse(ordered, self.w), contexts(ordered), strict=True):
                total += d.length
                tf = {t: f for t, f in d.tf.items() if t in terms}
                if tf:
                    docs.append((ev, tf, d.length, ctx))
        return self._bm25(docs, q, n, total)

    def _bm25(self, docs: list[tuple[Event, dict[str, float], float, str | None]], q: Query, n: int, total: float) -> list[tuple[Event, float]]:
        w = self.w
        avg = (total / n) if n else 0.0
        df: dict[str, int] = {}
        for _, tf, _, _ in docs:
            for t in tf:
                df[t] = df.get(t, 0) + 1
        out = []
        for ev, tf, length, ctx in docs:
            positions = None
            if q.phrases or q.compounds:
                positions = body_terms(ev, ctx if ctx is not None else "", w)
            if q.phrases and not all(_has_phrase(positions, p) for p in q.phrases):  # type: ignore[arg-type]
                continue
            score = 0.0
            for t, f in tf.items():
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * f * (w.k1 + 1) / (f + w.k1 * (1 - w.b + w.b * length / (avg or 1)))
            for p in q.compounds:
                if _has_phrase(positions, p):  # type: ignore[arg-type]
                    score *= 1.25
            if score > 0:
                out.append((ev, score))
        return out

    def rank(
        self, state: list[tuple[tuple[str, str], list[Event]]], query: str, timeline: Timeline,
        at: datetime, limit: int,
    ) -> list[Hit]:
        """Ranked hits as `Index.search` gives them, over the state as of `at`."""
        q = parse_query(query)
        if q.empty:
            return []
        scored = self.scores(state, q, at)
        scored.sort(key=lambda pair: -pair[1])
        keep = make_filter(q.types, q.tags)
        size = max(self.w.candidates, limit * 5)
        while True:
            found = scored[:size]
            hits = rank_candidates(found, q, timeline, at, self.w, keep=keep, limit=limit)
            if len(hits) >= limit or len(found) < size:
                return hits
            size *= 4


def parts(hit: Hit) -> dict[str, Any]:
    return {
        "score": round(hit.score, 6),
        "score_parts": {
            "relevance": round(hit.relevance, 6), "importance": round(hit.importance, 6),
            "recency": round(hit.recency, 6), "confidence": round(hit.confidence, 6),
        },
        "snippet": hit.snippet,
    }
