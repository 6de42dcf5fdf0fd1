"""What text each indexed field of an entry holds: title, body, tags, extra, and context.

The index (files.py) and the in-memory BM25 (bm25.py, history's postings) analyse the same
fields from here, so their scores agree.
"""

from __future__ import annotations

from memvault.entries.model import Event

FIELDS = ("title", "body", "tags", "extra", "context")


def field_texts(event: Event, context: str = "") -> tuple[str, str, str, str, str]:
    """The text of each indexed field (title, body, tags, extra, context), before analysis."""
    extra = " ".join(filter(None, (event.id, event.type, event.source or "", event.scope or "",
                                   " ".join(event.links), event.category or "")))
    return event.title, event.content, " ".join(event.tags), extra, context


def contexts(events: list[Event]) -> list[str]:
    """Per event of one daily log (in file order), the text of the entries beside it, and for
    a note the headings above its own.

    A log is written in sequence, so an entry's neighbours say what it is about ("Yes, last
    week!" answers the entry before it); a note's parent headings say so too (`Was passiert
    ist` above `Build Action`). Indexed as a low-weight field; curated bullets stand alone
    and get none.
    """
    out = []
    for i, ev in enumerate(events):
        if ev.kind != "log":
            out.append("")
            continue
        near = [events[j].content for j in (i - 1, i + 1) if 0 <= j < len(events) and events[j].kind == "log"]
        above = parent_headings(ev)
        out.append("\n".join([above, *near] if above else near))
    return out


def parent_headings(event: Event) -> str:
    """The headings above a note's own (its title), as text; "" for entries and top-level notes."""
    return " \u203a ".join(event.path[:-1]) if len(event.path) > 1 else ""


def contexts_by_position(events: list[Event]) -> list[str]:
    """`contexts` for events of any files, in the order given (neighbours by line within each file)."""
    by_file: dict[str, list[int]] = {}
    for i, ev in enumerate(events):
        by_file.setdefault(ev.file, []).append(i)
    out = [""] * len(events)
    for idxs in by_file.values():
        idxs.sort(key=lambda i: events[i].line)
        for i, ctx in zip(idxs, contexts([events[i] for i in idxs]), strict=True):
            out[i] = ctx
    return out
