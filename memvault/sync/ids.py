"""Ids that keep their meaning through a merge, and ids new entries get in a shared vault.

A default id counts the entries at a minute in file order (`…T10:15`, `…T10:15-2`), so a merge that
puts another machine's entry at that minute in front of one would move it. After a merge, every
entry whose id there differs from the id it had on its side (the side already shared first) is
pinned: it gets an `Id:` line with its old id. Ours' entries (the side already shared first) keep
theirs: an entry of the other side that now holds such an id by position gets another one written
in. When two machines both had an id (both wrote a `…T10:15` by hand), the other side's entry gets
an id no entry holds and a `Conflict:` line says which id it had, so `check` reports it and a
person can look at what referred to it.

New entries a memvault command writes in a vault that syncs get an id that cannot collide:
`<minute>-<machine>` (`2026-12-02T10:15-laptop`), see docs/sync.md.
"""

from __future__ import annotations

import re
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


def _entries_by_block(text: str, parse: Parse, events: list[Event] | None = None) -> dict[int, Event]:
    """{block position: the typed entry that block is} of one side's text."""
    at = {ev.line: ev for ev in (parse(text) if events is None else events) if not ev.is_note}
    return {k: at[line] for k, line in enumerate(block_lines(text)) if line in at}


def with_id_line(block: Block, entry_id: str) -> Block:
    return Block(block.heading, block.text.rstrip("\n") + f"\nId: {entry_id}\n")


def _before(merged: Merged, ours: str, theirs: str, parse: Parse, now: dict[int, Event]) -> tuple[dict[int, Event], set[int]]:
    """{merged block: the entry it was on its side} for entries a merge may have renamed, and
    which of them come from ours (found there by text first: ours is the side shared first)."""
    sides = {"ours": _entries_by_block(ours, parse), "theirs": _entries_by_block(theirs, parse)}
    ours_bodies: dict[str, int] = {}
    for j, blk in enumerate(split(ours).blocks):
        ours_bodies.setdefault(blk.body, j)
    conflicted = {k for k, _ in merged.conflicts}
    before: dict[int, Event] = {}
    from_ours: set[int] = set()
    for k, ev in now.items():
        if ev.explicit_id or k in conflicted:
            continue
        at = ours_bodies.get(merged.blocks[k].body)
        found = sides["ours"].get(at) if at is not None else None
        if found is not None:
            from_ours.add(k)
        else:
            origin = merged.origins[k]
            found = sides.get(origin.side, {}).get(origin.index)
        if found is not None:
            before[k] = found
    return before, from_ours


def _fresh(current: str, taken: set[str]) -> str:
    """An id at the same minute no entry holds: `<minute>-<n>`."""
    stem = re.sub(r"-\d+$", "", current)
    n = 2
    while f"{stem}-{n}" in taken:
        n += 1
    return f"{stem}-{n}"


def pin(merged: Merged, ours: str, theirs: str, parse: Parse) -> tuple[str, list[tuple[str, str]]]:
    """The merged text with moved ids pinned; [(old id, id now)] for the ids it could not keep.

    Ours' ids come first: each keeps its id, and an entry of theirs (or a merge's second version)
    that holds it by position now gets another id written in. An id of theirs another entry holds
    is a collision: that entry keeps an id no other holds and gets a `Conflict:` line."""
    if len(split(merged.text).blocks) != len(merged.blocks):
        return merged.text, []  # the merged head opened or closed a fence: no block to pin is certain
    events = parse(merged.text)
    now = _entries_by_block(merged.text, parse, events)
    before, from_ours = _before(merged, ours, theirs, parse, now)
    final = {k: before[k].id for k in from_ours}  # the id each entry ends with, when known
    fixed = {ev.id for ev in events if ev.explicit_id or ev.is_note}
    for k in from_ours:  # an id written into another entry cannot be taken back
        if final[k] in fixed and final[k] != now[k].id:
            del final[k]
    taken = fixed | set(final.values()) | {ev.id for k, ev in now.items() if k not in final}
    for k in sorted(k for k in before if k not in from_ours):
        want = before[k].id
        if want not in taken or (want == now[k].id and want not in final.values()):
            final[k] = want
            taken.add(want)
    blocks = list(merged.blocks)
    lost: list[tuple[str, str]] = []
    owners = {v: k for k, v in final.items()}
    for k, ev in now.items():
        if ev.explicit_id or k in final and final[k] == ev.id:
            continue
        if k in final:
            blocks[k] = with_id_line(blocks[k], final[k])
            continue
        if ev.id in owners and owners[ev.id] != k:  # ours' entry takes this id back: another one here
            new_id = _fresh(ev.id, taken | set(final.values()))
            taken.add(new_id)
            blocks[k] = with_id_line(blocks[k], new_id)
        else:
            new_id = ev.id
        old = before[k].id if k in before else ev.id
        if old != new_id:
            why = (f"id {old} named this entry on one machine; after a merge it names another entry, "
                   f"and this one is {new_id}: check what referred to {old}, then delete this line")
            blocks[k] = with_conflict(blocks[k], why)
            lost.append((old, new_id))
    lost += _split_explicit(blocks, now, taken | set(final.values()) | {ev.id for ev in events},
                            {k for k, _ in merged.conflicts})
    if blocks == merged.blocks:
        return merged.text, lost
    return join(split(merged.text).head, blocks), lost


ID_VALUE = re.compile(r"^(id[ \t]*:[ \t]*)(\S+)([ \t]*)$", re.IGNORECASE | re.MULTILINE)


def _split_explicit(blocks: list[Block], now: dict[int, Event], taken: set[str], versions: set[int]) -> list[tuple[str, str]]:
    """Two entries with one `Id:` line (the two versions of an entry edited on two machines, or two
    clones that share a machine name): the first keeps it, each later one gets `<id>-2`… written
    in, and a `Conflict:` line unless it already has one, so `check` warns (MV023) instead of
    refusing every later commit for a duplicate id (MV010)."""
    seen: set[str] = set()
    lost = []
    for k in sorted(now):
        ev = now[k]
        if not ev.explicit_id:
            continue
        if ev.id not in seen:
            seen.add(ev.id)
            continue
        new_id = _fresh(ev.id + "-1", taken)
        taken.add(new_id)
        lines = blocks[k].text
        last = [m for m in ID_VALUE.finditer(lines) if m[2] == ev.id][-1:]
        if not last:
            continue
        m = last[0]
        text = lines[: m.start(2)] + new_id + lines[m.end(2):]
        block = Block(blocks[k].heading, text)
        if k not in versions:
            block = with_conflict(block, f"id {ev.id} was also written for another entry on another clone (two "
                                  f"clones with one machine name?); this one is {new_id} now: check what referred "
                                  f"to {ev.id}, then delete this line")
        blocks[k] = block
        lost.append((ev.id, new_id))
    return lost
