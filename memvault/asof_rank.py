"""QUERY matching for `asof T QUERY`: rank the entries live at T as search would, at T.

FALLBACK until the search ranker (memvault/rank.py, issue 3) is merged: words of the query
are OR-ed, an entry's score is the share of query words it contains, ties go to the newer
entry. Replaced by `rank.rank_events` once that module exists.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from .events import Timeline
from .model import Event

WORD = re.compile(r"[^\W_]+")


def rank_live(query: str, live: list[Event], timeline: Timeline, at: datetime, limit: int) -> list[tuple[Event, dict[str, Any]]]:
    words = {w.lower() for w in WORD.findall(query)}
    if not words:
        return []
    scored = []
    for ev in live:
        have = {w.lower() for w in WORD.findall(f"{ev.title} {ev.content} {' '.join(ev.tags)}")}
        share = len(words & have) / len(words)
        if share > 0:
            stamp = ev.timestamp.timestamp() if ev.timestamp else 0.0
            scored.append((share, stamp, ev))
    scored.sort(key=lambda s: (-s[0], -s[1], s[2].id))
    return [(ev, {"score": round(share, 6)}) for share, _, ev in scored[:limit]]
