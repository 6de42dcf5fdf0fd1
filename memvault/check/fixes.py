"""`memvault check --fix`: the mechanical repairs, and only those.

A fix changes whitespace, the title line, or the order of whole entries within a daily log;
never a word of content. Every fixed text is verified before it is written: it must hold
the same non-blank lines as before once whitespace is ignored (the title line aside), or the
file is left untouched. Writes go through `fsio.rewrite` under the vault's write lock, so neither a
concurrent `memvault log` nor an editor's save is lost or half-read. Line endings and a BOM are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from memvault.check.hidden import fix_invisible
from memvault.check.rules import minute
from memvault.check.sourcefile import (
    LOOSE_HEADING_RE,
    SourceFile,
    canonical_heading,
    load_source,
    trailing_ws_lines,
)
from memvault.config.core import Config
from memvault.entries.markdown import TITLE_RE
from memvault.entries.naming import log_name
from memvault.errors import WriteConflict
from memvault.fsio import locked, rewrite
from memvault.layout import iter_markdown, problem_at
from memvault.parsed import ParsedVault, parse_text
from memvault.textsafety import clean_invisible

Fixer = Callable[[SourceFile], tuple[list[str], list[str]] | None]


def _reparse(src: SourceFile, lines: list[str], config: Config) -> SourceFile:
    text = "\n".join(lines)
    return SourceFile(src.path, text, parse_text(text, src.path, config, src.file_date), crlf=src.crlf, bom=src.bom,
                      file_date=src.file_date)


def fix_whitespace(src: SourceFile) -> tuple[list[str], list[str]] | None:
    """MV104: strip trailing whitespace (not in code blocks, not Markdown hard breaks)."""
    todo = list(trailing_ws_lines(src))
    if not todo:
        return None
    lines = list(src.lines)
    for i in todo:
        lines[i] = lines[i].rstrip()
    return lines, ["MV104"]


def fix_headings(src: SourceFile) -> tuple[list[str], list[str]] | None:
    """MV008: `## HH:MM - Type` spacing; MV009: a blank line before each entry heading."""
    if not src.is_log or src.parsed.date is None:
        return None
    out: list[str] = []
    codes: set[str] = set()
    for i, line in enumerate(src.lines):
        m = LOOSE_HEADING_RE.match(line) if i >= src.body_start and not src.in_fence[i] else None
        if m:
            fixed = canonical_heading(m)
            if fixed != line.rstrip():
                codes.add("MV008")
                line = fixed
            if i > src.body_start and out and out[-1].strip():
                codes.add("MV009")
                out.append("")
        out.append(line)
    return (out, sorted(codes)) if codes else None


def fix_title(src: SourceFile) -> tuple[list[str], list[str]] | None:
    """MV007: the day's own file gets a `# YYYY-MM-DD` title; MV002: a title that starts with
    another date starts with the file's (the rest of it, `- Config & Setup Session`, stays)."""
    day = src.parsed.date
    if not src.is_log or day is None:
        return None
    want = f"# {day.isoformat()}"
    lines = list(src.lines)
    if src.parsed.title is None:
        if not log_name(src.path).canonical:
            return None
        rest = lines[src.body_start :]
        while rest and not rest[0].strip():
            rest.pop(0)
        return lines[: src.body_start] + [want, ""] + rest, ["MV007"]
    if not any(p.code == "MV002" for p in src.parsed.problems):
        return None
    for i in range(src.body_start, len(lines)):
        if TITLE_RE.match(lines[i]) and not lines[i].startswith("##") and not src.in_fence[i]:
            title = TITLE_RE.match(lines[i])[1]  # type: ignore[index]
            lines[i] = want + title[10:]
            return lines, ["MV002"]
    return None


def fix_order(src: SourceFile) -> tuple[list[str], list[str]] | None:
    """MV015: sort the entries of a daily log by time, each moving with everything under it.

    Entries are compared to the minute and the sort is stable, so entries within one minute
    keep their order and their `-2`, `-3` ids.
    """
    events = sorted((e for e in src.parsed.events if e.timestamp is not None and not e.is_note), key=lambda e: e.line)
    keys = [minute(e) for e in events]
    if all(a <= b for a, b in zip(keys, keys[1:], strict=False)):
        return None
    lines = src.lines
    preamble = lines[: events[0].line - 1]
    while preamble and not preamble[-1].strip():
        preamble.pop()
    blocks = []
    for n, ev in enumerate(events):
        end = events[n + 1].line - 1 if n + 1 < len(events) else len(lines)
        block = lines[ev.line - 1 : end]
        while block and not block[-1].strip():
            block.pop()
        blocks.append((keys[n], n, block))
    blocks.sort(key=lambda b: (b[0], b[1]))
    out = preamble + [""] if preamble else []
    for _, _, block in blocks:
        out += block + [""]
    return out, ["MV015"]


# fix_invisible first: a heading it uncovers may need the others (spacing, order).
FIXERS: tuple[Fixer, ...] = (fix_invisible, fix_whitespace, fix_headings, fix_title, fix_order)


def signature(text: str) -> Counter[str]:
    """What a fix must not change: every non-blank line, whitespace and invisible characters
    removed (MV017 removes those), title lines aside."""
    return Counter(
        "".join(clean_invisible(line).split()) for line in text.split("\n")
        if line.strip() and not (TITLE_RE.match(line) and not line.startswith("##"))
    )


def fix_source(src: SourceFile, config: Config) -> tuple[str, list[str]]:
    """The repaired text of one file and the codes repaired (empty when nothing to do)."""
    if any(p.code in ("MV100", "MV102") for p in src.parsed.problems):
        return src.text, []  # unreadable or not valid UTF-8: writing it back would change bytes
    codes: list[str] = []
    current = src
    for fixer in FIXERS:
        result = fixer(current)
        if result is not None:
            lines, done = result
            current = _reparse(current, lines, config)
            codes.extend(done)
    if not codes or current.text == src.text:
        return src.text, []
    if signature(current.text) != signature(src.text):  # pragma: no cover - a bug in a fixer
        raise AssertionError(f"{src.path}: a fix would change content; nothing written (please report this)")
    return current.text, sorted(set(codes))


def encode(src: SourceFile, text: str) -> bytes:
    if src.crlf:
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if src.bom else b"") + text.encode("utf-8")


def fix_vault(vault: ParsedVault, paths: Sequence[str] = ()) -> dict[str, list[str]]:
    """Repair the named vault files (default: all) in place; returns {path: codes fixed}."""
    fixed: dict[str, list[str]] = {}
    for rel in paths or list(iter_markdown(vault.root, selection=vault.selection)):
        if problem_at(vault.root, rel) is not None:
            continue  # a link or not a file: never read or written (layout.py); check reports it
        codes = _fix_file(vault, rel, vault.root / rel)
        if codes:
            fixed[rel] = codes
    return fixed


def _fix_file(vault: ParsedVault, rel: str, full: Path) -> list[str]:
    done: list[str] = []

    def repair(raw: bytes | None) -> bytes | None:
        if raw is None:
            return None
        src = load_source(rel, raw, vault.config, vault.dates.of(rel))
        text, codes = fix_source(src, vault.config)
        done[:] = codes
        return encode(src, text) if codes else None

    with locked(vault.lock_path, what=rel):
        try:
            written = rewrite(full, repair, attempts=5, what=rel)
        except WriteConflict as exc:
            if exc.kept is not None:
                raise
            return []  # a file that keeps changing is left alone (check reports what it finds)
    return done if written is not None else []
