"""How search ranks: BM25 relevance combined with importance, recency and confidence.

    score = w_rel·relevance + w_imp·importance + w_rec·recency + w_conf·confidence

`relevance` is the engine's BM25 divided by the best BM25 of the query (0-1), `importance`
the entry's `Importance:` (default by kind), `recency` e^(-λ·hours since the entry was written
or last returned by a search), `confidence` the decayed confidence at the ranking time. The
weights and λ come from `[search]` in memvault.toml. Superseded and expired entries are left
out unless asked for; then they are scored down and never placed above what replaced them.
A live entry that supersedes a matching entry is as relevant as the entry it replaces (a
search for the old belief finds the correction).

Which entries BM25 scores at all is planned per query (`plan_query`): when a query's words
together occur in more than `score_limit` entries, its rarer words select the entries and the
commoner ones only add to their scores (the common-terms cutoff, docs/search.md).

Everything here is pure: the index feeds it candidates with BM25 scores, and
`rank_events` ranks a list of in-memory events the same way (with an in-memory BM25 and the
same plan), so time travel can rank "as search would have at T" without an index.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from memvault.config.core import Config
from memvault.entries import decay
from memvault.entries.model import Event
from memvault.entries.render import iso
from memvault.entries.timeline import Timeline
from memvault.search.textproc import Query, analyze, iter_words, parse_query

SEARCH_DEFAULTS: dict[str, Any] = {
    "relevance": 0.5,
    "importance": 0.2,
    "recency": 0.2,
    "confidence": 0.1,
    "recency_lambda": 0.01,  # per hour: the recall protocol's starting value (half-life ~69 h)
    "importance_default": 0.5,
    "curated_importance": 0.7,  # MEMORY.md holds what someone chose to keep
    "superseded_factor": 0.8,
    "candidates": 200,  # BM25 candidates re-ranked per query
    "score_limit": 5000,  # entries BM25 scores per query before rare words select them (plan_query)
    "field_weights": {"title": 2.0, "body": 1.0, "tags": 2.0, "extra": 0.5, "context": 0.3},
    "k1": 1.2,
    "b": 0.75,
}
FIELDS = ("title", "body", "tags", "extra", "context")
MARK_OPEN, MARK_CLOSE = "**", "**"


@dataclass(frozen=True)
class Weights:
    relevance: float = 0.5
    importance: float = 0.2
    recency: float = 0.2
    confidence: float = 0.1
    recency_lambda: float = 0.01
    importance_default: float = 0.5
    curated_importance: float = 0.7
    superseded_factor: float = 0.8
    candidates: int = 200
    score_limit: int = 5000
    field_weights: tuple[float, ...] = (2.0, 1.0, 2.0, 0.5, 0.3)
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def from_config(cls, config: Config | None) -> Weights:
        from memvault.errors import ConfigError

        raw = config.section("search", SEARCH_DEFAULTS) if config else dict(SEARCH_DEFAULTS)
        fw = {**SEARCH_DEFAULTS["field_weights"], **(raw.get("field_weights") or {})}
        where = f"{config.path or 'memvault.toml'}" if config else "memvault.toml"

        def number(key: str, value: Any, kind: type = float) -> Any:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{where}: [search] {key} = {value!r} is not a number")
            return kind(value)

        values = {k: number(k, raw[k]) for k in (
            "relevance", "importance", "recency", "confidence", "recency_lambda",
            "importance_default", "curated_importance", "superseded_factor", "k1", "b")}
        unknown = set(fw) - set(FIELDS)
        if unknown:
            raise ConfigError(f"{where}: [search] field_weights has unknown fields {sorted(unknown)}; known: {', '.join(FIELDS)}")
        return cls(**values, candidates=number("candidates", raw["candidates"], int),
                   score_limit=number("score_limit", raw["score_limit"], int),
                   field_weights=tuple(number(f"field_weights.{f}", fw[f]) for f in FIELDS))


@dataclass
class Hit:
    """One search result, with the parts of its score."""

    id: str
    type: str
    timestamp: datetime | None
    file: str
    line: int
    end_line: int
    score: float
    relevance: float
    importance: float
    recency: float
    confidence: float
    snippet: str
    tags: tuple[str, ...] = ()
    status: str = "live"
    superseded_by: str | None = None
    title: str = ""
    content: str = ""
    kind: str = "log"
    matched: bool = True  # the entry itself holds a query word (not only its neighbours)
    entry: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    event: Event | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> str:
        return f"{self.file}#L{self.line}-L{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        """The entry's JSON shape (as `list`/`show` print it) plus the search's own fields."""
        return {
            **self.entry,
            "id": self.id, "type": self.type, "timestamp": iso(self.timestamp),
            "file": self.file, "line": self.line, "end_line": self.end_line,
            "location": self.location, "score": round(self.score, 6),
            "score_parts": {
                "relevance": round(self.relevance, 6), "importance": round(self.importance, 6),
                "recency": round(self.recency, 6), "confidence": round(self.confidence, 6),
            },
            "snippet": self.snippet, "tags": list(self.tags), "status": self.status,
            "superseded_by": self.superseded_by, "title": self.title, "content": self.content,
            "kind": self.kind, "matched": self.matched,
        }


# ------------------------------------------------------------------------------ parts


def recency(written: datetime | None, last_access: datetime | None, at: datetime, lam: float) -> float:
    """e^(-λ·hours) since the later of writing and last access (not after `at`)."""
    times = [t for t in (written, last_access) if t is not None and t <= at]
    if not times:
        return 0.0 if written is None or written > at else 1.0
    hours = (at - max(times)).total_seconds() / 3600.0
    return math.exp(-lam * hours)


def importance_of(event: Event, w: Weights) -> float:
    return _importance(event.importance, event.kind, w)


def _importance(value: float | None, kind: str, w: Weights) -> float:
    if value is not None:
        return value
    return w.curated_importance if kind == "curated" else w.importance_default


def score_ceiling(relevance: float, head: Any, last_access: datetime | None, at: datetime, w: Weights,
                  config: Config) -> float:
    """The score `rank_candidates` gives a live entry that no other entry supersedes or
    reconfirms, from what the index stores beside it (`store.Head`: timestamp, kind,
    importance, confidence_0, updated) without decoding it. A filtered-out or non-live entry
    is no hit at all, so this bounds what the candidate can add; search decodes only the
    candidates whose ceiling reaches its hits (`Index._rank`)."""
    times = [t for t in (head.timestamp, head.updated) if t is not None and t <= at]
    confirmed = max(times) if times else head.timestamp  # Timeline.confirmed_at, nothing reconfirming
    conf = decay.confidence_at(head.confidence0, confirmed, at, rate=config.decay_rate, model=config.decay_model)
    rec = recency(head.timestamp, last_access, at, w.recency_lambda)
    return combine(relevance, _importance(head.importance, head.kind, w), rec, conf, w)


def combine(rel: float, imp: float, rec: float, conf: float, w: Weights) -> float:
    return w.relevance * rel + w.importance * imp + w.recency * rec + w.confidence * conf


def field_texts(event: Event, context: str = "") -> tuple[str, str, str, str, str]:
    """The text of each indexed field (title, body, tags, extra, context), before analysis."""
    extra = " ".join(filter(None, (event.id, event.type, event.source or "", event.scope or "",
                                   " ".join(event.links), event.category or "")))
    return event.title, event.content, " ".join(event.tags), extra, context


def contexts(events: list[Event]) -> list[str]:
    """Per event of one daily log (in file order), the text of the entries beside it.

    A log is written in sequence, so an entry's neighbours say what it is about ("Yes, last
    week!" answers the entry before it). Indexed as a low-weight field; curated bullets
    stand alone and get none.
    """
    out = []
    for i, ev in enumerate(events):
        if ev.kind != "log":
            out.append("")
            continue
        near = [events[j].content for j in (i - 1, i + 1) if 0 <= j < len(events) and events[j].kind == "log"]
        out.append("\n".join(near))
    return out


# ------------------------------------------------------------------------------ query plans


@dataclass(frozen=True)
class Plan:
    """Which entries a query's BM25 scores. Exhaustive (`select` empty): every entry that holds
    any query word. Otherwise only entries that hold any word of `select` (all of them when
    `every`) or one of the query's compounds; their scores still count every query word."""

    select: tuple[str, ...] = ()
    every: bool = False

    @property
    def exhaustive(self) -> bool:
        return not self.select

    def admits(self, has: Callable[[str], bool], has_compound: bool) -> bool:
        if self.exhaustive or has_compound:
            return True
        return (all if self.every else any)(has(t) for t in self.select)


