"""`memvault check --fix`: the mechanical repairs, and only those.

A fix changes whitespace, the title line, or the order of whole entries within a daily log;
never a word of content. Every fixed text is verified before it is written: it must hold
the same non-blank lines as before once whitespace is ignored (the title line aside), or the
file is left untouched. What a merge left is repaired first (check/leftovers.py): conflict
markers resolved as git's union would (verified: the lines but the markers and a diff3 base
part), then a section said twice dropped (verified: every line still there); neither, nor the
time order, may make an id name another entry. Writes go through `fsio.rewrite` under the vault's
write lock, so neither a concurrent `memvault log` nor an editor's save is lost or half-read.
Line endings and a BOM are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from memvault.check.hidden import fix_invisible
from memvault.check.leftovers import (
    MEMORY_HELD,
    lost_nothing,
    moved_id,
    repair_repeats,
    reparsed,
    unite,
    united_as_git_would,
)
from memvault.check.registry import RULES
from memvault.check.rules import minute
from memvault.check.sourcefile import (
    LOOSE_HEADING_RE,
    SourceFile,
    canonical_heading,
    load_source,
    trailing_ws_lines,
)
from memvault.config.core import Config
from memvault.entries.blocks import markers
from memvault.entries.headings import repair_attempt
from memvault.entries.markdown import H2_RE, TITLE_RE
from memvault.entries.model import Problem
from memvault.entries.naming import log_name
from memvault.errors import WriteConflict
from memvault.fsio import locked, rewrite
from memvault.layout import MEMORY_FILE, iter_markdown, problem_at
from memvault.parsed import ParsedVault
from memvault.textsafety import clean_invisible

Fixer = Callable[[SourceFile], tuple[list[str], list[str]] | None]


def _reparse(src: SourceFile, lines: list[str], config: Config) -> SourceFile:
    return reparsed(src, "\n".join(lines), config)


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


def attempt_repairs(src: SourceFile, types: tuple[str, ...],
                    referenced: frozenset[str] = frozenset()) -> dict[int, tuple[str | None, str]]:
    """For each MV003 heading of a dated log (by 0-based line): the line `--fix` writes in its
    place and "", or None and why it is left (`entries.headings.repair_attempt`). A repair that
    would move a reference is left too: one that renumbers an entry below it in the same minute
    (its `-2` id), or one whose note (its section, until repaired) is in `referenced`, the ids
    that a Supersedes, Reconfirms or a curated bullet's sources resolve to."""
    if not src.is_log or src.parsed.date is None:
        return {}
    out: dict[int, tuple[str | None, str]] = {}
    for p in src.parsed.problems:
        i = p.line - 1
        if p.code != "MV003" or not 0 <= i < len(src.lines) or src.in_fence[i]:
            continue
        m = H2_RE.match(src.lines[i])
        if m is None:
            continue
        heading, why = repair_attempt(m[1], types)
        if heading is not None:
            clock = heading[:5]
            below = [e for e in src.parsed.events if e.line > p.line and not e.is_note and e.timestamp is not None
                     and f"{e.timestamp:%H:%M}" == clock]
            note = next((e.id for e in src.parsed.events if e.line == p.line), None)
            if below:
                heading, why = None, (f"the entry at {clock} on line {below[0].line} would be renumbered "
                                      "(its id, and what refers to it, would move); fix this heading by hand")
            elif note in referenced:
                heading, why = None, (f"its section is referred to as the note {note}, and the repair would "
                                      "change that id; fix the heading and the reference by hand")
        out[i] = (f"## {heading}" if heading is not None else None, why)
    return out


def fix_attempts(src: SourceFile, types: tuple[str, ...],
                 referenced: frozenset[str] = frozenset()) -> tuple[list[str], list[str]] | None:
    """MV003: an attempt at an entry heading that plainly means one (`## 10:00 Decision`,
    `## 9:05 decision`) becomes `## HH:MM - Type`; the rest of the heading is kept."""
    repairs = {i: line for i, (line, _) in attempt_repairs(src, types, referenced).items() if line is not None}
    if not repairs:
        return None
    return [repairs.get(i, line) for i, line in enumerate(src.lines)], ["MV003"]


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
    keep their order and their `-2`, `-3` ids. (A note moves with the entry above it, so two
    notes under one heading may swap, and with them their `~2` ids: `repair_order` holds that.)
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


def repair_order(src: SourceFile, config: Config, referenced: frozenset[str]) -> SourceFile | str | None:
    """The file with its entries in time order; why not (a str: an id would move); None when in order."""
    result = fix_order(src)
    if result is None:
        return None
    after = _reparse(src, result[0], config)
    return moved_id(src, after, referenced) or after


