"""A file's front matter: the leading `---` YAML block, and the defaults it sets for the
file's entries (tags, source, scope, confidence, importance)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from memvault.entries.model import Problem
from memvault.entries.values import SCORES, split_tags


def frontmatter_end(lines: list[str]) -> int | None:
    """Index of the line closing a leading `---` block; None without a closed block."""
    if not lines or lines[0].rstrip() != "---":
        return None
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            return end
    return None


def read_frontmatter(
    lines: list[str], path: str, problems: list[Problem]
) -> tuple[dict[str, Any], int]:
    """Parse a leading `---` block; return (data, index of the first body line)."""
    end = frontmatter_end(lines)
    if end is None:
        if lines and lines[0].rstrip() == "---":
            problems.append(Problem(path, 1, "frontmatter block is not closed with '---'", code="MV101"))
        return {}, 0
    block = "\n".join(lines[1:end])
    if not block.strip():
        return {}, end + 1
    from memvault.entries.yamlsafe import (  # lazily: yaml costs start-up time
        FrontmatterError,
        load_frontmatter,
    )

    try:
        data = load_frontmatter(block)
    except FrontmatterError as exc:
        problems.append(Problem(path, exc.line + 2, f"frontmatter {exc.reason}", code="MV101"))
        return {}, end + 1
    if not isinstance(data, dict):
        problems.append(Problem(path, 1, "frontmatter must be a mapping of keys to values", code="MV101"))
        return {}, end + 1
    return {str(k).lower(): _plain(v) for k, v in data.items()}, end + 1


def _plain(value: Any) -> Any:
    """YAML turns `2026-02-21` into a date: give back ISO strings so data stays JSON-able."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if value is None or isinstance(value, str | int | float) else str(value)  # !!binary, !!set


def file_defaults(fm: dict[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    """What the front matter sets for every entry of the file; bad scores are problems (line 1)."""
    out: dict[str, Any] = {}
    if "tags" in fm:
        out["tags"] = split_tags(fm["tags"])
    for key in ("source", "scope"):
        if fm.get(key) not in (None, ""):
            out[key] = str(fm[key])
    for key, score in SCORES.items():
        if key in fm:
            number = score.read(str(fm[key]))
            if number is None:
                problems.append(Problem(path, 1, f"frontmatter {score.problem(key, fm[key])}", code=score.code))
            else:
                out[key] = number
    return out
