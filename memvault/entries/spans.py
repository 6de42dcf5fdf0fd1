"""When each entry is live, as intervals of event time, for fast `asof` at any T.

`Timeline.status(event, at)` is the rule. It compares `at` only with the entry's start
(`Timeline.start`: its timestamp, or a curated bullet's newest source of its day), its expiry and its superseders' timestamps, always as `x <= at`, so the status is constant
on [p_i, p_i+1) between consecutive such points. Probing the rule once per piece gives
each entry's live interval exactly, without restating the rule; an entry goes
future -> live -> superseded/expired and never back, so there is at most one interval.
Answering T is then a bisect and a scan of float comparisons. An entry `memvault maintain`
forgot, then presented again, is live twice (`live_intervals`): once before the forgetting, once
from the presentation that brought it back.
"""

from __future__ import annotations

import bisect
import math
from datetime import UTC, datetime

from memvault.entries.model import Event
from memvault.entries.timeline import Timeline

BEFORE_ALL = datetime.min.replace(tzinfo=UTC)


def _change_points(timeline: Timeline, ev: Event) -> list[datetime]:
    points = [t for t in (timeline.start(ev), ev.expires, ev.forgotten) if t is not None]
    by_id = timeline.by_id
    points += [ts for s in timeline.superseded_by.get(ev.id, ()) if (ts := by_id[s].timestamp) is not None]
    if timeline.forgotten is not None:
        points += timeline.forgotten.change_points(ev)
    return sorted(set(points))


def live_interval(timeline: Timeline, ev: Event) -> tuple[float, float] | None:
    """[start, end) in POSIX seconds over which `timeline.status(ev, t)` is "live" (the first
    such interval: the only one, but for an entry forgotten and brought back)."""
    found = live_intervals(timeline, ev)
    return found[0] if found else None


def live_intervals(timeline: Timeline, ev: Event) -> list[tuple[float, float]]:
    """Every [start, end) in POSIX seconds over which `timeline.status(ev, t)` is "live"."""
    points = _change_points(timeline, ev)
    probes = [BEFORE_ALL, *points]
    out: list[tuple[float, float]] = []
    start: float | None = None
    for i, probe in enumerate(probes):
        live = timeline.status(ev, probe) == "live"
        edge = -math.inf if i == 0 else probe.timestamp()
        if live and start is None:
            start = edge
        elif not live and start is not None:
            out.append((start, edge))
            start = None
    return out + ([(start, math.inf)] if start is not None else [])


class SpanIndex:
    """Live intervals of every first-occurrence entry of a timeline, sorted by start."""

    def __init__(self, timeline: Timeline):
        self.timeline = timeline
        rows: list[tuple[float, int, float, Event]] = []
        by_id = timeline.by_id
        for n, ev in enumerate(timeline.events):
            if by_id.get(ev.id) is not ev:
                continue
            rows.extend((start, n, end, ev) for start, end in live_intervals(timeline, ev))
        # Start order is timeline order unless a curated bullet starts after its day began
        # (Timeline.start): then answers are put back in timeline order.
        self.reorder = any(r[0] < prev[0] for prev, r in zip(rows, rows[1:], strict=False))
        rows.sort(key=lambda r: (r[0], r[1]))
        self.starts = [r[0] for r in rows]
        self.ends = [r[2] for r in rows]
        self.events = [r[3] for r in rows]
        self.order = [r[1] for r in rows]

    def live(self, at: datetime) -> list[Event]:
        """Same list as `timeline.live(at)`, in the same (timeline) order."""
        t = at.timestamp()
        k = bisect.bisect_right(self.starts, t)
        if self.reorder:
            found = [(n, ev) for n, ev, end in zip(self.order[:k], self.events[:k], self.ends[:k], strict=True)
                     if end > t]
            return [ev for _, ev in sorted(found, key=lambda p: p[0])]
        return [ev for ev, end in zip(self.events[:k], self.ends[:k], strict=True) if end > t]
