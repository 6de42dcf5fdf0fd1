"""QUERY for event-time `asof T QUERY`: search's index, with status and scores at T.

Ranking is search's own (memvault/search/rank.py): BM25 relevance with importance, recency and
confidence, every part computed at T, so entries newer than T drop out and confidence is
decayed to T. The index holds today's entries; search judges each candidate's status at T.
Recorded time cannot use the index (it knows only today's files): see asof_search.py; it ranks
by words only (docs/decisions.md, "Semantic search (issue 18): asof, ...").
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from memvault.entries.model import Event
from memvault.history.recorded_search import parts

if TYPE_CHECKING:
    from memvault.parsed import ParsedVault


def rank_with_index(vault: ParsedVault, query: str, at: datetime, limit: int,
                    mode: str | None = None) -> list[tuple[Event, dict[str, Any]]]:
    """Event time: search's index, with status and scores at `at` (no access is recorded).
    `mode`: search's (lexical, semantic, hybrid; None: `[semantic] mode`): the vectors are
    today's entries', as the index's rows are."""
    from memvault.search.index import open_index

    timeline = vault.timeline
    # The index judges a curated bullet by its day when the entries it cites are not among the
    # candidates; the vault's timeline knows them all (Timeline.start). Ask for as many more
    # hits as there are bullets dated by `at` that start after it, and keep those live at `at`.
    moved = timeline.not_started(at)
    with open_index(vault) as index:
        index.refresh()
        hits = index.search(query, limit=limit + moved, at=at, record_access=False, mode=mode)
    found = [(timeline.by_id[h.id], h) for h in hits if h.id in timeline.by_id]
    if moved:
        found = [(ev, h) for ev, h in found if ev.kind != "curated" or timeline.status(ev, at) == "live"]
    return [(ev, parts(h)) for ev, h in found[:limit]]
