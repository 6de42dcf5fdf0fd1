"""Building proposals: selected targets (select.py) become bullets to add, update or reconfirm.

A new bullet is the entry's first paragraph on one line with an `(added ...)` date, links to
the entries it comes from and a `^block` id; an update keeps the bullet's id and says what it
`was:`; a reconfirmation bumps `(updated ...)` and adds the new sources.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace

from memvault.config.curate import Settings
from memvault.curate.document import (
    ANNOTATION_RE,
    BLOCK_ID_RE,
    SOURCE_ANN_RE,
    MemoryDoc,
    add_sources,
    added_date,
    bullet_prefix,
    bump_updated,
    cap_links,
    confirmed_date,
    ensure_block_id,
    plain_text,
    render_bullet,
    section_insert,
)
from memvault.curate.plan import Proposal
from memvault.curate.select import Selection, Target
from memvault.entries.markdown import page_of
from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.errors import MemvaultError
from memvault.textsafety import CONTROL_RE

HEADING_BREAKERS = set("[]|#^()")
KIND_ORDER = {"update": 0, "reconfirm": 1, "add": 2, "archive": 3}


def link_for(ev: Event, tl: Timeline) -> str:
    """An Obsidian link to the entry's heading; the `|alias` carries the id when needed.

    Obsidian opens the first heading of a given text, so for a heading that occurs twice
    in one day the alias names the exact entry (memvault resolves the alias first).
    """
    page = page_of(ev.file)
    if ev.is_note:  # a section's parts share its heading: the alias names the note
        title = ev.title if ev.title and not HEADING_BREAKERS & set(ev.title) else ""
        return f"[[{page}#{title}|{ev.id}]]" if title else f"[[{page}|{ev.id}]]"
    if HEADING_BREAKERS & set(ev.heading):
        return f"[[{page}|{ev.id}]]"
    norm = " ".join(ev.heading.replace(":", " ").lower().split())
    same = [e for e in tl.index.by_date.get(page, []) if " ".join(e.heading.replace(":", " ").lower().split()) == norm]
    if len(same) > 1 or ev.explicit_id:
        return f"[[{page}#{ev.heading}|{ev.id}]]"
    return f"[[{page}#{ev.heading}]]"


LIST_MARK_RE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)]|#{1,6}|>)[ \t]+")


def bullet_text(ev: Event, limit: int) -> str:
    """One line for MEMORY.md: the entry's first paragraph, shortened at a word if long."""
    first = re.split(r"\n[ \t]*\n", ev.content.strip(), maxsplit=1)[0]
    text = " ".join(" ".join(LIST_MARK_RE.sub("", ln) for ln in first.split("\n")).split())
    text = CONTROL_RE.sub("", text)  # a one-line summary: controls go with the line breaks
    text = BLOCK_ID_RE.sub("", text).strip()
    # Text that looks like curate's own annotations would be read back as one.
    for pattern in (ANNOTATION_RE, SOURCE_ANN_RE):
        text = pattern.sub(lambda m: "[" + m.group(0)[1:-1] + "]", text)
    text = text or ev.title or ev.type
    if len(text) > limit:
        cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
        text = cut.rstrip(",;:") + "\u2026"
    return text


def new_block_id(seed: str, taken: set[str]) -> str:
    digest_hex = hashlib.sha1(seed.encode("utf-8")).hexdigest()
    for size in range(6, 41, 2):
        candidate = f"mv-{digest_hex[:size]}"
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    raise MemvaultError("cannot make a unique block id")  # pragma: no cover - 40 hex digits


def build_lines(p: Proposal, max_sources: int) -> tuple[str, ...]:
    """The bullet's new lines, from the proposal's text, date, links and the bullet as it is."""
    links = tuple(cap_links(list(p.links), max_sources))
    if p.kind == "add":
        if p.first_day is not None and p.day is not None and p.first_day < p.day:
            return (render_bullet(p.text, added=p.first_day, updated=p.day, links=links, block_id=p.block_id),)
        return (render_bullet(p.text, added=p.day, links=links, block_id=p.block_id),)
    old = list(p.old)
    if p.kind == "update":
        first = render_bullet(p.text, prefix=bullet_prefix(old[0]), added=added_date(old[0]), updated=p.day, was=p.was)
        src = SOURCE_ANN_RE.search(old[0])
        if src is not None:
            first += " " + src.group(0)
        lines = add_sources([first] + old[1:], links, max_sources)
        keep = BLOCK_ID_RE.search(old[0])
        if keep is not None:
            lines[0] = f"{lines[0]} ^{keep.group(1)}"
        return tuple(ensure_block_id(lines, p.block_id))
    if p.kind == "reconfirm":
        lines = list(old)
        seen = confirmed_date(old)
        if p.day is not None and (seen is None or p.day > seen):
            lines[0] = bump_updated(lines[0], p.day)
        lines = add_sources(lines, links, max_sources)
        return tuple(ensure_block_id(lines, p.block_id))
    return ()


