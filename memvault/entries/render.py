"""Events back to Markdown: the inverse of `parse` for the entries memvault writes."""

from __future__ import annotations

from datetime import date, datetime

from memvault.entries.markdown import inline_tags
from memvault.entries.model import Event

CANONICAL_TYPES = {"observation": "Observation", "belief": "Belief", "decision": "Decision", "correction": "Correction"}
# Metadata kept only in `Event.meta` (raw values), written back as read: who wrote an entry and
# the request's own metadata (memorywire, docs/memorywire.md).
META_LABELS = {"agent-id": "Agent-Id", "user-id": "User-Id", "metadata": "Metadata"}
BLOCK_STARTS = ("-", "*", "+", ">", "|", "```", "~~~", "    ", "\t")


def type_label(etype: str) -> str:
    return CANONICAL_TYPES.get(etype.lower(), etype[:1].upper() + etype[1:])


def heading(event: Event) -> str:
    ts = event.timestamp
    assert ts is not None, "log entries always have a timestamp"
    clock = ts.strftime("%H:%M:%S") if ts.second else ts.strftime("%H:%M")
    title = f" - {event.title}" if event.title else ""
    return f"## {clock} - {type_label(event.type)}{title}"


def _number(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def metadata_lines(event: Event, *, with_id: bool) -> list[str]:
    lines: list[str] = []
    if with_id:
        lines.append(f"Id: {event.id}")
    if event.supersedes:
        lines.append(f"Supersedes: {event.supersedes}")
    lines.extend(f"Reconfirms: {ref}" for ref in event.reconfirms)
    if event.confidence0 != 1.0:
        lines.append(f"Confidence: {_number(event.confidence0)}")
    if event.importance is not None:
        lines.append(f"Importance: {_number(event.importance)}")
    inline = set(inline_tags(event.content))
    meta_tags = [t for t in event.tags if t not in inline]
    if meta_tags:
        lines.append(f"Tags: {', '.join(meta_tags)}")
    if event.source:
        lines.append(f"Source: {event.source}")
    if event.scope:
        lines.append(f"Scope: {event.scope}")
    if event.expires is not None:
        lines.append(f"Expires: {event.expires.isoformat()}")
    lines.extend(f"{label}: {event.meta[key]}" for key, label in META_LABELS.items() if event.meta.get(key))
    return lines


def render_entry(event: Event, *, with_id: bool | None = None) -> str:
    """One entry as Markdown, ending with a newline."""
    explicit = event.explicit_id if with_id is None else with_id
    meta = metadata_lines(event, with_id=explicit)
    body = event.content.rstrip("\n")
    parts = [heading(event)]
    if body:
        parts.append(body)
    if meta:
        last = body.split("\n")[-1] if body else ""
        # After a list, quote, table or code block a metadata line would join that block.
        if body and (last.startswith(BLOCK_STARTS) or last[:1].isdigit()):
            parts.append("")
        parts.extend(meta)
    return "\n".join(parts) + "\n"


def render_log(day: date, events: list[Event]) -> str:
    """A whole daily log: title, then the entries in the order given."""
    blocks = [f"# {day.isoformat()}\n"] + [render_entry(e) for e in events]
    return "\n".join(blocks)


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
