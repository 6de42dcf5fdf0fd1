"""MEMORY.md as a plan would leave it: the chosen proposals spliced into the text that was read."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from datetime import datetime

from memvault.curate.document import (
    DEFAULT_TITLE,
    MemoryDoc,
    Splice,
    apply_splices,
    blank_after,
    blank_before,
    marker_line,
    section_insert,
    tail_index,
)
from memvault.curate.plan import Plan, Proposal, chosen_lines
from memvault.layout import MEMORY_FILE


def render(plan: Plan, choice: Mapping[str, tuple[str, ...]] | None = None,
           archives: list[Proposal] | None = None, *, complete: bool = False) -> str:
    """MEMORY.md with the chosen proposals (key -> lines; all when None) and archives applied.

    `complete` also records the curation point (the review went through every proposal).
    """
    doc = plan.doc
    chosen = chosen_lines(plan, choice)
    splices: list[Splice] = []
    adds: dict[str, list[tuple[str, ...]]] = {}
    for p in plan.proposals:
        if p.key not in chosen:
            continue
        if p.kind == "add":
            adds.setdefault(p.section, []).append(chosen[p.key])
        else:
            splices.append(Splice(p.start, p.end, chosen[p.key]))
    for a in plan.archives if archives is None else archives:
        splices.append(Splice(a.start, a.end, ()))
    new_sections: list[tuple[str, list[str]]] = []
    for section, items in adds.items():
        lines = [ln for item in items for ln in item]
        where = section_insert(doc, section)
        if where is None:
            new_sections.append((section, lines))
        else:
            index, blank = where
            splices.append(Splice(index, index, tuple([""] * blank + lines)))
    tail = tail_index(doc)
    if new_sections:
        splices.append(Splice(tail, tail, tuple(_section_block(doc, tail, new_sections)), order=0))
    if records_point(plan, chosen, complete):
        splices.append(_marker_splice(plan))
    return apply_splices(doc, splices)


def _section_block(doc: MemoryDoc, tail: int, sections: list[tuple[str, list[str]]]) -> list[str]:
    empty = not any(ln.strip() for ln in doc.lines)
    block: list[str] = [DEFAULT_TITLE] if empty else []
    for name, lines in sections:
        if block or blank_before(doc, tail):
            block.append("")
        block += [f"## {name}", *lines]
    if blank_after(doc, tail):
        block.append("")
    return block


def records_point(plan: Plan, chosen: Mapping[str, tuple[str, ...]], complete: bool) -> bool:
    """Whether writing this choice records the curation point (the marker, and what was considered)."""
    return complete and bool(chosen or plan.proposals or plan.archives)


def marker_time(plan: Plan) -> datetime:
    """The curation point a completed review leaves in MEMORY.md: never moved backwards."""
    return max(plan.at, plan.doc.marker_at) if plan.doc.marker_at else plan.at


def _marker_splice(plan: Plan) -> Splice:
    doc = plan.doc
    when = marker_time(plan)
    if doc.marker_line is not None:
        return Splice(doc.marker_line, doc.marker_line + 1, (marker_line(when),))
    index = tail_index(doc)
    return Splice(index, index, ("", marker_line(when)), order=1)


def diff(plan: Plan, new_text: str) -> str:
    old = ("\ufeff" if plan.doc.bom else "") + "\n".join(plan.doc.raw_lines)
    return "".join(difflib.unified_diff(
        old.splitlines(keepends=True), new_text.splitlines(keepends=True),
        fromfile=f"a/{MEMORY_FILE}", tofile=f"b/{MEMORY_FILE}",
    ))

