"""Curate: promote what the daily logs taught into MEMORY.md, with the person in control.

`plan_curation(vault)` reads MEMORY.md once and returns a `Plan`: proposals (add a bullet,
update a bullet a correction contradicts, reconfirm a bullet that new entries repeat,
archive bullets to keep the file within its budget), the reason for every log entry, and
the budget. Planning and rendering are pure: a proposal is a line-range splice on the text
that was read. `apply(vault, plan, ...)` is the only writer: under the vault lock it checks
MEMORY.md still has the bytes the plan was made from, then replaces it atomically.

docs/curate.md describes the rules and the choices made.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from functools import partial
from pathlib import Path
from typing import Any

from memvault.config.curate import Settings
from memvault.curate.document import (
    ANNOTATION_RE,
    BLOCK_ID_RE,
    DEFAULT_TITLE,
    SOURCE_ANN_RE,
    Bullet,
    MemoryDoc,
    Splice,
    add_sources,
    apply_splices,
    blank_after,
    blank_before,
    bullet_prefix,
    bump_updated,
    cap_links,
    confirmed_date,
    ensure_block_id,
    load_doc,
    marker_line,
    plain_text,
    render_bullet,
    section_insert,
    tail_index,
)
from memvault.curate.select import Decision, Selection, Target, select
from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.errors import InputError, MemvaultError
from memvault.fsio import append_spacing, decode_text, encode_like, locked, rewrite
from memvault.layout import MEMORY_FILE, read_file, writable
from memvault.parsed import ParsedVault
from memvault.search import access
from memvault.textsafety import CONTROL_RE
from memvault.write.guard import added_lines, check_written

HEADING_BREAKERS = set("[]|#^()")
KIND_ORDER = {"update": 0, "reconfirm": 1, "add": 2, "archive": 3}


class StaleMemory(MemvaultError):
    """MEMORY.md changed on disk between the proposal and the write."""


# ------------------------------------------------------------------------- the plan


@dataclass
class Proposal:
    key: str
    kind: str  # add | update | reconfirm | archive
    section: str
    text: str  # the bullet's text without annotations
    lines: tuple[str, ...]  # what the bullet will be; () for archive
    old: tuple[str, ...] = ()  # the bullet as it is (update, reconfirm, archive)
    start: int = 0  # line range in MEMORY.md of the bullet it changes
    end: int = 0
    bullet: str | None = None  # id of the bullet it changes
    block_id: str = ""
    entries: tuple[str, ...] = ()  # log entries it comes from
    links: tuple[str, ...] = ()  # links to those entries
    day: date | None = None  # latest date of its entries: the bullet's `added`/`updated` date
    first_day: date | None = None  # add: the first mention, when earlier than `day`
    was: str | None = None
    reason: str = ""
    origin: str = "memvault"  # or "with" when an external command rewrote it

    @property
    def new_section(self) -> bool:
        return self.kind == "add" and self.start < 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "kind": self.kind, "section": self.section, "text": self.text,
            "lines": list(self.lines), "old": list(self.old), "line": self.start + 1 if self.start >= 0 else None,
            "bullet": self.bullet, "block_id": self.block_id, "entries": list(self.entries),
            "links": list(self.links), "date": self.day.isoformat() if self.day else None, "was": self.was,
            "reason": self.reason, "origin": self.origin, "new_section": self.new_section,
        }


@dataclass(frozen=True)
class StaleBullet:
    bullet: Bullet
    reason: str
    rank: tuple[int, float, float]


@dataclass
class Plan:
    at: datetime
    since: datetime | None
    since_from: str  # "marker", "option", "all" or "none"
    path: Path
    archive_path: Path
    digest: str | None
    doc: MemoryDoc
    settings: Settings
    proposals: list[Proposal]
    decisions: dict[str, Decision]
    stale: list[StaleBullet]
    archives: list[Proposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def digest(raw: bytes | None) -> str | None:
    return hashlib.sha256(raw).hexdigest() if raw is not None else None


def _read(path: Path) -> bytes | None:
    """A file in the vault root by the layout rule: a link there raises UnsafePath, never followed."""
    try:
        return read_file(path.parent, path.name)
    except FileNotFoundError:
        return None


def plan_curation(
    vault: ParsedVault, *, at: datetime | None = None, since: datetime | None = None, everything: bool = False,
) -> Plan:
    """What curate proposes for the vault as of `at` (now by default). Changes nothing."""
    settings = Settings.from_config(vault.config)
    at = at or vault.now()
    path = vault.root / MEMORY_FILE
    raw = _read(path)
    doc = load_doc(raw, vault.config)
    since_from = "option" if since is not None else "none"
    if everything:
        since, since_from = None, "all"
    elif since is None and doc.marker_at is not None:
        since, since_from = doc.marker_at, "marker"
    tl = vault.timeline
    recalls = access.stats(vault.root)
    sel = select(tl, doc, settings, at=at, since=since, recalls=recalls)
    proposals = _proposals(sel, tl, doc, settings)
    plan = Plan(
        at=at, since=since, since_from=since_from, path=path, archive_path=vault.root / settings.archive_file,
        digest=digest(raw), doc=doc, settings=settings, proposals=proposals, decisions=sel.decisions,
        stale=stale_bullets(tl, doc, settings, at, recalls, sel.curated_by),
    )
    plan.archives = archives_for(plan)
    check_fence(plan)
    return plan


def check_fence(plan: Plan) -> None:
    """New bullets after a code block that never closes would become code: say so instead."""
    fence = plan.doc.open_fence
    if fence is None:
        return
    if any(p.kind == "add" and (p.start < 0 or p.start > fence) for p in plan.proposals):
        raise MemvaultError(f"{plan.path}:{fence + 1}: this code block is never closed, so new bullets after it "
                            "would be code; close it with ``` and run curate again")


# -------------------------------------------------------------------- building proposals


def link_for(ev: Event, tl: Timeline) -> str:
    """An Obsidian link to the entry's heading; the `|alias` carries the id when needed.

    Obsidian opens the first heading of a given text, so for a heading that occurs twice
    in one day the alias names the exact entry (memvault resolves the alias first).
    """
    page = ev.file.rsplit("/", 1)[-1].removesuffix(".md")
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
        first = render_bullet(p.text, prefix=bullet_prefix(old[0]), updated=p.day, was=p.was)
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


def _proposals(sel: Selection, tl: Timeline, doc: MemoryDoc, s: Settings) -> list[Proposal]:
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
    why = "; ".join(t.reasons)
    if t.kind == "add":
        # Repeats tend to be worded as repeats ("again", "still"): the first mention is the
        # statement; the last one dates the bullet.
        rep = t.entries[0]
        insert = section_insert(doc, t.section)
        p = Proposal("", "add", t.section, bullet_text(rep, s.max_chars), (), start=insert[0] if insert else -1,
                     end=insert[0] if insert else -1, block_id=new_block_id(f"{rep.file}#{rep.id}", taken),
                     entries=ids, links=links, day=day, first_day=min(days) if days else None, reason=why)
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
        p = replace(p, reason=f"says again what the bullet says; {why}")
    return replace(p, lines=build_lines(p, s.max_sources))


# ------------------------------------------------------------------------ the budget


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
    chosen = _choice(plan, choice)
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
    after = measure(render(plan, _choice(plan, choice), plan.archives if archives is None else archives,
                           complete=True))
    return {
        "chars": s.budget_chars or None, "lines": s.budget_lines or None,
        "before": measure("\n".join(plan.doc.lines)), "after": after, "over": over_budget(after, s),
    }


# ---------------------------------------------------------------------------- rendering


def _choice(plan: Plan, choice: Mapping[str, tuple[str, ...]] | None) -> dict[str, tuple[str, ...]]:
    if choice is None:
        return {p.key: p.lines for p in plan.proposals}
    return dict(choice)


def render(plan: Plan, choice: Mapping[str, tuple[str, ...]] | None = None,
           archives: list[Proposal] | None = None, *, complete: bool = False) -> str:
    """MEMORY.md with the chosen proposals (key -> lines; all when None) and archives applied.

    `complete` also records the curation point (the review went through every proposal).
    """
    doc = plan.doc
    chosen = _choice(plan, choice)
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
    if complete and (chosen or plan.proposals or plan.archives):
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


def _marker_splice(plan: Plan) -> Splice:
    doc = plan.doc
    when = max(plan.at, doc.marker_at) if doc.marker_at else plan.at
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




# ------------------------------------------------------------------------------- writing


@dataclass
class Applied:
    written: bool
    counts: dict[str, int]
    budget: dict[str, Any]
    archived_to: str | None
    marker: bool


def apply(vault: ParsedVault, plan: Plan, choice: Mapping[str, tuple[str, ...]] | None = None,
          archives: list[Proposal] | None = None, *, complete: bool = True) -> Applied:
    """Write the chosen proposals into MEMORY.md, atomically, if it still is what was planned on."""
    chosen = _choice(plan, choice)
    archived = plan.archives if archives is None else archives
    new_text = render(plan, chosen, archived, complete=complete)
    old_text = ("\ufeff" if plan.doc.bom else "") + "\n".join(plan.doc.raw_lines)
    counts = {k: sum(1 for p in plan.proposals if p.kind == k and p.key in chosen) for k in ("add", "update", "reconfirm")}
    counts["archive"] = len(archived)
    # What curate adds passes the checks `log` applies (moved and untouched lines are the person's).
    check_written("\n".join(added_lines(old_text, new_text)), where=MEMORY_FILE)
    with locked(vault.lock_path, what=MEMORY_FILE):
        writable(vault.root, MEMORY_FILE)  # never through a link (layout.py)
        if archived:
            writable(vault.root, plan.settings.archive_file)
        if digest(_read(plan.path)) != plan.digest:
            raise StaleMemory(
                f"{plan.path}: changed on disk since curate read it; nothing was written. "
                "Run `memvault curate` again to review against the new text."
            )
        if archived:  # first: if MEMORY.md then cannot be written, a bullet is in both, not lost
            _append_archive(plan, archived)
        if new_text != old_text:
            rewrite(plan.path, partial(_reviewed, plan, new_text.encode("utf-8"), bool(archived)), what=MEMORY_FILE)
    size = budget(plan, chosen, archived)
    size["after"] = measure(new_text)
    size["over"] = over_budget(size["after"], plan.settings)
    return Applied(new_text != old_text, counts, size, plan.settings.archive_file if archived else None,
                   complete and new_text != old_text)


def _reviewed(plan: Plan, new: bytes, archived: bool, raw: bytes | None) -> bytes:
    """The reviewed text, provided MEMORY.md still is what the review was made on."""
    if digest(raw) != plan.digest:
        also = (f" {plan.settings.archive_file} already holds the archived bullets, which MEMORY.md still has too."
                if archived else "")
        raise StaleMemory(f"{plan.path}: changed on disk while curate was writing it; it was left as it is.{also} "
                          "Run `memvault curate` again to review against the new text.")
    return new


def _append_archive(plan: Plan, archived: list[Proposal]) -> None:
    """Archived bullets keep their exact text, under the day and section they left."""
    parts = [f"## {plan.at.date().isoformat()}\n"]
    for a in archived:
        parts.append("\n".join(a.old) + "\n")
        parts.append(f"  - archived from \u201c{a.section or 'MEMORY.md'}\u201d: {a.reason}\n")
    block = "".join(parts)

    def add(raw: bytes | None) -> bytes:
        old = decode_text(raw)[0] if raw else ""
        head = old + append_spacing(old) if old.strip() else (
            "# Archived memory\n\nBullets `memvault curate` moved out of MEMORY.md to keep it within its budget.\n\n")
        return encode_like(raw or b"", old, head + block)

    plan.archive_path.parent.mkdir(parents=True, exist_ok=True)
    rewrite(plan.archive_path, add, what=plan.settings.archive_file)


# ------------------------------------------------------------------------------ reports


def plan_dict(plan: Plan, *, with_diff: bool = True) -> dict[str, Any]:
    new_text = render(plan, None, None, complete=True)
    data = {
        "memory": str(plan.path), "at": plan.at.isoformat(),
        "since": plan.since.isoformat() if plan.since else None, "since_from": plan.since_from,
        "proposals": [p.to_dict() for p in plan.proposals], "archives": [a.to_dict() for a in plan.archives],
        "budget": budget(plan), "warnings": list(plan.warnings) + budget_warnings(plan, budget(plan), planned=True),
    }
    if with_diff:
        data["diff"] = diff(plan, new_text)
    return data


def budget_warnings(plan: Plan, size: dict[str, Any], *, planned: bool = False) -> list[str]:
    if not size["over"]:
        return []
    s = plan.settings
    limit = f"{s.budget_chars:,} chars" if s.budget_chars else f"{s.budget_lines:,} lines"
    why = "; no more bullets are stale, low-confidence or superseded" if planned else ""
    return [f"MEMORY.md {'would be' if planned else 'is'} over its budget ({size['after']['chars']:,} chars, "
            f"{size['after']['lines']:,} lines; budget {limit}){why}: archive or shorten bullets by hand, "
            f"or raise [curate] {'budget_chars' if s.budget_chars else 'budget_lines'}"]


def explain(plan: Plan, vault: ParsedVault, entry: str | None = None) -> list[dict[str, Any]]:
    """Why each log entry was or was not chosen (one entry when `entry` is given)."""
    decisions = plan.decisions
    if entry:
        if entry not in decisions:
            ev = vault.get(entry)  # resolves `[[links]]` and `2026-02-21 16:00`, or raises
            entry = ev.id
        if entry not in decisions:
            raise InputError(f"{entry} is not a daily-log entry; curate only promotes log entries")
        chosen = [decisions[entry]]
    else:
        chosen = [d for d in decisions.values() if d.chosen or not d.reason.startswith("before the last curation")]
    tl = vault.timeline
    out = []
    for d in chosen:
        ev = tl.by_id[d.entry]
        out.append({"id": d.entry, "type": ev.type, "chosen": d.chosen, "proposal": d.facts.get("proposal"),
                    "reason": d.reason, "file": ev.file, "line": ev.line,
                    "timestamp": ev.timestamp.isoformat() if ev.timestamp else None})
    out.sort(key=lambda x: (x["timestamp"] or "", x["file"], x["line"]))
    return out
