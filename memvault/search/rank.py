"""How search ranks: candidates with BM25 scores become hits, ordered by the combined score.

The score is weights.py's; superseded and expired entries are left out unless asked for;
then they are scored down and never placed above what replaced them. A live entry that
supersedes a matching entry is as relevant as the entry it replaces (a search for the old
belief finds the correction).

Everything here is pure: the index feeds `rank_candidates` candidates with BM25 scores, and
`rank_events` ranks a list of in-memory events the same way (with the in-memory BM25,
bm25.py, and the same query plan, plan.py), so time travel can rank "as search would have at
T" without an index.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.stale import sources_superseded
from memvault.entries.timeline import Timeline
from memvault.search.bm25 import analysed, bm25, doc_freqs
from memvault.search.fields import field_texts
from memvault.search.hits import Hit
from memvault.search.plan import EXHAUSTIVE, plan_query
from memvault.search.snippets import snippet
from memvault.search.textproc import Query, iter_words, parse_query
from memvault.search.weights import Weights, combine, importance_of, recency

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


def both(keep: Filter, also: Filter | None) -> Filter:
    """`keep`, and `also` when there is one."""
    return keep if also is None else (lambda ev: keep(ev) and also(ev))


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
    by_meaning: Collection[str] = (),
) -> list[Hit]:
    """Score (event, bm25) candidates into ranked hits. `timeline` must hold their superseders.
    Relevance is BM25 over `best` (default: the best of these candidates). `by_meaning`: ids a
    semantic search found by their own text (they match the query as a word would)."""
    raw: dict[str, float] = {}
    for cand, score in candidates:
        if timeline.by_id.get(cand.id) is cand or cand.id not in raw:
            raw[cand.id] = max(score, raw.get(cand.id, 0.0))
    if best is None:
        best = max(raw.values(), default=0.0)
    if best <= 0:
        return []
    rel = {i: s / best for i, s in raw.items()}
    heirs = _inherit_relevance(rel, timeline, at)
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
    shown = _after_superseders(_matches_first(hits, query, timeline, heirs, limit, by_meaning))[:limit]
    for h in shown:  # only for what is shown: snippets were half the cost of a search
        h.snippet = snippet(h.content or h.title, query.all_terms)
        if h.event is not None:
            h.entry = timeline.to_dict(h.event, at)
    return shown


def own_match(event: Event, terms: set[str]) -> bool:
    """Whether the entry's own fields hold a query word; a hit found only through the
    neighbour-context field does not (it is shown, but is not counted as recalled)."""
    text = " ".join(field_texts(event)[:4])
    return any(terms.intersection(ts) for _, _, ts in iter_words(text))


def _matches_first(hits: list[Hit], query: Query, timeline: Timeline, heirs: Mapping[str, str],
                   limit: int, by_meaning: Collection[str] = ()) -> list[Hit]:
    """The best `limit` hits that match the query, then those found only through their
    neighbours (context may fill the tail, never push a match down). A superseder that took
    its relevance from a matching entry matches too. Sets `matched` on the hits it looks at:
    it stops once `limit` matches are found (an entry below them cannot be shown)."""
    terms = query.all_terms
    if not terms and not by_meaning:  # no query word (a ranking without a query, search/index/standing.py): nothing matches
        for h in hits:
            h.matched = False
        return hits
    own: dict[str, bool] = {}

    def matches(eid: str) -> bool:
        seen = set()
        while eid not in seen:
            seen.add(eid)
            if eid not in own:
                ev = timeline.by_id.get(eid)
                own[eid] = ev is not None and (eid in by_meaning or own_match(ev, terms))
            if own[eid]:
                return True
            if eid not in heirs:
                return False
            eid = heirs[eid]
        return False

    matched: list[Hit] = []
    nearby: list[Hit] = []
    for h in hits:
        if len(matched) >= limit:
            break
        h.matched = matches(h.id)
        (matched if h.matched else nearby).append(h)
    return matched + nearby


def _inherit_relevance(rel: dict[str, float], timeline: Timeline, at: datetime) -> dict[str, str]:
    """A superseder is at least as relevant as what it supersedes (along the chain). Returns,
    for each entry whose relevance was raised, the entry it took it from."""
    heirs: dict[str, str] = {}
    for eid in list(rel):
        node, seen = eid, {eid}
        while True:
            ev = timeline.by_id.get(node)
            nxt = timeline.superseder_at(ev, at) if ev is not None else None
            if nxt is None or nxt in seen:
                break
            seen.add(nxt)
            if rel[eid] > rel.get(nxt, 0.0):
                rel[nxt] = rel[eid]
                heirs[nxt] = eid
            node = nxt
    return heirs


def _hit(ev: Event, relevance: float, status: str, timeline: Timeline, at: datetime, w: Weights,
         access: Mapping[str, Any]) -> Hit:
    acc = access.get(ev.id)
    rec = recency(ev.timestamp, getattr(acc, "last_accessed", None), at, w.recency_lambda)
    imp = importance_of(ev, w)
    conf = timeline.confidence(ev, at)
    score = combine(relevance, imp, rec, conf, w)
    stale = sources_superseded(ev, timeline, at) if status == "live" else None
    if status != "live" or stale is not None:
        score *= w.superseded_factor
    return Hit(
        id=ev.id, type=ev.type, timestamp=ev.timestamp, file=ev.file, line=ev.line,
        end_line=ev.end_line, score=score, relevance=relevance, importance=imp, recency=rec,
        confidence=conf, snippet="", tags=ev.tags,
        status=status, superseded_by=timeline.superseder_at(ev, at), title=ev.title,
        content=ev.content, kind=ev.kind, event=ev, sources_superseded_by=stale,
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
        sup = h.superseded_by or h.sources_superseded_by
        if sup and sup in ids and sup not in placed:
            waiting.setdefault(sup, []).append(h)
        else:
            place(h)
    for rest in waiting.values():  # superseders that form a loop: keep them anyway
        for h in rest:
            if h.id not in placed:
                place(h)
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
    columns = analysed(pool)
    plan = plan_query(q, doc_freqs(columns, q.terms), len(pool), w.score_limit)
    while True:  # as Index.search: when the selected entries give too few hits, score them all
        scores = bm25(columns, q, w, plan)
        cands = [(pool[i], s) for i, s in scores.items()]
        hits = rank_candidates(cands, q, timeline, when, w, access=access, include_all=include_all,
                               keep=keep, limit=limit)
        if len(hits) >= limit or plan.exhaustive:
            return hits
        plan = EXHAUSTIVE
