"""BM25 over in-memory events, as the FTS5 backend computes it.

Time travel ranks "as search would have at T" without an index: `bm25_scores` gives the same
scores as the sqlite backend for the same entries, and history's postings (recorded_search.py)
reuse `columns` and `frequency` so their scores agree with it bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from memvault.entries.model import Event
from memvault.search.fields import FIELDS, contexts_by_position, field_texts
from memvault.search.plan import EXHAUSTIVE, Plan
from memvault.search.textproc import Query, analyze
from memvault.search.weights import Weights

OWN = [i for i, name in enumerate(FIELDS) if name != "context"]  # the entry's own fields
EVERY = list(range(len(FIELDS)))


def bm25_scores(events: list[Event], query: Query, w: Weights, plan: Plan = EXHAUSTIVE) -> dict[int, float]:
    """BM25 of `events` for `query` (index in list -> score) as the FTS5 backend computes it,
    for the entries `plan` admits."""
    return bm25(analysed(events), query, w, plan)


def columns(events: list[Event], contexts: list[str]) -> list[list[list[str]]]:
    """Analysed fields of each entry, with its neighbours' text as the context field."""
    return [[analyze(text) for text in field_texts(ev, ctx)] for ev, ctx in zip(events, contexts, strict=True)]


def analysed(events: list[Event]) -> list[list[list[str]]]:
    return columns(events, contexts_by_position(events))


def doc_freqs(columns: list[list[list[str]]], terms: Iterable[str]) -> dict[str, int]:
    wanted = set(terms)
    counts = dict.fromkeys(wanted, 0)
    for cols in columns:
        for t in wanted.intersection([t for c in cols for t in c]):
            counts[t] += 1
    return counts


def frequency(cols: list[list[str]], phrase: tuple[str, ...], own_only: bool, w: Weights) -> tuple[bool, float]:
    """(occurs, column-weighted frequency) of `phrase` in one entry's analysed fields."""
    counts = [(i, count_phrase(cols[i], phrase)) for i in (OWN if own_only else EVERY)]
    return any(c for _, c in counts), sum(w.field_weights[i] * c for i, c in counts)


def bm25(columns: list[list[list[str]]], query: Query, w: Weights, plan: Plan) -> dict[int, float]:
    """Same phrase list as the FTS5 MATCH expression (required phrases once on the entry's own
    fields and once anywhere, then terms and compounds), FTS5's bm25(): per phrase the
    column-weighted frequency, document length over all columns, IDF log((N - n + 0.5) /
    (n + 0.5)) floored at 1e-6 (N and n over all entries). Only the entries `plan` admits are
    scored, as the sqlite backend's planned query does."""
    scored = ([(p, True) for p in query.phrases] + [(p, False) for p in query.phrases]
              + [((t,), False) for t in query.terms] + [(c, False) for c in query.compounds])
    if not scored:
        return {}
    freqs: list[list[float]] = []
    hits = [0] * len(scored)
    lengths = []
    for cols in columns:
        row = []
        for k, (phrase, own_only) in enumerate(scored):
            occurs, freq = frequency(cols, phrase, own_only, w)
            if occurs:
                hits[k] += 1
            row.append(freq)
        freqs.append(row)
        lengths.append(sum(len(c) for c in cols))
    n = len(columns)
    avg = (sum(lengths) / n) if n else 1.0
    idf = [max(math.log((n - h + 0.5) / (h + 0.5)), 1e-6) for h in hits]
    n_required = len(query.phrases)
    out: dict[int, float] = {}
    for d, row in enumerate(freqs):
        cols = columns[d]
        matched = all(count_phrase_any(cols, OWN, p) for p in query.phrases)
        if not matched or not any(count_phrase_any(cols, EVERY, ph) for ph, _ in scored[n_required:]):
            continue
        def has(term: str, cols: list[list[str]] = cols) -> bool:
            return bool(count_phrase_any(cols, EVERY, (term,)))

        if not plan.admits(has,
                           any(count_phrase_any(cols, EVERY, c) for c in query.compounds)):
            continue
        norm = w.k1 * (1 - w.b + w.b * lengths[d] / (avg or 1.0))
        out[d] = sum(idf[k] * f * (w.k1 + 1) / (f + norm) for k, f in enumerate(row) if f > 0)
    return out


def count_phrase(tokens: list[str], phrase: tuple[str, ...]) -> int:
    k = len(phrase)
    if k == 1:
        return tokens.count(phrase[0])
    return sum(1 for i in range(len(tokens) - k + 1) if tuple(tokens[i : i + k]) == phrase)


def count_phrase_any(cols: list[list[str]], among: Iterable[int], phrase: tuple[str, ...]) -> bool:
    return any(count_phrase(cols[i], phrase) for i in among)