def proposals(sel: Selection, tl: Timeline, doc: MemoryDoc, s: Settings) -> list[Proposal]:
    """The proposals for what `select` chose, in review order (updates first), keyed p1, p2, ..."""
    taken = doc.block_ids()
    out: list[Proposal] = []
    for index, target in enumerate(sel.targets):
        p = _proposal(target, tl, doc, s, taken)
        if p.kind != "add" and p.lines == p.old:
            continue  # nothing would change: the bullet already cites these entries
        p.key = str(index)
        out.append(p)
    out.sort(key=lambda p: (KIND_ORDER[p.kind], p.start if p.kind != "add" else 0))
    keys = {}
    for n, p in enumerate(out, 1):
        keys[p.key] = f"p{n}"
        p.key = f"p{n}"
    by_key = {p.key: p for p in out}
    for dec in sel.decisions.values():
        if dec.target is None:
            continue
        key = keys.get(str(dec.target))
        dec.facts["proposal"] = key
        if key is None:
            dec.chosen = False
            dec.reason = "the bullet that says the same already cites it; nothing to change"
        else:
            dec.reason = f"{describe(by_key[key])} \u2014 {by_key[key].reason} ({dec.facts.get('new', '')})"
    return out


def describe(p: Proposal) -> str:
    """`add to "Section"`, `update bullet ^id (line 4)`: what a proposal does, for people."""
    if p.kind == "add":
        return f"{p.key}: add to \u201c{p.section}\u201d" + (" (new section)" if p.new_section else "")
    if p.block_id and p.bullet == p.block_id:
        where = f"^{p.bullet}"
    else:
        text = p.text if len(p.text) <= 40 else p.text[:39] + "\u2026"
        where = f"\u201c{text}\u201d"
    return f"{p.key}: {p.kind} bullet {where} (line {p.start + 1})"


def _proposal(t: Target, tl: Timeline, doc: MemoryDoc, s: Settings, taken: set[str]) -> Proposal:
    links = tuple(link_for(e, tl) for e in t.entries)
    ids = tuple(e.id for e in t.entries)
    days = [e.timestamp.date() for e in t.entries if e.timestamp is not None]
    day = max(days) if days else None
    why = "; ".join(dict.fromkeys(t.reasons))  # merged targets can give one reason twice
    cited = [e.location for e in t.entries if e.is_note]  # a note has no heading of its own to show
    if cited:
        why += f"; from {', '.join(cited)}"
    if t.kind == "add":
        # Repeats tend to be worded as repeats ("again", "still"): the first mention is the
        # statement; the last one dates the bullet.
        rep = t.entries[0]
        insert = section_insert(doc, t.section)
        p = Proposal("", "add", t.section, bullet_text(rep, s.max_chars), (), start=insert[0] if insert else -1,
                     end=insert[0] if insert else -1, block_id=new_block_id(f"{rep.file}#{rep.id}", taken),
                     entries=ids, links=links, day=day, first_day=min(days) if days else None,
                     reason=f"{why}; section: {t.section_why}" if t.section_why else why, section_why=t.section_why)
        return replace(p, lines=build_lines(p, s.max_sources))
    b = t.bullet
    assert b is not None
    old = tuple(doc.lines[b.start : b.end])
    block = b.event.block_ids[0] if b.event.block_ids else new_block_id(f"MEMORY.md#{b.id}", taken)
    p = Proposal("", t.kind, b.event.category or "", plain_text(old[0]), (), old=old, start=b.start, end=b.end,
                 bullet=b.id, block_id=block, entries=ids, links=links, day=day, reason=why)
    if t.kind == "update":
        corr = t.text_from or t.entries[-1]
        cday = corr.timestamp.date() if corr.timestamp else day
        p = replace(p, text=bullet_text(corr, s.max_chars), was=plain_text(old[0]), day=cday,
                    reason=f"corrects what the bullet says; {why}")
    elif t.kind == "reconfirm":
        p = replace(p, reason=f"says again what the bullet says; {why}" if why else "says again what the bullet says")
    return replace(p, lines=build_lines(p, s.max_sources))
