"""Validation rules: pure functions from parsed files (and their timeline) to Problems.

The parser already reports what it meets while parsing (MV001-MV005, MV101-MV103, MV2xx,
MV301); the per-file rules here add what needs the raw lines or the whole file, crossfile.py
what needs other files. `run_rules` is the thin runner: per-file rules over `files`,
cross-file rules over `files + context`, then drops disabled codes and problems outside `focus`.
The codes and their severities are in registry.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime

from memvault.check.crossfile import cycle_problems, duplicate_ids, is_cycle_problem, link_problems
from memvault.check.hidden import rule_hidden
from memvault.check.leftovers import rule_conflict_markers, rule_repeated_sections
from memvault.check.registry import disabled_codes, memory_budget
from memvault.check.registry import problem as _p
from memvault.check.secrets.check import secret_problems
from memvault.check.sourcefile import (
    LOOSE_HEADING_RE,
    SourceFile,
    canonical_heading,
    trailing_ws_lines,
)
from memvault.config.core import Config
from memvault.entries.daily import META_KEYS, META_RE
from memvault.entries.markdown import BULLET_RE, H2_RE, TITLE_RE
from memvault.entries.model import Event, Problem
from memvault.entries.naming import log_name
from memvault.entries.timeline import Timeline
from memvault.entries.timeparse import FUTURE_SLACK
from memvault.layout import MEMORY_FILE
from memvault.parsed import by_stem, duplicate_dates

LOST_HEADING_RE = re.compile(r"\n(?: {1,3}##[ \t]*|##)\d{1,2}:\d{2}")  # a literal first char: fast scan
REFERENCE_KEYS = ("supersedes", "reconfirms")
META_LINE_RE = re.compile(r"^(?:" + "|".join(META_KEYS) + r")[ \t]*:", re.M | re.I)


# ------------------------------------------------------------------------ per-file rules


def rule_title(src: SourceFile) -> Iterator[Problem]:
    """MV007: the day's own file starts with `# YYYY-MM-DD` (MV002, a wrong date, comes from the
    parser); a topic file, an archive or an undated note needs no title."""
    day = src.parsed.date
    if src.is_log and day is not None and src.parsed.title is None and log_name(src.path).canonical:
        yield _p(src.path, src.body_start + 1, "MV007", f"daily log has no title; the first line should be '# {day.isoformat()}'")


def rule_headings(src: SourceFile) -> Iterator[Problem]:
    """MV008: `## HH:MM - Type` spacing; MV009: a blank line before each entry heading."""
    if not src.is_log or src.parsed.date is None:
        return
    lines = src.lines
    for ev in src.parsed.events:  # headings the parser read: spacing and the blank line above
        if ev.is_note:
            continue
        i = ev.line - 1
        if not _tidy_heading(lines[i]):
            m = LOOSE_HEADING_RE.match(lines[i])
            if m and (m["gap"] != " " or m["sep"].strip(" ") != m["sep"][1:2] or len(m["sep"]) != 3):
                yield _p(src.path, i + 1, "MV008", f"entry heading spacing: write '{canonical_heading(m)}'")
        if i > src.body_start and lines[i - 1].strip():
            yield _p(src.path, i + 1, "MV009", "no blank line before the entry heading")
    text = src.text
    starts = [0] if text.startswith((" ", "##")) else []
    # headings the parser could not read: `##09:00 - ...` or indented `  ## 09:00 - ...`
    for hit in LOST_HEADING_RE.finditer(text) if "\n##" in text or "\n " in text else ():
        starts.append(hit.start() + 1)
    for start in starts:
        i = src.line_index(start)
        m = LOOSE_HEADING_RE.match(lines[i])
        if m and (m["indent"] or not m["gap"]) and i >= src.body_start and not src.in_fence[i]:
            what = "is indented" if m["indent"] else "has no space after '##'"
            yield _p(src.path, i + 1, "MV008", f"'{lines[i].strip()}' {what}, so it is not read as an entry heading "
                     "(its text joins the entry above); write '## HH:MM - Type'", severity="error")
            if i > src.body_start and lines[i - 1].strip():
                yield _p(src.path, i + 1, "MV009", "no blank line before the entry heading")


def _tidy_heading(line: str) -> bool:
    """Fast path for the common case: `## HH:MM - Type` already spaced right (no regex)."""
    k = line.find(" ", 3)
    return (
        line[2:3] == " " and line[3:4] not in (" ", "\t") and k > 3
        and line[k : k + 3] in (" - ", " \u2013 ", " \u2014 ") and line[k + 3 : k + 4] not in (" ", "\t", "")
    )


def rule_trailing_whitespace(src: SourceFile) -> Iterator[Problem]:
    """MV104."""
    for i in trailing_ws_lines(src):
        yield _p(src.path, i + 1, "MV104", "trailing whitespace", col=len(src.lines[i].rstrip()) + 1)


def minute(ev: Event) -> int:
    """Minutes since midnight: entries of one daily log share their date."""
    ts = ev.timestamp
    return ts.hour * 60 + ts.minute if ts is not None else -1


def rule_time_order(src: SourceFile) -> Iterator[Problem]:
    """MV015: entries in a daily log go in time order (to the minute: see docs/checks.md); notes
    are not judged (a section at 00:00 between timed entries is where its author put it)."""
    latest: Event | None = None
    for ev in src.parsed.events:  # in file order
        if ev.timestamp is None or ev.is_note:
            continue
        if latest is not None and minute(ev) < minute(latest):
            yield _p(src.path, ev.line, "MV015",
                     f"entry at {ev.timestamp:%H:%M} comes after the {latest.timestamp:%H:%M} entry "
                     f"(line {latest.line}); keep entries in time order")
        else:
            latest = ev


def rule_future(src: SourceFile, now: datetime) -> Iterator[Problem]:
    """MV016: an entry dated after now (more than a few minutes: clocks drift); a note takes the
    date of its file, which may be a plan for a later day."""
    for ev in src.parsed.events:
        if ev.timestamp is not None and ev.timestamp > now + FUTURE_SLACK and not ev.is_note:
            yield _p(src.path, ev.line, "MV016", f"'{ev.id}' is dated {ev.timestamp.isoformat()}, in the future")


def _entry_meta_start(src: SourceFile, ev: Event) -> int:
    """Index of the first line of the entry's trailing metadata block (end_line + 1 without one)."""
    lines, fence = src.lines, src.in_fence
    k = ev.end_line
    while k > ev.line:
        line = lines[k - 1]
        if line.strip() and (fence[k - 1] or not META_RE.match(line)):
            break
        k -= 1
    return k


