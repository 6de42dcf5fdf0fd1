"""Which log entries a MEMORY.md bullet cites: its source links and annotations resolved.

A bullet names its sources as Obsidian links (`[[2026-02-21#16:00 - Decision|id]]`, the alias
carrying the id when a heading is ambiguous) or as plain text in a `(source: ...)` annotation;
only a link or an entry id is resolved, never free words.
"""

from __future__ import annotations

from memvault.curate.document import MemoryDoc
from memvault.entries.markdown import link_parts
from memvault.entries.timeline import ID_SPACE_RE, Timeline


def resolve_source(tl: Timeline, target: str, alias: str | None, is_link: bool = True) -> str | None:
    """The log entry a bullet's source points at: the link's `|alias` id, else its heading."""
    if alias and alias in tl.by_id and tl.by_id[alias].kind == "log":
        return alias
    if not is_link:
        # Plain text in a source annotation ("user", "chat") is not a reference to resolve
        # by words; only an entry id is.
        res = tl.index.resolve(target) if target in tl.by_id or ID_SPACE_RE.match(target) else None
        return res.target if res is not None and res.ok else None
    res = tl.index.resolve(f"[[{target}]]")
    if res.ok and tl.by_id[res.target].kind == "log":  # type: ignore[index]
        return res.target
    page, anchor = link_parts(target)
    # Obsidian's own link completion writes `16 00` for a `16:00` heading.
    want = " ".join(anchor.replace(":", " ").lower().split())
    day = tl.index.by_date.get(page, [])
    found = [e for e in day if " ".join(e.heading.replace(":", " ").lower().split()) == want]
    return found[0].id if len(found) == 1 else None


def curated_sources(tl: Timeline, doc: MemoryDoc) -> dict[str, str]:
    out: dict[str, str] = {}
    for bullet in doc.bullets:
        for target, alias, is_link in bullet.refs:
            eid = resolve_source(tl, target, alias, is_link)
            if eid is not None:
                out.setdefault(eid, bullet.id)
    return out