# fix_invisible first: a heading it uncovers may need the others (spacing, order); an attempt
# repaired into an entry heading may need a blank line above it or its place in time order
# (`fix_source` puts the entries in order after these).
def fixers(config: Config, referenced: frozenset[str] = frozenset()) -> tuple[Fixer, ...]:
    return (fix_invisible, fix_whitespace, partial(fix_attempts, types=config.types, referenced=referenced),
            fix_headings, fix_title)


def signature(text: str) -> Counter[str]:
    """What a fix must not change: every non-blank line, whitespace and invisible characters
    removed (MV017 removes those), title lines aside; of a `##` heading, its letters and digits
    without case or a time's leading zero (MV003's repair adds a dash, a zero, a capital)."""
    return Counter(
        _line_key(clean_invisible(line)) for line in text.split("\n")
        if line.strip() and not (TITLE_RE.match(line) and not line.startswith("##"))
    )


def _line_key(line: str) -> str:
    if not line.lstrip().startswith("##"):
        return "".join(line.split())
    key = "".join(c for c in line.lower() if c.isalnum())
    return key[1:] if key[:1] == "0" else key


def fix_source(src: SourceFile, config: Config, referenced: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    """The repaired text of one file and the codes repaired (empty when nothing to do);
    `referenced`: the ids a repair must not change (`referenced_ids`)."""
    if any(p.code in ("MV100", "MV102") for p in src.parsed.problems):
        return src.text, []  # unreadable or not valid UTF-8: writing it back would change bytes
    codes: list[str] = []
    current = src
    united = unite(src)  # conflict markers first: the other repairs read the file as git's union leaves it
    if united is not None:
        _verified(src, united_as_git_would(src.text, united))
        current = reparsed(src, united, config)
        codes.append("MV020")
    before = current.text
    for fixer in fixers(config, referenced):
        result = fixer(current)
        if result is not None:
            lines, done = result
            current = _reparse(current, lines, config)
            codes.extend(done)
    _verified(src, signature(current.text) == signature(before))
    for code, repair in (("MV021", repair_repeats), ("MV015", repair_order)):
        repaired = repair(current, config, referenced)
        if isinstance(repaired, SourceFile):
            _verified(src, lost_nothing(current.text, repaired.text) and
                      (code == "MV021" or signature(repaired.text) == signature(current.text)))
            current = repaired
            codes.append(code)
    if not codes or current.text == src.text:
        return src.text, []
    return current.text, sorted(set(codes))


def held(src: SourceFile, config: Config, referenced: frozenset[str] = frozenset()) -> dict[str, str]:
    """{code: why --fix leaves it in this file} for the merge leftovers (MV015, MV020, MV021)."""
    out: dict[str, str] = {}
    found = markers(src.text)
    if src.path == MEMORY_FILE and (found.conflicts or found.stray):
        out["MV020"] = MEMORY_HELD
    elif not found.whole:
        out["MV020"] = (f"left in {src.path}: a marker has no pair, so which side is which would be a guess; "
                        "resolve it by hand")
    for code, repair in (("MV021", repair_repeats), ("MV015", repair_order)):
        why = repair(src, config, referenced)
        if isinstance(why, str):
            out[code] = f"left in {src.path}: {why}"
    return out


def _verified(src: SourceFile, ok: bool) -> None:
    if not ok:  # pragma: no cover - a bug in a fixer
        raise AssertionError(f"{src.path}: a fix would change content; nothing written (please report this)")


def encode(src: SourceFile, text: str) -> bytes:
    if src.crlf:
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if src.bom else b"") + text.encode("utf-8")


def referenced_ids(vault: ParsedVault) -> frozenset[str]:
    """The ids some reference resolves to: superseded, reconfirmed or cited by a curated bullet."""
    tl = vault.timeline
    cited = {eid for ev in tl.events if ev.kind == "curated" and ev.sources for eid in tl.source_ids(ev)}
    linked = [k for edges in (tl.superseded_by, tl.reconfirmed_by) for k, v in edges.items() if v]
    return frozenset(linked) | cited


def fix_vault(vault: ParsedVault, paths: Sequence[str] = ()) -> dict[str, list[str]]:
    """Repair the named vault files (default: all) in place; returns {path: codes fixed}."""
    fixed: dict[str, list[str]] = {}
    referenced = referenced_ids(vault)
    for rel in paths or list(iter_markdown(vault.root, selection=vault.selection)):
        if problem_at(vault.root, rel) is not None:
            continue  # a link or not a file: never read or written (layout.py); check reports it
        codes = _fix_file(vault, rel, vault.root / rel, referenced)
        if codes:
            fixed[rel] = codes
    return fixed


