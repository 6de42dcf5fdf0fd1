"""Three-way merge of a memory file at the block level (pure): what the merge driver writes.

Each side's blocks are matched to the base's: first word for word (a longest common subsequence),
then, among what is left, word for word out of place (a moved block: its run is sorted again),
then by heading line in order (an edited block). A file only one side changed is that side's text. Then, base block by base
block: kept, edited on one side (the edit), edited on both sides alike (once), edited on both
sides differently (both versions, the second marked `Conflict:`), deleted on one side and not
edited on the other (gone), deleted on one side and edited on the other (the edit kept and
marked). Blocks added on either side go after the block they followed there; blocks added on both
sides word for word are kept once; each run of timed blocks a merge added to is put in time order
(stably, so a minute's entries keep their order and their ids). Nothing ever writes git's
`<<<<<<<` markers into a daily log.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from memvault.entries.blocks import Block, join, sort_runs, split

SAME, MOVED, EDITED, DELETED = "same", "moved", "edited", "deleted"

TWO_VERSIONS = "two versions: this one and the one above were edited on two machines; keep one, delete the other and this line"
DELETED_THERE = "deleted on one machine and edited on another; the edit is kept: delete the entry again if it should go, and this line"


@dataclass(frozen=True)
class Origin:
    """Where a merged block came from: 'base', 'ours' or 'theirs', and its position there; `base`:
    the base block it is a version of (-1: added by a side)."""

    side: str
    index: int
    base: int = -1


@dataclass
class Merged:
    text: str
    blocks: list[Block]
    origins: list[Origin]
    conflicts: list[tuple[int, str]] = field(default_factory=list)  # (block position, why)


def _match(base: tuple[Block, ...], side: tuple[Block, ...]) -> tuple[dict[int, tuple[str, int]], list[int]]:
    """{base position: (fate, side position)} for matched base blocks; side positions unmatched."""
    fate: dict[int, tuple[str, int]] = {}
    matcher = difflib.SequenceMatcher(None, [b.body for b in base], [b.body for b in side], autojunk=False)
    used: set[int] = set()
    loose_base: list[int] = []
    loose_side: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                fate[i1 + k] = (SAME, j1 + k)
                used.add(j1 + k)
        else:
            loose_base += range(i1, i2)
            loose_side += range(j1, j2)
    # A block put elsewhere (a run sorted) is the same text; an edited block keeps its heading
    # line: pair what is left by text, then by heading, in order.
    for fate_name, key in ((MOVED, lambda blk: blk.body), (EDITED, lambda blk: blk.heading)):
        waiting: dict[str, list[int]] = {}
        for j in loose_side:
            if j not in used:
                waiting.setdefault(key(side[j]), []).append(j)
        for i in loose_base:
            queue = waiting.get(key(base[i]))
            if queue and i not in fate:
                j = queue.pop(0)
                fate[i] = (fate_name, j)
                used.add(j)
    return fate, [j for j in range(len(side)) if j not in used]


def _anchors(fate: dict[int, tuple[str, int]], added: list[int]) -> dict[int, list[int]]:
    """{base position a block follows (-1: the start): side positions added after it, in order}."""
    at_side = {j: i for i, (_, j) in fate.items()}
    out: dict[int, list[int]] = {}
    for j in added:
        k = j - 1
        while k >= 0 and k not in at_side:
            k -= 1
        out.setdefault(at_side[k] if k >= 0 else -1, []).append(j)
    return out


def with_conflict(block: Block, why: str) -> Block:
    """The block with a `Conflict:` metadata line after its last line."""
    return Block(block.heading, block.text.rstrip("\n") + f"\nConflict: {why}\n")


def merge_log(base: str, ours: str, theirs: str) -> Merged:
    """The merged text of a daily log (or any memory file read as blocks)."""
    if theirs == base or ours == theirs:
        return _one_side(ours, "ours")
    if ours == base:
        return _one_side(theirs, "theirs")
    b, o, t = split(base), split(ours), split(theirs)
    fate_o, added_o = _match(b.blocks, o.blocks)
    fate_t, added_t = _match(b.blocks, t.blocks)
    after_o, after_t = _anchors(fate_o, added_o), _anchors(fate_t, added_t)
    out: list[Block] = []
    origins: list[Origin] = []
    conflicts: list[tuple[int, str]] = []
    touched: set[int] = set()
    seen: set[str] = set()  # the texts put so far (kept as a set: a day of thousands of entries)
    bare: dict[str, set[bool]] = {}  # the same without Id: lines -> whether those had one

    def put(block: Block, origin: Origin, why: str | None = None) -> None:
        if why:
            conflicts.append((len(out), why))
            block = with_conflict(block, why)
        out.append(block)
        origins.append(origin)
        core, no_id, has_id = block.core
        seen.add(core)
        bare.setdefault(no_id, set()).add(has_id)

    def said(block: Block) -> bool:
        core, no_id, has_id = block.core
        return core in seen or (no_id in bare and (not has_id or False in bare[no_id]))

    def added_after(i: int) -> None:
        for side, blocks, js in (("ours", o.blocks, after_o.get(i, [])), ("theirs", t.blocks, after_t.get(i, []))):
            for j in js:
                if not said(blocks[j]):
                    touched.add(len(out))
                    put(blocks[j], Origin(side, j))

    added_after(-1)
    for i in range(len(b.blocks)):
        fo, ft = fate_o.get(i, (DELETED, -1)), fate_t.get(i, (DELETED, -1))
        vo = o.blocks[fo[1]] if fo[0] != DELETED else None
        vt = t.blocks[ft[1]] if ft[0] != DELETED else None
        if MOVED in (fo[0], ft[0]):
            touched.add(len(out))  # a side put it elsewhere in its run (sorted it): sort the run here
        kept_o, kept_t = fo[0] in (SAME, MOVED), ft[0] in (SAME, MOVED)
        if vo is not None and vt is not None:
            if kept_o or vo.body == vt.body:
                put(vt if kept_o else vo, Origin("theirs" if kept_o else "ours", ft[1] if kept_o else fo[1], i))
            elif kept_t:
                put(vo, Origin("ours", fo[1], i))
            else:
                put(vo, Origin("ours", fo[1], i))
                put(vt, Origin("theirs", ft[1], i), TWO_VERSIONS)
        elif vo is not None and fo[0] == EDITED:
            put(vo, Origin("ours", fo[1], i), DELETED_THERE)
        elif vt is not None and ft[0] == EDITED:
            put(vt, Origin("theirs", ft[1], i), DELETED_THERE)
        added_after(i)
    ordered = sort_runs(out, touched) if touched else out
    if ordered != out:
        perm = _permutation(out, ordered)
        origins = [origins[k] for k in perm]
        conflicts = [(perm.index(k), why) for k, why in conflicts]
    head = _merge_head(b.head, o.head, t.head)
    return Merged(join(head, ordered), ordered, origins, conflicts)


def _one_side(text: str, side: str) -> Merged:
    """Only one side changed the file (or both alike): that side's text, as it is."""
    blocks = list(split(text).blocks)
    return Merged(text, blocks, [Origin(side, k) for k in range(len(blocks))])