EXHAUSTIVE = Plan()


def plan_query(query: Query, docs: Mapping[str, int], n_docs: int, limit: int) -> Plan:
    """Keep the entries BM25 scores near `limit` (Elasticsearch's common-terms cutoff).

    `docs` is each word's document frequency. A query whose words occur in at most `limit`
    entries together is scored exhaustively. Otherwise the rarest words whose entries fit in
    `limit` select the rows, and the commoner words only add to their scores: an entry that
    holds nothing but the query's common words is left out when the query has rarer ones. When
    even the rarest word is that common, entries must hold the rarest few together (the fewest
    whose expected overlap, taking words as independent, fits in `limit`). Queries with quoted
    phrases (already selective) and one-word queries are exhaustive; `limit` 0 turns this off.
    """
    terms = query.terms
    if query.phrases or len(terms) < 2 or limit <= 0:
        return EXHAUSTIVE
    df = {t: docs.get(t, 0) for t in terms}
    if sum(df.values()) <= limit:
        return EXHAUSTIVE
    order = sorted(terms, key=lambda t: (df[t], t))
    select: list[str] = []
    total = 0
    for t in order:
        if total + df[t] > limit:
            break
        select.append(t)
        total += df[t]
    if select:
        return Plan(tuple(select))
    select, expected = [order[0]], float(df[order[0]])
    for t in order[1:]:
        if expected <= limit:
            break
        select.append(t)
        expected *= df[t] / max(n_docs, 1)
    return Plan(tuple(select), every=True)


