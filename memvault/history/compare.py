"""Comparing two recorded states: entries edited, deleted and added (`changes`), and the live
entries that appeared, changed or went away, grouped per section and daily log (`diff`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memvault.entries.model import Event
from memvault.entries.render import iso
from memvault.history.snapshot import Snapshot
from memvault.history.timepoint import TimePoint


def diff_states(p1: TimePoint, s1: Snapshot | None, p2: TimePoint, s2: Snapshot | None) -> dict[str, Any]:
    """The live entries of `s1` at `p1` against those of `s2` at `p2`, grouped per MEMORY.md
    section and per daily log."""
    live1 = {e.id: e for e in s1.timeline.live(p1.at)} if s1 else {}
    live2 = {e.id: e for e in s2.timeline.live(p2.at)} if s2 else {}
    groups: dict[tuple[str, str | None], dict[str, Any]] = {}

    def group(ev: Event) -> dict[str, Any]:
        section = (ev.category or "") if ev.kind == "curated" else None
        key = (ev.file, section)
        if key not in groups:
            groups[key] = {"file": ev.file, "section": section, "appeared": [], "changed": [], "gone": []}
        return groups[key]

    for eid, ev in live2.items():
        if eid not in live1:
            present_before = s1 is not None and eid in s1.timeline.by_id
            item = s2.timeline.to_dict(ev, p2.at) | {"reason": "became live" if present_before else "added"}  # type: ignore[union-attr]
            group(ev)["appeared"].append(item)
        else:
            a, b = s1.entry_text(live1[eid]), s2.entry_text(ev)  # type: ignore[union-attr]
            if a != b:
                group(ev)["changed"].append(s2.timeline.to_dict(ev, p2.at) | {"old": a, "new": b})  # type: ignore[union-attr]
    for eid, ev in live1.items():
        if eid in live2:
            continue
        item = s1.timeline.to_dict(ev, p1.at)  # type: ignore[union-attr]
        item.update(_gone_reason(eid, s2, p2.at))
        group(ev)["gone"].append(item)
    ordered = sorted(groups.values(), key=lambda g: (g["file"] != "MEMORY.md", g["file"], g["section"] or ""))
    counts = {k: sum(len(g[k]) for g in ordered) for k in ("appeared", "changed", "gone")}
    return {"from": _where(p1, s1), "to": _where(p2, s2), "groups": ordered, "counts": counts}


def compare(old: Snapshot | None, new: Snapshot | None) -> tuple[list[tuple[Event, Event]], list[Event], list[Event]]:
    """Entries (by id, first occurrence) edited, deleted and added from `old` to `new`."""
    a = old.timeline.by_id if old else {}
    b = new.timeline.by_id if new else {}
    edited = []
    for eid, ev in a.items():
        other = b.get(eid)
        if other is None or _same_bytes(old, new, ev, other):
            continue
        if old.entry_text(ev) != new.entry_text(other):  # type: ignore[union-attr]
            edited.append((ev, other))
    deleted = [ev for eid, ev in a.items() if eid not in b]
    added = [ev for eid, ev in b.items() if eid not in a]
    key = _order
    return sorted(edited, key=lambda p: key(p[1])), sorted(deleted, key=key), sorted(added, key=key)


def revived(old: Snapshot | None, new: Snapshot | None, t1: datetime, t2: datetime | None) -> list[dict[str, Any]]:
    """Entries superseded at `t1` in `old` and live at `t2` in `new` because what superseded them
    went away: deleted (`superseder: "deleted"`), or still there but no longer superseding them
    (`"edited"`: its `Supersedes:` changed). Only git sees this: today's files no longer hold
    the reference that once made the entry superseded."""
    if old is None or new is None:
        return []
    a, b = old.timeline, new.timeline
    out = []
    for eid in list(a.superseded_by):
        ev, now = a.by_id.get(eid), b.by_id.get(eid)
        if ev is None or now is None:
            continue
        was = a.superseder_at(ev, t1)
        if was is None or b.status(now, t2) != "live":
            continue
        item = b.to_dict(now, t2)
        item.update({"was_superseded_by": was, "superseder": "edited" if was in b.by_id else "deleted"})
        out.append((now, item))
    return [item for _, item in sorted(out, key=lambda pair: _order(pair[0]))]


def _same_bytes(old: Snapshot | None, new: Snapshot | None, a: Event, b: Event) -> bool:
    """Both in one file whose bytes did not change: the entry's text cannot have changed."""
    if old is None or new is None or a.file != b.file or a.line != b.line:
        return False
    va, vb = old.files.get(a.file), new.files.get(b.file)
    return va is not None and vb is not None and va.blob == vb.blob


def _order(ev: Event) -> tuple[str, str, int]:
    return (iso(ev.timestamp) or "", ev.file, ev.line)


def edited_item(old: Snapshot, new: Snapshot, a: Event, b: Event, at: datetime | None) -> dict[str, Any]:
    item = new.timeline.to_dict(b, at)
    item.update({"old": old.entry_text(a), "new": new.entry_text(b), "old_file": a.file, "old_line": a.line})
    return item


def _gone_reason(eid: str, snap: Snapshot | None, at: datetime) -> dict[str, Any]:
    if snap is None or eid not in snap.timeline.by_id:
        return {"reason": "deleted", "superseded_by": None}
    tl = snap.timeline
    ev = tl.by_id[eid]
    status = tl.status(ev, at)
    return {"reason": status, "superseded_by": tl.superseder_at(ev, at)}


def _where(point: TimePoint, snap: Snapshot | None) -> dict[str, Any]:
    out = point.describe()
    out["commit"] = snap.commit.sha if snap and snap.commit else None
    return out