def _permutation(before: list[Block], after: list[Block]) -> list[int]:
    """For each position of `after`, the position in `before` of that very block."""
    pool: dict[int, list[int]] = {}
    for k, blk in enumerate(before):
        pool.setdefault(id(blk), []).append(k)
    return [pool[id(blk)].pop(0) for blk in after]


def _merge_head(base: str, ours: str, theirs: str) -> str:
    """The part before the first heading: one side's edit, or ours without the lines theirs removed
    and with the lines theirs added, each after the line it follows in theirs (so a key added to
    front matter stays inside it)."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    t_lines = theirs.rstrip("\n").split("\n")
    removed = {line for line in base.split("\n") if line.strip()} - set(t_lines)
    have = [line for line in ours.rstrip("\n").split("\n") if line not in removed] if ours.strip() else []
    known = set(base.split("\n")) | set(have)
    for n, line in enumerate(t_lines):
        if not line.strip() or line in known:
            continue
        have.insert(_after(have, t_lines[:n]), line)
        known.add(line)
    return "\n".join(have) + (ours[len(ours.rstrip("\n")):] or "\n")


def _after(have: list[str], before: list[str]) -> int:
    """Where a line goes in `have`: after the nearest line before it that `have` holds, the same
    occurrence of it (the second `---` of front matter is not the first); else at the end."""
    for prev in reversed(before):
        if prev in have:
            at = [k for k, line in enumerate(have) if line == prev]
            return at[min(before.count(prev), len(at)) - 1] + 1
    return len(have)