# ------------------------------------------------------------------------------ ranking

Filter = Callable[[Event], bool]


def make_filter(types: Iterable[str] = (), tags: Iterable[str] = (), since: datetime | None = None,
                until: datetime | None = None) -> Filter:
    """The --type/--tag/--since/--until test, as used by the index and in memory alike."""
    wanted_types = {t.lower() for t in types}
    wanted_tags = {t.lower().lstrip("#") for t in tags}

    def keep(ev: Event) -> bool:
        if wanted_types and ev.type not in wanted_types:
            return False
        if wanted_tags and not wanted_tags & set(ev.tags):
            return False
        if since is not None and (ev.timestamp is None or ev.timestamp < since):
            return False
        return not (until is not None and (ev.timestamp is None or ev.timestamp > until))

    return keep


def rank_candidates(
    candidates: Iterable[tuple[Event, float]],
    query: Query,
    timeline: Timeline,
    at: datetime,
    weights: Weights,
    *,
    access: Mapping[str, Any] | None = None,
    include_all: bool = False,
    keep: Filter | None = None,
    limit: int = 10,
    best: float | None = None,
) -> list[Hit]:
    """Score (event, bm25) candidates into ranked hits. `timeline` must hold their superseders.
    Relevance is BM25 over `best` (default: the best of these candidates)."""
    raw: dict[str, float] = {}
    for cand, score in candidates:
        if timeline.by_id.get(cand.id) is cand or cand.id not in raw:
            raw[cand.id] = max(score, raw.get(cand.id, 0.0))
    if best is None:
        best = max(raw.values(), default=0.0)
    if best <= 0:
        return []
    rel = {i: s / best for i, s in raw.items()}
    _inherit_relevance(rel, timeline, at)
    hits = []
    for eid, relevance in rel.items():
        ev = timeline.by_id.get(eid)
        if ev is None or (keep is not None and not keep(ev)):
            continue
        status = timeline.status(ev, at)
        if status != "live" and not include_all:
            continue
        hits.append(_hit(ev, relevance, status, timeline, at, weights, access or {}))
    hits.sort(key=lambda h: (-h.score, -(h.timestamp.timestamp() if h.timestamp else 0), h.id))
    shown = _after_superseders(hits)[:limit]
    for h in shown:  # only for what is shown: snippets were half the cost of a search
        h.snippet = snippet(h.content or h.title, query.all_terms)
        h.matched = own_match(h.event, query.all_terms) if h.event is not None else True
        if h.event is not None:
            h.entry = timeline.to_dict(h.event, at)
    return shown


def own_match(event: Event, terms: set[str]) -> bool:
    """Whether the entry's own fields hold a query word; a hit found only through the
    neighbour-context field does not (it is shown, but is not counted as recalled)."""
    text = " ".join(field_texts(event)[:4])
    return any(terms.intersection(ts) for _, _, ts in iter_words(text))


def _inherit_relevance(rel: dict[str, float], timeline: Timeline, at: datetime) -> None:
    """A superseder is at least as relevant as what it supersedes (along the chain)."""
    for eid in list(rel):
        node, seen = eid, {eid}
        while True:
            ev = timeline.by_id.get(node)
            nxt = timeline.superseder_at(ev, at) if ev is not None else None
            if nxt is None or nxt in seen:
                break
            seen.add(nxt)
            rel[nxt] = max(rel.get(nxt, 0.0), rel[eid])
            node = nxt


