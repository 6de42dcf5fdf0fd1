"""One fact, shown once: a log entry folded under the curated bullet that cites it.

After curation a fact lives twice, as the bullet in MEMORY.md and as the log entry its
`(source: ...)` names. A listing shows the bullet with the ids of its folded sources instead
of both. Pure, over the entries' JSON shape (`Timeline.to_dict`: `id`, `kind`, `status`,
`cited_by`); the caller decides when to fold (`list` and `search` text, not `--all` or `--json`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def fold_cited(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The items to show, in their order; each bullet's dict gains `folded`, the ids under it.

    An item folds when it is a live log entry that a live curated bullet among `items` cites.
    One whose bullet is not among the items (filtered out, not in the top hits) or not live
    (superseded, expired, future) stays: folding never hides the only place a fact shows.
    """
    hosts = {d["id"] for d in items if _live(d) and d["kind"] == "curated"}
    kept: list[Mapping[str, Any]] = []
    folded: dict[str, list[str]] = {}
    for d in items:
        host = None
        if _live(d) and d["kind"] != "curated":
            host = next((b for b in d.get("cited_by", ()) if b in hosts), None)
        if host is None:
            kept.append(d)
        else:
            folded.setdefault(host, []).append(d["id"])
    return [{**d, "folded": folded.get(d["id"], [])} for d in kept]


def _live(d: Mapping[str, Any]) -> bool:
    return d.get("status") == "live"