def rule_metadata(src: SourceFile) -> Iterator[Problem]:
    """MV208: Expires before the entry's own time; MV209: `Key: value` lines stranded in the body;
    MV210: a stranded `Supersedes:`/`Reconfirms:` line, an error because the entry then silently
    stops superseding (the old belief is live again) or reconfirming."""
    if not src.is_log:
        return
    lines = src.lines
    for ev in src.parsed.events:
        if ev.expires is not None and ev.timestamp is not None and ev.expires <= ev.timestamp:
            start = _entry_meta_start(src, ev)
            line = next((i + 1 for i in range(start, ev.end_line) if lines[i].lower().startswith("expires")), ev.line)
            yield _p(src.path, line, "MV208", f"Expires {ev.expires.isoformat()} is not after the entry's own time; it was never live")
        if ":" in ev.content and not ev.is_note and META_LINE_RE.search(ev.content):  # prose in a note
            yield from _stranded_metadata(src, ev)
        if not ev.is_note and ev.forgotten is None:
            yield from _tombstone_as_text(src, ev)


TOMBSTONE_TEXT_RE = re.compile(r"^forgotten[ \t]*:[ \t]*(?P<value>\S.*)$", re.IGNORECASE)


def _tombstone_as_text(src: SourceFile, ev: Event) -> Iterator[Problem]:
    """MV222: the entry's last text line reads `Forgotten: <not a time>`. It stays text (prose such
    as "Forgotten: my keys" is allowed), but where metadata goes it was most likely meant as a
    tombstone, and the entry is still live: say so once."""
    end = _entry_meta_start(src, ev)
    last = next((i for i in range(end - 1, ev.line - 1, -1) if src.lines[i].strip()), None)
    if last is None or src.in_fence[last]:
        return
    m = TOMBSTONE_TEXT_RE.match(src.lines[last].strip())
    if m:
        yield _p(src.path, last + 1, "MV222", f"'Forgotten: {_shown(m['value'], 30)[1:-1]}' is read as text, not a "
                 "tombstone (a tombstone starts with its time), so the entry is still live; to forget it write "
                 "'Forgotten: 2026-12-02, reason', else ignore this")