def _hit(ev: Event, relevance: float, status: str, timeline: Timeline, at: datetime, w: Weights,
         access: Mapping[str, Any]) -> Hit:
    acc = access.get(ev.id)
    rec = recency(ev.timestamp, getattr(acc, "last_accessed", None), at, w.recency_lambda)
    imp = importance_of(ev, w)
    conf = timeline.confidence(ev, at)
    score = combine(relevance, imp, rec, conf, w)
    if status != "live":
        score *= w.superseded_factor
    return Hit(
        id=ev.id, type=ev.type, timestamp=ev.timestamp, file=ev.file, line=ev.line,
        end_line=ev.end_line, score=score, relevance=relevance, importance=imp, recency=rec,
        confidence=conf, snippet="", tags=ev.tags,
        status=status, superseded_by=timeline.superseder_at(ev, at), title=ev.title,
        content=ev.content, kind=ev.kind, event=ev,
    )


def _after_superseders(hits: list[Hit]) -> list[Hit]:
    """Keep the order, but never show an entry above the one that replaced it."""
    ids = {h.id for h in hits}
    out: list[Hit] = []
    placed: set[str] = set()
    waiting: dict[str, list[Hit]] = {}

    def place(h: Hit) -> None:
        out.append(h)
        placed.add(h.id)
        for w in waiting.pop(h.id, []):
            place(w)

    for h in hits:
        sup = h.superseded_by
        if sup and sup in ids and sup not in placed:
            waiting.setdefault(sup, []).append(h)
        else:
            place(h)
    for rest in waiting.values():  # superseders that form a loop: keep them anyway
        for h in rest:
            if h.id not in placed:
                place(h)
    return out


# ------------------------------------------------------------------------------ snippets


def snippet(text: str, terms: set[str], width: int = 180) -> str:
    """A window of `text` around the densest run of matches, matched words in **bold**."""
    flat = " ".join(text.split())
    spans = [(s, e) for s, e, ts in iter_words(flat) if terms.intersection(ts)]
    if not spans:
        return flat if len(flat) <= width else flat[: width - 1].rstrip() + "\u2026"
    start = _best_window(spans, width, len(flat))
    end = min(len(flat), start + width)
    if start > 0:
        start = flat.find(" ", start) + 1 or start
    if end < len(flat):
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    out, pos = [], start
    for s, e in spans:
        if s < start or e > end:
            continue
        out += [flat[pos:s], MARK_OPEN, flat[s:e], MARK_CLOSE]
        pos = e
    out.append(flat[pos:end])
    return ("\u2026" if start > 0 else "") + "".join(out) + ("\u2026" if end < len(flat) else "")


def _best_window(spans: list[tuple[int, int]], width: int, length: int) -> int:
    """Start of the `width` window that holds the most matches (a little context before)."""
    lead = width // 4
    best_start, best_count, j = 0, 0, 0
    for i, (s, _) in enumerate(spans):
        while j < len(spans) and spans[j][0] < s - lead + width:
            j += 1
        if j - i > best_count:
            best_start, best_count = max(0, s - lead), j - i
    return min(best_start, max(0, length - width))


# ------------------------------------------------------------------------------ in memory


def bm25_scores(events: list[Event], query: Query, w: Weights, plan: Plan = EXHAUSTIVE) -> dict[int, float]:
    """BM25 of `events` for `query` (index in list -> score) as the FTS5 backend computes it,
    for the entries `plan` admits."""
    return _bm25(_analysed(events), query, w, plan)


def _analysed(events: list[Event]) -> list[list[list[str]]]:
    return [[analyze(text) for text in field_texts(ev, ctx)]
            for ev, ctx in zip(events, _contexts_by_position(events), strict=True)]


def _doc_freqs(columns: list[list[list[str]]], terms: Iterable[str]) -> dict[str, int]:
    wanted = set(terms)
    counts = dict.fromkeys(wanted, 0)
    for cols in columns:
        for t in wanted.intersection([t for c in cols for t in c]):
            counts[t] += 1
    return counts


