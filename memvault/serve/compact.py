"""Compact shapes of the library's answers, for a model's context window.

A model needs what an entry says, where it is (`file#Lx-Ly`, which `get` takes back), its id
(which `history`, `get` and `supersedes` take) and whether it still holds; not the score's
parts or the empty fields. Pure functions over the dicts the library returns.
"""

from __future__ import annotations

from typing import Any

MAX_TEXT = 600  # characters of an entry's text in a list; `get` gives the whole entry


def cite(d: dict[str, Any]) -> str:
    return d.get("location") or f"{d['file']}#L{d['line']}-L{d['end_line']}"


def _short(text: str, width: int = MAX_TEXT) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 1].rstrip() + "\u2026"


def entry(d: dict[str, Any], *, width: int | None = MAX_TEXT) -> dict[str, Any]:
    """An entry as `show`/`list`/`asof` give it: id, cite, type, time, text, and only the
    metadata that is set (status when not live, tags, supersession, source, confidence < 1)."""
    out: dict[str, Any] = {"id": d["id"], "cite": cite(d), "type": d["type"]}
    if d.get("timestamp"):
        out["time"] = d["timestamp"][:16]
    if d.get("path"):  # a note: the headings it is under
        out["under"] = " \u203a ".join(d["path"])
    text = d.get("content") or d.get("title") or ""
    out["text"] = _short(text, width) if width else text
    if d.get("status", "live") != "live":
        out["status"] = d["status"]
    for key in ("superseded_by", "supersedes", "source", "scope", "expires"):
        if d.get(key):
            out[key] = d[key]
    if d.get("tags"):
        out["tags"] = list(d["tags"])
    if d.get("confidence") is not None and d["confidence"] < 0.995:
        out["confidence"] = round(d["confidence"], 2)
    if d.get("matched") is False:
        out["found_through_nearby"] = True
    return out


def hit(d: dict[str, Any]) -> dict[str, Any]:
    return entry(d) | {"score": round(d["score"], 3)}


def changes(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"since": d["since"].get("given"), "until": (d.get("until") or {}).get("given") or "now"}
    for key in ("new", "superseded", "revived", "backfilled", "deleted"):
        if d.get(key):
            out[key] = [entry(x, width=240) for x in d[key]]
    if d.get("edited"):
        out["edited"] = [{"id": x["id"], "cite": cite(x) if x.get("file") else None,
                          "was": _short(x["old"].get("content", ""), 240) if isinstance(x.get("old"), dict) else None,
                          "now": _short(x["new"].get("content", ""), 240) if isinstance(x.get("new"), dict) else None}
                         for x in d["edited"]]
    for key in ("more", "warnings"):
        if d.get(key):
            out[key] = d[key]
    return out


def history(d: dict[str, Any]) -> dict[str, Any]:
    out = {"id": d["id"], "status": d["status"], "superseded_by": d["superseded_by"],
           "chain": [entry(x, width=240) for x in d["chain"]],
           "commits": [{k: c[k] for k in ("commit", "date", "subject", "change") if k in c} for c in d["commits"]]}
    if d.get("warnings"):
        out["warnings"] = d["warnings"]
    return out


def plan(d: dict[str, Any]) -> dict[str, Any]:
    """`curate --dry-run`'s plan: the proposals, the budget and the diff MEMORY.md would get."""
    return {"proposals": d["proposals"], "archives": d["archives"], "budget": d["budget"],
            "warnings": d["warnings"], "diff": d.get("diff", ""), "applied": False}
