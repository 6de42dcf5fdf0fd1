"""QUERY for `asof T QUERY`: the entries live at T that match, ranked as search ranks them at T.

Ranking is search's own (memvault/rank.py): BM25 relevance with importance, recency and
confidence, every part computed at T, so nothing newer than T takes part and confidence is
decayed to T.

- Event time ranks through the search index (`Index.search(..., at=T)`): the index holds
  today's entries, and search judges each candidate's status at T.
- Recorded time ranks the entries of the commit in memory (`rank.rank_events`), since the
  index knows only today's files: BM25 statistics are those of the vault as it was.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .events import Timeline
from .model import Event

if TYPE_CHECKING:
    from .rank import Hit
    from .vault import Vault


def _parts(hit: Hit) -> dict[str, Any]:
    return {
        "score": round(hit.score, 6),
        "score_parts": {
            "relevance": round(hit.relevance, 6), "importance": round(hit.importance, 6),
            "recency": round(hit.recency, 6), "confidence": round(hit.confidence, 6),
        },
        "snippet": hit.snippet,
    }


def written_by(events: list[Event], at: datetime) -> list[Event]:
    """The entries that exist at `at`: undated ones and those written at or before it."""
    return [e for e in events if e.timestamp is None or e.timestamp <= at]


def rank_in_memory(query: str, timeline: Timeline, at: datetime, limit: int) -> list[tuple[Event, dict[str, Any]]]:
    from .rank import rank_events

    pool = written_by(timeline.events, at)
    hits = rank_events(pool, query, timeline, at, timeline.config, limit=limit)
    return [(timeline.by_id[h.id], _parts(h)) for h in hits if h.id in timeline.by_id]


def rank_with_index(vault: Vault, query: str, at: datetime, limit: int) -> list[tuple[Event, dict[str, Any]]]:
    """Event time: search's index, with status and scores at `at`."""
    from .index import open_index

    timeline = vault.timeline
    with open_index(vault) as index:
        index.refresh()
        hits = index.search(query, limit=limit, at=at, record_access=False)
    return [(timeline.by_id[h.id], _parts(h)) for h in hits if h.id in timeline.by_id]
