"""Ids that keep their meaning through a merge, and ids new entries get in a shared vault.

A default id counts the entries at a minute in file order (`…T10:15`, `…T10:15-2`), so a merge that
puts another machine's entry at that minute in front of one would move it. After a merge, every
entry whose id there differs from the id it had on its side (the side already shared first) is
pinned: it gets an `Id:` line with its old id when no other entry holds that id now. When another
entry does (two machines both wrote a `…T10:15`), its new id stays and a `Conflict:` line says
which id it had, so `check` reports it and a person can look at what referred to it.

New entries a memvault command writes in a vault that syncs get an id that cannot collide:
`<minute>-<machine>` (`2026-12-02T10:15-laptop`), see docs/sync.md.
"""

from __future__ import annotations

from collections.abc import Callable

from memvault.entries.blocks import Block, join, split
from memvault.entries.daily import scan
from memvault.entries.model import Event
from memvault.sync.merge import Merged, with_conflict

Parse = Callable[[str], list[Event]]


def block_lines(text: str) -> list[int]:
    """The 1-based line of each block's heading, in `split`'s order."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    heads, _, _ = scan(lines, start)
    return [i + 1 for i, level, _ in heads if level <= 2]


def _entries_by_block(text: str, parse: Parse) -> dict[int, Event]:
    """{block position: the typed entry that block is} of one side's text."""
    at = {ev.line: ev for ev in parse(text) if not ev.is_note}
    return {k: at[line] for k, line in enumerate(block_lines(text)) if line in at}


def with_id_line(block: Block, entry_id: str) -> Block:
    return Block(block.heading, block.text.rstrip("\n") + f"\nId: {entry_id}\n")


def pin(merged: Merged, ours: str, theirs: str, parse: Parse) -> tuple[str, list[tuple[str, str]]]:
    """The merged text with moved ids pinned; [(old id, what happened)] for the ids it could not keep."""
    sides = {"ours": (split(ours).blocks, _entries_by_block(ours, parse)),
             "theirs": (split(theirs).blocks, _entries_by_block(theirs, parse))}
    now = _entries_by_block(merged.text, parse)
    held = {ev.id for ev in parse(merged.text)}
    conflicted = {k for k, _ in merged.conflicts}
    ours_bodies: dict[str, int] = {}
    for j, blk in enumerate(sides["ours"][0]):
        ours_bodies.setdefault(blk.body, j)
    blocks = list(merged.blocks)
    lost: list[tuple[str, str]] = []
    for k, blk in enumerate(blocks):
        ev = now.get(k)
        if ev is None or ev.explicit_id or k in conflicted:
            continue
        at = ours_bodies.get(blk.body)
        before = sides["ours"][1].get(at) if at is not None else None
        if before is None:
            origin = merged.origins[k]
            before = sides.get(origin.side, ((), {}))[1].get(origin.index)
        if before is None or before.id == ev.id:
            continue
        if before.id not in held:
            blocks[k] = with_id_line(blk, before.id)
            held.add(before.id)
        else:
            why = (f"id {before.id} named this entry on one machine; after a merge it names another entry, "
                   f"and this one is {ev.id}: check what referred to {before.id}, then delete this line")
            blocks[k] = with_conflict(blk, why)
            lost.append((before.id, ev.id))
    if blocks == merged.blocks:
        return merged.text, lost
    return join(split(merged.text).head, blocks), lost
