"""A MEMORY.md bullet whose every cited source is superseded: it states what the logs corrected
(curate has not rewritten it yet). One rule for search's ranking, `context` (left out, with the
reason) and the MemoryBlock export (not live).
"""

from __future__ import annotations

from datetime import datetime

from memvault.entries.model import Event
from memvault.entries.timeline import Timeline


def sources_superseded(ev: Event, timeline: Timeline, at: datetime) -> str | None:
    """For a curated bullet every source of which is superseded by `at`: what superseded the last
    one it names (the bullet states what the logs corrected, e.g. after a backdated correction curate
    has not applied yet); else None. It ranks as a superseded entry does: scored down, never above
    that entry. A source the timeline cannot resolve counts as live (the index ranks over the
    candidates' timeline, which holds a source only when the query found it too)."""
    if ev.kind != "curated" or not ev.sources:
        return None
    ids = timeline.source_ids(ev)
    if len(ids) < len(ev.sources):
        return None
    by = None
    for sid in ids:
        by = timeline.superseder_at(timeline.by_id[sid], at)
        if by is None:
            return None
    return by
