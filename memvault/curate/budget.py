"""MEMORY.md's size budget: which bullets may leave it, and what an archive brings it down to."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memvault.config.curate import Settings
from memvault.curate.document import MemoryDoc, plain_text
from memvault.curate.plan import Plan, Proposal, StaleBullet, chosen_lines
from memvault.curate.render import render
from memvault.entries.timeline import Timeline
from memvault.search import access


def stale_bullets(tl: Timeline, doc: MemoryDoc, s: Settings, at: datetime, recalls: dict[str, access.Access],
                  curated_by: dict[str, str]) -> list[StaleBullet]:
    """Bullets that may leave MEMORY.md when it is over budget, most expendable first."""
    own: dict[str, set[str]] = {}
    for eid, bid in curated_by.items():
        own.setdefault(bid, set()).add(eid)
    out = []
    for b in doc.bullets:
        ev = b.event
        sources = own.get(b.id, set())
        # A bullet updated from a correction that names it is not superseded by that correction.
        superseders = [x for x in tl.superseded_by.get(b.id, ()) if x not in sources and _at_or_before(tl, x, at)]
        dead = [e for e in sources if tl.status(tl.by_id[e], at) == "superseded"]
        conf = tl.confidence(ev, at)
        seen = tl.confirmed_at(ev, at) if ev.timestamp or ev.updated else None
        acc = recalls.get(b.id)
        last = max([t for t in (seen, acc.last_accessed if acc else None) if t is not None], default=None)
        idle = (at - last).total_seconds() / 86400 if last else 0.0
        if superseders:
            out.append(StaleBullet(b, f"superseded by {superseders[0]}", (0, conf, -idle)))
        elif sources and len(dead) == len(sources):
            by = ", ".join(f"{d} by {tl.superseder_at(tl.by_id[d], at)}" for d in sorted(dead))
            out.append(StaleBullet(b, f"what it cites was superseded ({by})", (0, conf, -idle)))
        elif conf < s.archive_confidence:
            out.append(StaleBullet(b, f"low confidence {conf:.2f} (< {s.archive_confidence:g}), last confirmed "
                                      f"{seen.date().isoformat() if seen else 'never'}", (1, conf, -idle)))
        elif last is not None and idle >= s.stale_days:
            out.append(StaleBullet(b, f"stale: not confirmed or recalled for {int(idle)} days", (2, conf, -idle)))
    out.sort(key=lambda x: x.rank)
    return out


def _at_or_before(tl: Timeline, eid: str, at: datetime) -> bool:
    ts = tl.by_id[eid].timestamp
    return ts is None or ts <= at


def measure(text: str) -> dict[str, int]:
    return {"chars": len(text.removeprefix("\ufeff")), "lines": len(text.splitlines())}


def over_budget(size: dict[str, int], s: Settings) -> bool:
    return (s.budget_chars > 0 and size["chars"] > s.budget_chars) or (
        s.budget_lines > 0 and size["lines"] > s.budget_lines)


def archives_for(plan: Plan, choice: Mapping[str, tuple[str, ...]] | None = None,
                 exclude: frozenset[str] | set[str] = frozenset()) -> list[Proposal]:
    """Archive proposals that bring MEMORY.md within budget once `choice` is applied.

    `exclude` names bullets the person chose to keep; the next candidates are taken instead.
    """
    chosen = chosen_lines(plan, choice)
    size = measure(render(plan, chosen, [], complete=True))  # the marker counts too
    if not over_budget(size, plan.settings):
        return []
    touched = {p.bullet for p in plan.proposals if p.key in chosen and p.bullet} | set(exclude)
    out: list[Proposal] = []
    chars, lines = size["chars"], size["lines"]
    for st in plan.stale:
        if st.bullet.id in touched:
            continue
        if not over_budget({"chars": chars, "lines": lines}, plan.settings):
            break
        b = st.bullet
        old = tuple(plan.doc.lines[b.start : b.end])
        chars -= sum(len(ln) + 1 for ln in old)
        lines -= len(old)
        out.append(Proposal(f"a{len(out) + 1}", "archive", b.event.category or "", plain_text(old[0]), (), old=old,
                            start=b.start, end=b.end, bullet=b.id, reason=st.reason,
                            block_id=b.event.block_ids[0] if b.event.block_ids else ""))
    return out


def budget(plan: Plan, choice: Mapping[str, tuple[str, ...]] | None = None,
           archives: list[Proposal] | None = None) -> dict[str, Any]:
    s = plan.settings
    after = measure(render(plan, chosen_lines(plan, choice), plan.archives if archives is None else archives,
                           complete=True))
    return {
        "chars": s.budget_chars or None, "lines": s.budget_lines or None,
        "before": measure("\n".join(plan.doc.lines)), "after": after, "over": over_budget(after, s),
    }


def budget_warnings(plan: Plan, size: dict[str, Any], *, planned: bool = False) -> list[str]:
    if not size["over"]:
        return []
    s = plan.settings
    limit = f"{s.budget_chars:,} chars" if s.budget_chars else f"{s.budget_lines:,} lines"
    why = "; no more bullets are stale, low-confidence or superseded" if planned else ""
    return [f"MEMORY.md {'would be' if planned else 'is'} over its budget ({size['after']['chars']:,} chars, "
            f"{size['after']['lines']:,} lines; budget {limit}){why}: archive or shorten bullets by hand, "
            f"or raise [curate] {'budget_chars' if s.budget_chars else 'budget_lines'}"]