HELD_CODES = ("MV015", "MV020", "MV021")  # left by a repair held back in one file, with its reason (`held`)
NOT_LAYOUT = ("not a layout problem: --fix changes only titles, whitespace, heading form and entry order, and "
              "what a merge left (conflict markers, a section twice), never what an entry says, refers to or when "
              "it happened")


def left_by_fix(vault: ParsedVault, problems: Sequence[Problem]) -> list[dict[str, object]]:
    """What `check --fix` leaves and why: each MV003 heading with the reason it was not repaired;
    every other code once, with its count and why --fix does not touch it."""
    out: list[dict[str, object]] = []
    reasons: dict[str, dict[int, tuple[str | None, str]]] = {}
    # a file fix_source will not write back: its fixable problems are left for that reason, per file
    unwritable = {p.path: p for p in problems if p.code in ("MV100", "MV102")}
    blocked: Counter[tuple[str, str]] = Counter(
        (p.path, p.code) for p in problems if p.path in unwritable and p.code in RULES and RULES[p.code].fixable)
    for (path, code), n in sorted(blocked.items()):
        out.append({"path": path, "line": unwritable[path].line, "code": code, "count": n,
                    "why": _unwritable_why(unwritable[path])})
    merged = _held_on_disk(vault, problems, blocked)
    for (path, code), (line, n, why) in sorted(merged.items()):
        out.append({"path": path, "line": line, "code": code, "count": n, "why": why})
    counts: Counter[str] = Counter(p.code for p in problems if p.code != "MV003" and (p.path, p.code) not in blocked
                                   and (p.path, p.code) not in merged)
    for p in problems:
        if p.code == "MV003" and (p.path, p.code) not in blocked:
            if p.path not in reasons:
                reasons[p.path] = _attempts_on_disk(vault, p.path)
            why = reasons[p.path].get(p.line - 1, (None, "it is not in a dated daily log; --fix does not guess a day"))[1]
            out.append({"path": p.path, "line": p.line, "code": p.code, "count": 1, "why": why})
    for code, n in sorted(counts.items()):
        fixable = code in RULES and RULES[code].fixable
        out.append({"path": None, "line": None, "code": code, "count": n,
                    "why": "could not be repaired without changing content" if fixable else NOT_LAYOUT})
    return out


def _held_on_disk(vault: ParsedVault, problems: Sequence[Problem],
                  blocked: Counter[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int, str]]:
    """{(path, code): (first line, count, why)} for the merge leftovers a file's repair holds back."""
    found: dict[tuple[str, str], tuple[int, int]] = {}
    for p in problems:
        if p.code in HELD_CODES and (p.path, p.code) not in blocked:
            line, n = found.get((p.path, p.code), (p.line, 0))
            found[(p.path, p.code)] = (line, n + 1)
    reasons: dict[str, dict[str, str]] = {}
    out: dict[tuple[str, str], tuple[int, int, str]] = {}
    for (path, code), (line, n) in found.items():
        if path not in reasons:
            src = _on_disk(vault, path)
            reasons[path] = held(src, vault.config, referenced_ids(vault)) if src is not None else {}
        if code in reasons[path]:
            out[(path, code)] = (line, n, reasons[path][code])
    return out


def _on_disk(vault: ParsedVault, rel: str) -> SourceFile | None:
    if problem_at(vault.root, rel) is not None:
        return None
    try:
        raw = (vault.root / rel).read_bytes()
    except OSError:
        return None
    return load_source(rel, raw, vault.config, vault.dates.of(rel))


def _unwritable_why(p: Problem) -> str:
    if p.code == "MV102":
        return (f"{p.path} has bytes that are not UTF-8 at line {p.line}; --fix never rewrites such a file "
                "(writing it back would change those bytes): fix them by hand, then run --fix again")
    return f"{p.path} could not be read ({p.message}); --fix leaves it alone"


def _attempts_on_disk(vault: ParsedVault, rel: str) -> dict[int, tuple[str | None, str]]:
    src = _on_disk(vault, rel)
    return {} if src is None else attempt_repairs(src, vault.config.types, referenced_ids(vault))


def _fix_file(vault: ParsedVault, rel: str, full: Path, referenced: frozenset[str]) -> list[str]:
    done: list[str] = []

    def repair(raw: bytes | None) -> bytes | None:
        if raw is None:
            return None
        src = load_source(rel, raw, vault.config, vault.dates.of(rel))
        text, codes = fix_source(src, vault.config, referenced)
        done[:] = codes
        return encode(src, text) if codes else None

    with locked(vault.lock_path, what=rel, file=rel):
        try:
            written = rewrite(full, repair, attempts=5, what=rel)
        except WriteConflict as exc:
            if exc.kept is not None:
                raise
            return []  # a file that keeps changing is left alone (check reports what it finds)
    return done if written is not None else []