def _bm25(columns: list[list[list[str]]], query: Query, w: Weights, plan: Plan) -> dict[int, float]:
    """Same phrase list as the FTS5 MATCH expression (required phrases once on the entry's own
    fields and once anywhere, then terms and compounds), FTS5's bm25(): per phrase the
    column-weighted frequency, document length over all columns, IDF log((N - n + 0.5) /
    (n + 0.5)) floored at 1e-6 (N and n over all entries). Only the entries `plan` admits are
    scored, as the sqlite backend's planned query does."""
    scored = ([(p, True) for p in query.phrases] + [(p, False) for p in query.phrases]
              + [((t,), False) for t in query.terms] + [(c, False) for c in query.compounds])
    if not scored:
        return {}
    own = [i for i, name in enumerate(FIELDS) if name != "context"]
    every = range(len(FIELDS))
    freqs: list[list[float]] = []
    hits = [0] * len(scored)
    lengths = []
    for cols in columns:
        row = []
        for k, (phrase, own_only) in enumerate(scored):
            counts = [(i, _count_phrase(cols[i], phrase)) for i in (own if own_only else every)]
            if any(c for _, c in counts):
                hits[k] += 1
            row.append(sum(w.field_weights[i] * c for i, c in counts))
        freqs.append(row)
        lengths.append(sum(len(c) for c in cols))
    n = len(columns)
    avg = (sum(lengths) / n) if n else 1.0
    idf = [max(math.log((n - h + 0.5) / (h + 0.5)), 1e-6) for h in hits]
    n_required = len(query.phrases)
    out: dict[int, float] = {}
    for d, row in enumerate(freqs):
        cols = columns[d]
        matched = all(_count_phrase_any(cols, own, p) for p in query.phrases)
        if not matched or not any(_count_phrase_any(cols, every, ph) for ph, _ in scored[n_required:]):
            continue
        if not plan.admits(partial(_has_word, cols, every),
                           any(_count_phrase_any(cols, every, c) for c in query.compounds)):
            continue
        norm = w.k1 * (1 - w.b + w.b * lengths[d] / (avg or 1.0))
        out[d] = sum(idf[k] * f * (w.k1 + 1) / (f + norm) for k, f in enumerate(row) if f > 0)
    return out


def _count_phrase(tokens: list[str], phrase: tuple[str, ...]) -> int:
    k = len(phrase)
    if k == 1:
        return tokens.count(phrase[0])
    return sum(1 for i in range(len(tokens) - k + 1) if tuple(tokens[i : i + k]) == phrase)


def _count_phrase_any(cols: list[list[str]], among: Iterable[int], phrase: tuple[str, ...]) -> bool:
    return any(_count_phrase(cols[i], phrase) for i in among)


def _has_word(cols: list[list[str]], among: Iterable[int], word: str) -> bool:
    return _count_phrase_any(cols, among, (word,))


def _contexts_by_position(events: list[Event]) -> list[str]:
    by_file: dict[str, list[int]] = {}
    for i, ev in enumerate(events):
        by_file.setdefault(ev.file, []).append(i)
    out = [""] * len(events)
    for idxs in by_file.values():
        idxs.sort(key=lambda i: events[i].line)
        for i, ctx in zip(idxs, contexts([events[i] for i in idxs]), strict=True):
            out[i] = ctx
    return out


def rank_events(
    events: Iterable[Event],
    query: str | Query,
    timeline: Timeline,
    at: datetime | None = None,
    config: Config | None = None,
    *,
    limit: int = 10,
    types: Iterable[str] = (),
    tags: Iterable[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    include_all: bool = False,
    access: Mapping[str, Any] | None = None,
) -> list[Hit]:
    """Rank in-memory events for `query` as search does, as of `at` (now by default).

    `events` are the entries to search (e.g. those written by T); `timeline` answers status
    and confidence at `at`. Filters and `type:`/`tag:` in the query work as in search, and so
    does the common-terms cutoff (over these entries' word frequencies).
    """
    q = parse_query(query) if isinstance(query, str) else query
    when = at or datetime.now(UTC)
    w = Weights.from_config(config or timeline.config)
    pool = list(events)
    keep = make_filter([*types, *q.types], [*tags, *q.tags], since, until)
    columns = _analysed(pool)
    plan = plan_query(q, _doc_freqs(columns, q.terms), len(pool), w.score_limit)
    while True:  # as Index.search: when the selected entries give too few hits, score them all
        scores = _bm25(columns, q, w, plan)
        cands = [(pool[i], s) for i, s in scores.items()]
        hits = rank_candidates(cands, q, timeline, when, w, access=access, include_all=include_all,
                               keep=keep, limit=limit)
        if len(hits) >= limit or plan.exhaustive:
            return hits
        plan = EXHAUSTIVE
