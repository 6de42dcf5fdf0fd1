"""Three-way merge of MEMORY.md (pure): bullets merge, prose is the person's.

Sections merge as blocks (`merge.py`). In a section both sides changed, items are merged: a bullet
(a `- ` or `* ` line and its indented lines) is known by its `^block-id`, else by its text; prose
(any other paragraph) by its text. Bullets added on either side are kept, in the order they came;
a bullet one side removed and the other left alone is removed; a bullet (with an id) changed on
both sides keeps the version already in the file and the other version becomes a review item
(`sync` logs it as a correction of that bullet, so `memvault curate` proposes it). Prose changed on
both sides is never guessed at: the section is written with git's conflict markers around the two
versions, and the merge reports a conflict for the person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memvault.entries.blocks import Block, join, split
from memvault.sync.merge import merge_log

BULLET_RE = re.compile(r"^[-*+][ \t]+")
BLOCK_ID_RE = re.compile(r"\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")


@dataclass(frozen=True)
class Review:
    """A bullet changed on two machines: the version not kept, and the bullet's id."""

    block_id: str
    kept: str
    other: str


@dataclass
class MemoryMerge:
    text: str
    reviews: list[Review] = field(default_factory=list)
    prose_conflicts: list[str] = field(default_factory=list)  # headings of sections left to the person


@dataclass(frozen=True)
class Item:
    text: str
    bullet: bool

    @property
    def key(self) -> str:
        if self.bullet:
            m = BLOCK_ID_RE.search(self.text.split("\n", 1)[0])
            if m:
                return "^" + m[1]
        return self.text.rstrip()


def items(body: str) -> list[Item]:
    """A section's lines after its heading, as bullets and paragraphs."""
    out: list[Item] = []
    cur: list[str] = []
    bullet = False

    def close() -> None:
        nonlocal cur
        if cur:
            out.append(Item("\n".join(cur), bullet))
        cur = []

    for line in body.split("\n"):
        if BULLET_RE.match(line):
            close()
            cur, bullet = [line], True
        elif not line.strip():
            close()
        elif bullet and cur and line[:1] in (" ", "\t"):
            cur.append(line)
        else:
            if bullet:
                close()
                bullet = False
            cur.append(line)
    close()
    return out


def _section_parts(block: Block) -> tuple[str, list[Item]]:
    heading, _, rest = block.text.partition("\n")
    return heading, items(rest)


def _render(heading: str, found: list[Item], gap: bool) -> str:
    """The section's text; `gap`: a blank line under the heading (as ours had it)."""
    lines = [heading, ""] if gap else [heading]
    prev_bullet = None
    for it in found:
        if prev_bullet is not None and not (prev_bullet and it.bullet):
            lines.append("")
        lines.append(it.text)
        prev_bullet = it.bullet
    return "\n".join(lines).rstrip("\n") + "\n"


def merge_section(base: Block, ours: Block, theirs: Block) -> tuple[Block, list[Review], bool]:
    """A section both sides changed: (merged block, review items, whether prose conflicts)."""
    heading, b = _section_parts(base)
    _, o = _section_parts(ours)
    _, t = _section_parts(theirs)
    bk, ok, tk = {i.key: i for i in b}, {i.key: i for i in o}, {i.key: i for i in t}
    prose_o = [i.key for i in o if not i.bullet] != [i.key for i in b if not i.bullet]
    prose_t = [i.key for i in t if not i.bullet] != [i.key for i in b if not i.bullet]
    if prose_o and prose_t and [i.key for i in o if not i.bullet] != [i.key for i in t if not i.bullet]:
        text = (f"{heading}\n\n<<<<<<< this clone (ours)\n{ours.text.partition(chr(10))[2].strip()}\n=======\n"
                f"{theirs.text.partition(chr(10))[2].strip()}\n>>>>>>> the other side (theirs)\n")
        return Block(heading, text), [], True
    reviews: list[Review] = []
    result: list[Item] = []
    for it in o:
        if it.key in bk and it.key not in tk:
            if it.text.rstrip() == bk[it.key].text.rstrip() or not it.bullet:
                continue  # theirs removed it and ours left it alone
            reviews.append(Review(it.key[1:], it.text, "")) if it.key.startswith("^") else None
            result.append(it)  # ours edited what theirs removed: kept
            continue
        other = tk.get(it.key)
        if other is not None and other.text.rstrip() != it.text.rstrip() and it.key in bk:
            base_text = bk[it.key].text.rstrip()
            if it.text.rstrip() == base_text:
                result.append(other)
                continue
            if other.text.rstrip() != base_text and it.key.startswith("^"):
                reviews.append(Review(it.key[1:], it.text, other.text))
        result.append(it)
    for n, it in enumerate(t):
        if it.key in ok or it.key in bk:
            if it.key in bk and it.key not in ok and it.text.rstrip() != bk[it.key].text.rstrip() and it.key.startswith("^"):
                reviews.append(Review(it.key[1:], "", it.text))  # edited here, removed there: removal kept
            continue
        at = _after_predecessor(result, t[:n])
        while at < len(result) and result[at].key not in bk and result[at].key not in tk:
            at += 1  # after what the other side added there, so each side's additions stay together
        result.insert(at, it)
    gap = ours.text.split("\n")[1:2] == [""]
    return Block(heading, _render(heading, result, gap)), reviews, False


def _after_predecessor(result: list[Item], before: list[Item]) -> int:
    """Where an added item goes: after the nearest item that preceded it and is still there."""
    keys = [r.key for r in result]
    for prev in reversed(before):
        if prev.key in keys:
            return keys.index(prev.key) + 1
    return 0 if not before else len(result)


def merge_memory(base: str, ours: str, theirs: str) -> MemoryMerge:
    """MEMORY.md merged: sections as blocks, sections both sides changed item by item."""
    merged = merge_log(base, ours, theirs)
    if not merged.conflicts:  # no section both sides changed: the block merge is the answer
        return MemoryMerge(merged.text)
    b, o, t = split(base), split(ours), split(theirs)
    out: list[Block] = []
    reviews: list[Review] = []
    prose: list[str] = []
    k = 0
    while k < len(merged.blocks):
        blk = merged.blocks[k]
        nxt = merged.blocks[k + 1] if k + 1 < len(merged.blocks) else None
        origin = merged.origins[k]
        pair = nxt is not None and any(p == k + 1 and "two versions" in why for p, why in merged.conflicts)
        if pair and origin.side == "ours":
            base_blk = b.blocks[origin.base] if origin.base >= 0 else Block(blk.heading, blk.heading + "\n")
            theirs_blk = t.blocks[merged.origins[k + 1].index]
            section, found, conflict = merge_section(base_blk, o.blocks[origin.index], theirs_blk)
            out.append(section)
            reviews += found
            if conflict:
                prose.append(blk.heading)
            k += 2
            continue
        if any(p == k for p, _ in merged.conflicts):  # deleted there, edited here: the edit, unmarked
            src = o if origin.side == "ours" else t
            blk = src.blocks[origin.index]
        out.append(blk)
        k += 1
    head = merged.text if not merged.blocks else None
    text = head if head is not None else join(_head(merged.text, merged.blocks), out)
    return MemoryMerge(text, reviews, prose)


def _head(text: str, blocks: list[Block]) -> str:
    first = blocks[0].text.rstrip("\n")
    at = text.find(first)
    return text[:at] if at > 0 else ""