def _stranded_metadata(src: SourceFile, ev: Event) -> Iterator[Problem]:
    lines, fence = src.lines, src.in_fence
    end = _entry_meta_start(src, ev)
    for i in range(ev.line, end):
        m = META_RE.match(lines[i]) if not fence[i] else None
        if not m:
            continue
        key = m["key"].lower()
        if key not in REFERENCE_KEYS:
            yield _p(src.path, i + 1, "MV209", f"'{m['key']}:' line inside the entry body is read as text, "
                     "not metadata; metadata lines go at the end of the entry")
            continue
        # The line that ends the metadata block early: the first one below that is not metadata.
        j = next(k for k in range(i + 1, end) if lines[k].strip() and (fence[k] or not META_RE.match(lines[k])))
        effect = "supersedes nothing, so the entry it names stays live" if key == "supersedes" else "reconfirms nothing"
        yield _p(src.path, i + 1, "MV210", f"'{m['key']}:' line is read as body text because line {j + 1} "
                 f"({_shown(lines[j])}) follows it: this entry {effect}; move line {j + 1} above the "
                 "metadata lines, give it its own heading, or remove it")


def _shown(line: str, width: int = 40) -> str:
    text = line.strip()
    return repr(text if len(text) <= width else text[: width - 1] + "\u2026")


def rule_memory_structure(src: SourceFile, budget: tuple[int, int]) -> Iterator[Problem]:
    """MV303-MV306: MEMORY.md is `# Title`, `## Section`s of bullets, within its size budget (its
    other text is read as notes: `memvault.entries.memory_notes`)."""
    if src.path != MEMORY_FILE:
        return
    chars, lines_used = len(src.text), len(src.text.splitlines())
    for used, limit, unit, key in ((chars, budget[0], "characters", "budget_chars"),
                                   (lines_used, budget[1], "lines", "budget_lines")):
        if limit and used > limit:
            yield _p(src.path, 1, "MV304", f"MEMORY.md is {used} {unit}, over its budget of {limit} "
                     f"([curate] {key} in memvault.toml); `memvault curate` proposes what to archive")
    lines, fence = src.lines, src.in_fence
    section: str | None = None
    seen: dict[str, int] = {}
    title = False
    for i in range(src.body_start, len(lines)):
        line = lines[i]
        if fence[i] or not line.strip():
            continue
        if line.startswith("#"):
            h2 = H2_RE.match(line)
            if h2:
                section = h2.group(1)
                key = section.strip().lower()
                if key in seen:
                    yield _p(src.path, i + 1, "MV305", f"section '## {section}' repeats the one on line {seen[key]}; merge them")
                seen.setdefault(key, i + 1)
            elif TITLE_RE.match(line):
                title = True
            continue
        bullet = BULLET_RE.match(line)
        if bullet and not bullet["indent"] and section is None:
            yield _p(src.path, i + 1, "MV303", "bullet before the first '## Section' heading; put it under a section")
    if not title:
        yield _p(src.path, 1, "MV306", "MEMORY.md has no '# ' title line (e.g. '# Long-Term Memory')")


def rule_secrets(src: SourceFile) -> Iterator[Problem]:
    """MV501-MV511: credentials; the message names the kind, never the value (MV500: allowed by a person)."""
    return secret_problems(src.path, src.text)


def file_problems(src: SourceFile, config: Config, now: datetime, budget: tuple[int, int]) -> list[Problem]:
    """Everything wrong inside one file on its own."""
    out = list(src.parsed.problems)
    for rule in (rule_hidden, rule_title, rule_headings, rule_trailing_whitespace, rule_time_order, rule_metadata, rule_secrets,
                 rule_conflict_markers, rule_repeated_sections):
        out.extend(rule(src))
    out.extend(rule_future(src, now))
    out.extend(rule_memory_structure(src, budget))
    return out


# -------------------------------------------------------------------------------- runner


def run_rules(
    files: list[SourceFile],
    config: Config,
    *,
    now: datetime,
    all_paths: Iterable[str],
    context: Iterable[SourceFile] = (),
) -> list[Problem]:
    """Per-file rules over `files`; cross-file rules over `files` + `context`.

    `all_paths` lists every vault file (for duplicate dates and links to days). Only
    problems located in `files` are returned: `context` holds the other files a partial
    check loaded to resolve references, and they are not being judged.
    """
    disabled = disabled_codes(config)
    budget = memory_budget(config)
    found: list[Problem] = []
    for src in files:
        found.extend(file_problems(src, config, now, budget))
    everything = {src.path: src for src in (*context, *files)}
    timeline = Timeline([e for s in everything.values() for e in s.parsed.events], config)
    found.extend(duplicate_ids(timeline))
    found.extend(p for p in timeline.problems if p.code != "MV010" and not is_cycle_problem(p))
    found.extend(cycle_problems(timeline))
    stems = by_stem(all_paths)
    found.extend(duplicate_dates(all_paths))
    checked = [e for src in files for e in src.parsed.events]
    found.extend(link_problems(checked, timeline, stems, everything))
    keep = {src.path for src in files}
    return sorted(
        (p for p in found if p.code not in disabled and p.path in keep),
        key=lambda p: (p.path, p.line, p.col, p.code),
    )
