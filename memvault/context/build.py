"""The shell: read the candidates from the search index, choose and fit (choose.py), record the recall.

Candidates: MEMORY.md's live bullets, plus the `HITS` best entries for the query (search's own
ranking and status rules), or without a query the most important and recent live entries
(search/index/standing.py). Both are ranked by search's score (`[search]` weights; the preset
`seed-004` is exactly the recall protocol's recall_score), bullets as fully relevant.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memvault.context.choose import fit, item, settle
from memvault.context.tokens import counter
from memvault.entries.model import Event
from memvault.entries.presentations import re_encounter
from memvault.entries.scopes import in_scope, wanted_scope
from memvault.errors import InputError
from memvault.parsed import ParsedVault
from memvault.search import access
from memvault.search.hits import Hit
from memvault.search.index import open_index, search_mode
from memvault.search.index.standing import rank_bullets, rank_rows, standing_rows
from memvault.search.rank import Filter, both
from memvault.search.textproc import nothing_to_search

DEFAULT_BUDGET = 1000  # tokens: a short block, about what 4,000 characters of English take
HITS = 30  # entries beside MEMORY.md that may make the block


def scope_filter(scope: str | None) -> Filter | None:
    """`--scope S`: entries scoped to S, `global`, or to nothing (an entry without `Scope:` is global)."""
    if scope is None:
        return None
    want = wanted_scope(scope)

    def keep(ev: Event) -> bool:
        return in_scope(ev.scope, want)

    return keep


def context(vault: ParsedVault, query: str | None = None, *, scope: str | None = None,
            budget: int = DEFAULT_BUDGET, record: bool = True, backend: str | None = None, refresh: bool = True,
            tokenizer: str = "auto", at: datetime | None = None, mode: str | None = None) -> dict[str, Any]:
    """`memvault context`: the block (text and items) and what was left out, as a dict.
    `mode`: how the query is matched (search's; None: `[semantic] mode`); the dict's `mode`
    says which was used (None without a query)."""
    query = (query or "").strip() or None
    if query is not None and (empty := nothing_to_search(query)) is not None:
        raise InputError(empty)
    if budget < 0:
        raise InputError(f"--budget must be 0 or more tokens, got {budget}")
    keep = both(lambda ev: not re_encounter(ev), scope_filter(scope))  # a presentation is not a memory
    when = at or datetime.now(UTC)
    used = search_mode(vault, mode) if query is not None else None
    bullets, hits = _candidates(vault, query, keep, when, backend, refresh, used)
    count = counter(tokenizer)
    stale = [h for h in bullets + hits if h.sources_superseded_by]  # a bullet stating what the logs corrected
    seen = {h.id for h in stale}
    fresh = []
    for h in bullets + hits:
        if h.id not in seen:
            seen.add(h.id)
            fresh.append(item(h))
    kept, aside = settle(fresh)
    block = fit(kept, budget, count)
    if record and block.items:
        access.record(vault.root, [i.id for i in block.items])
    return {
        "query": query, "mode": used, "scope": scope, "budget": budget, "tokens": block.tokens, "tokenizer": count.name,
        "text": block.text, "items": [i.to_dict(count) for i in block.items],
        "left_out": aside + block.left_out
        + [{"id": h.id, "reason": f"its sources are superseded (by {h.sources_superseded_by})"}
           for h in {h.id: h for h in stale}.values()],
        "recorded": record and bool(block.items),
    }


def _candidates(vault: ParsedVault, query: str | None, keep: Filter | None, when: datetime, backend: str | None,
                refresh: bool, mode: str | None) -> tuple[list[Hit], list[Hit]]:
    with open_index(vault, backend) as index:
        if refresh:
            index.refresh()
        bullets = rank_bullets(index, when, keep)
        if query:
            hits = index.search(query, limit=HITS, at=when, record_access=False, retention=False, where=keep,
                                mode=mode)
            hits = [h for h in hits if h.matched]  # one found only through its neighbours is not about the task
        else:
            hits = rank_rows(index, standing_rows(index), when, keep, limit=HITS)
    return bullets, hits
