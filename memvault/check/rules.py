"""Validation rules: pure functions from parsed files (and their timeline) to Problems.

Every rule has a stable code, listed in `RULES` and documented in `docs/checks.md`. The
parser already reports what it meets while parsing (MV001-MV005, MV101-MV103, MV2xx,
MV301); the rules here add what needs the raw lines, the whole file, or other files.
`run_rules` is the thin runner: per-file rules over `files`, cross-file rules over
`files + context`, then drops disabled codes and problems outside `focus`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from memvault.check.secrets.check import secret_problems
from memvault.config.core import Config
from memvault.entries.model import Event, Problem, Severity
from memvault.entries.parse import (
    BULLET_RE,
    FENCE_RE,
    H2_RE,
    META_KEYS,
    META_RE,
    TITLE_RE,
    ParsedFile,
    log_date,
)
from memvault.entries.timeline import Timeline
from memvault.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: Severity
    title: str
    fixable: bool = False


RULES: dict[str, Rule] = {r.code: r for r in (
    Rule("MV001", "error", "daily log file name is not a real date"),
    Rule("MV002", "warning", "title does not match the file's date", True),
    Rule("MV003", "error", "malformed entry heading"),
    Rule("MV004", "error", "invalid time in an entry heading"),
    Rule("MV005", "error", "unknown entry type"),
    Rule("MV006", "error", "two daily logs for the same date"),
    Rule("MV007", "warning", "daily log has no '# YYYY-MM-DD' title", True),
    Rule("MV008", "warning", "entry heading spacing", True),
    Rule("MV009", "warning", "no blank line before an entry heading", True),
    Rule("MV010", "error", "duplicate id"),
    Rule("MV011", "error", "Supersedes does not resolve or is ambiguous"),
    Rule("MV012", "error", "Reconfirms does not resolve or is ambiguous"),
    Rule("MV013", "error", "supersession cycle or self-supersession"),
    Rule("MV014", "warning", "entry supersedes a later entry"),
    Rule("MV015", "warning", "entries out of time order in a file", True),
    Rule("MV016", "warning", "timestamp in the future"),
    Rule("MV017", "error", "invisible characters in an entry heading, metadata key or Id", True),
    Rule("MV100", "error", "file or folder cannot be read"),
    Rule("MV101", "error", "frontmatter does not parse"),
    Rule("MV102", "warning", "invalid UTF-8"),
    Rule("MV103", "warning", "very large file"),
    Rule("MV104", "warning", "trailing whitespace", True),
    Rule("MV110", "error", "symbolic link in the vault (never followed)"),
    Rule("MV111", "error", "not a regular file (or not a folder) where the layout needs one"),
    Rule("MV202", "error", "Confidence is not a number between 0 and 1"),
    Rule("MV203", "error", "Importance is not high, medium, low or 0-1"),
    Rule("MV204", "error", "Expires is not an ISO date or date-time"),
    Rule("MV205", "error", "metadata line without a value"),
    Rule("MV206", "warning", "metadata key given twice in one entry"),
    Rule("MV207", "error", "Id contains spaces"),
    Rule("MV208", "warning", "entry expires before it was written"),
    Rule("MV209", "warning", "metadata line inside the entry body"),
    Rule("MV301", "error", "bad date in a MEMORY.md annotation"),
    Rule("MV302", "warning", "MEMORY.md text that is not a bullet"),
    Rule("MV303", "warning", "MEMORY.md bullet outside any section"),
    Rule("MV304", "warning", "MEMORY.md over its size budget"),
    Rule("MV305", "warning", "MEMORY.md section heading repeated"),
    Rule("MV306", "warning", "MEMORY.md has no '# ' title"),
    Rule("MV401", "error", "link to a daily log or entry does not resolve"),
    Rule("MV402", "warning", "link to an entry is ambiguous"),
    Rule("MV500", "info", "secret-scan finding on a line marked 'memvault: allow-secret'"),
    Rule("MV501", "error", "private key block"),
    Rule("MV502", "error", "cloud provider credential (AWS, Google Cloud, Azure)"),
    Rule("MV503", "error", "git hosting token (GitHub, GitLab, Bitbucket)"),
    Rule("MV504", "error", "API key of a hosted service"),
    Rule("MV505", "error", "bearer token, basic-auth header or JSON web token"),
    Rule("MV506", "error", "credentials in a URL"),
    Rule("MV507", "error", "credential assigned to a password/token/key name"),
    Rule("MV508", "error", "high-entropy string in an assignment"),
    Rule("MV509", "error", "password or token on a command line"),
    Rule("MV510", "error", "PIN or card security code"),
)}  # fmt: skip

CHECK_DEFAULTS: dict[str, Any] = {"disable": []}
FUTURE_SLACK = timedelta(minutes=5)
MEMORY_FILE = "MEMORY.md"
NEWLINE_RE = re.compile("\n")
TRAILING_WS_RE = re.compile(r"(?<![ \t])[ \t]+$", re.M)  # from a run's start only: linear, not quadratic
LOST_HEADING_RE = re.compile(r"\n(?: {1,3}##[ \t]*|##)\d{1,2}:\d{2}")  # a literal first char: fast scan
META_LINE_RE = re.compile(r"^(?:" + "|".join(META_KEYS) + r")[ \t]*:", re.M | re.I)

# `## HH:MM - Type` written loosely: indented, no space after ##, odd spacing round the dash.
LOOSE_HEADING_RE = re.compile(
    r"^(?P<indent>[ ]{0,3})##(?P<gap>[ \t]*)(?P<clock>\d{1,2}:\d{2}(?::\d{2})?)"
    r"(?P<sep>[ \t]*[-\u2013\u2014][ \t]*)(?P<type>[A-Za-z][\w-]*)(?P<rest>.*)$"
)


def disabled_codes(config: Config) -> frozenset[str]:
    """`[checks] disable = [...]` from memvault.toml; unknown codes are a config error."""
    raw = config.section("checks", CHECK_DEFAULTS).get("disable", [])
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise ConfigError(f"{config.path or 'memvault.toml'}: [checks] disable must be a list of codes like \"MV014\"")
    codes = {c.strip().upper() for c in raw}
    unknown = sorted(codes - RULES.keys())
    if unknown:
        raise ConfigError(
            f"{config.path or 'memvault.toml'}: [checks] disable names unknown code(s) {', '.join(unknown)}; "
            "see `memvault check --list-rules`"
        )
    return frozenset(codes)


def memory_budget(config: Config) -> tuple[int, int]:
    """(chars, lines) from `[curate]`, as curate reads and checks them; 0 means no limit."""
    from memvault.config.curate import Settings

    settings = Settings.from_config(config)
    return settings.budget_chars, settings.budget_lines


# ------------------------------------------------------------------------------- inputs


@dataclass
class SourceFile:
    """One vault file as checked: its text (LF, no BOM), how it was stored, and its parse."""

    path: str
    text: str
    parsed: ParsedFile
    crlf: bool = False
    bom: bool = False

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def body_start(self) -> int:
        """Index of the first line after a closed frontmatter block (0 without one)."""
        lines = self.lines
        if not lines or lines[0].rstrip() != "---":
            return 0
        for end in range(1, len(lines)):
            if lines[end].rstrip() in ("---", "..."):
                return end + 1
        return 0

    @cached_property
    def in_fence(self) -> list[bool]:
        return fence_mask(self.lines, self.body_start)

    @cached_property
    def _starts(self) -> list[int]:
        return [0] + [m.end() for m in NEWLINE_RE.finditer(self.text)]

    def line_index(self, offset: int) -> int:
        """0-based line of a character offset."""
        return bisect_right(self._starts, offset) - 1

    @property
    def is_log(self) -> bool:
        return self.parsed.kind == "log"


def fence_mask(lines: list[str], start: int = 0) -> list[bool]:
    """True for lines inside a fenced code block, the fences included."""
    mask = [False] * len(lines)
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = FENCE_RE.match(line) if line[:1] in ("`", "~", " ", "\t") else None
        if fence is None:
            if m:
                fence, mask[i] = m.group(1), True
            continue
        mask[i] = True
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
            fence = None
    return mask


def _p(path: str, line: int, code: str, message: str, col: int = 1, severity: Severity | None = None) -> Problem:
    return Problem(path, line, message, severity or RULES[code].severity, code, col)


# ------------------------------------------------------------------------ per-file rules


def rule_title(src: SourceFile) -> Iterator[Problem]:
    """MV007: a daily log starts with `# YYYY-MM-DD` (MV002, a wrong date, comes from the parser)."""
    day = src.parsed.date
    if src.is_log and day is not None and src.parsed.title is None:
        yield _p(src.path, src.body_start + 1, "MV007", f"daily log has no title; the first line should be '# {day.isoformat()}'")


def rule_headings(src: SourceFile) -> Iterator[Problem]:
    """MV008: `## HH:MM - Type` spacing; MV009: a blank line before each entry heading."""
    if not src.is_log or src.parsed.date is None:
        return
    lines = src.lines
    for ev in src.parsed.events:  # headings the parser read: spacing and the blank line above
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


def canonical_heading(m: re.Match[str]) -> str:
    dash = m["sep"].strip(" \t") or "-"
    return f"## {m['clock']} {dash} {m['type']}{m['rest'].rstrip()}"


def is_hard_break(line: str, following: str | None) -> bool:
    """Two or more trailing spaces before a text line are a Markdown line break: content."""
    return (
        line.endswith("  ") and line.rstrip(" ") == line.rstrip() and bool(line.strip())
        and not line.lstrip().startswith("#") and following is not None and bool(following.strip())
        and not following.lstrip().startswith("#")  # a heading ends the paragraph: no break to keep
    )


def trailing_ws_lines(src: SourceFile) -> Iterator[int]:
    """Indexes of lines with trailing whitespace that is safe to remove (not code, not a hard break)."""
    lines, text = src.lines, src.text
    if " \n" not in text and "\t\n" not in text and not text.endswith((" ", "\t")):
        return
    for hit in TRAILING_WS_RE.finditer(text):
        i = src.line_index(hit.start())
        if i < src.body_start or src.in_fence[i]:
            continue
        if not is_hard_break(lines[i], lines[i + 1] if i + 1 < len(lines) else None):
            yield i


def rule_trailing_whitespace(src: SourceFile) -> Iterator[Problem]:
    """MV104."""
    for i in trailing_ws_lines(src):
        yield _p(src.path, i + 1, "MV104", "trailing whitespace", col=len(src.lines[i].rstrip()) + 1)


def minute(ev: Event) -> int:
    """Minutes since midnight: entries of one daily log share their date."""
    ts = ev.timestamp
    return ts.hour * 60 + ts.minute if ts is not None else -1


def rule_time_order(src: SourceFile) -> Iterator[Problem]:
    """MV015: entries in a daily log go in time order (to the minute: see docs/checks.md)."""
    latest: Event | None = None
    for ev in src.parsed.events:  # in file order
        if ev.timestamp is None:
            continue
        if latest is not None and minute(ev) < minute(latest):
            yield _p(src.path, ev.line, "MV015",
                     f"entry at {ev.timestamp:%H:%M} comes after the {latest.timestamp:%H:%M} entry "
                     f"(line {latest.line}); keep entries in time order")
        else:
            latest = ev


def rule_future(src: SourceFile, now: datetime) -> Iterator[Problem]:
    """MV016: an entry dated after now (more than a few minutes: clocks drift)."""
    for ev in src.parsed.events:
        if ev.timestamp is not None and ev.timestamp > now + FUTURE_SLACK:
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
    """MV208: Expires before the entry's own time; MV209: `Key: value` lines stranded in the body."""
    if not src.is_log:
        return
    lines = src.lines
    for ev in src.parsed.events:
        if ev.expires is not None and ev.timestamp is not None and ev.expires <= ev.timestamp:
            start = _entry_meta_start(src, ev)
            line = next((i + 1 for i in range(start, ev.end_line) if lines[i].lower().startswith("expires")), ev.line)
            yield _p(src.path, line, "MV208", f"Expires {ev.expires.isoformat()} is not after the entry's own time; it was never live")
        if ":" in ev.content and META_LINE_RE.search(ev.content):
            fence = src.in_fence
            for i in range(ev.line, _entry_meta_start(src, ev)):
                m = META_RE.match(lines[i]) if not fence[i] else None
                if m:
                    yield _p(src.path, i + 1, "MV209", f"'{m['key']}:' line inside the entry body is read as text, "
                             "not metadata; metadata lines go at the end of the entry")


def rule_memory_structure(src: SourceFile, budget: tuple[int, int]) -> Iterator[Problem]:
    """MV302-MV306: MEMORY.md is `# Title`, `## Section`s of bullets, within its size budget."""
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
    in_item = in_para = False
    title = False
    for i in range(src.body_start, len(lines)):
        line = lines[i]
        if fence[i]:
            if section is not None and not in_item and not in_para and FENCE_RE.match(line):
                yield _p(src.path, i + 1, "MV302", "code block in a section is not read as a memory entry; put it under a bullet")
                in_para = True
            continue
        if not line.strip():
            in_para = False
            continue
        if line.startswith("#"):
            in_item = in_para = False
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
        if bullet and not bullet["indent"]:
            in_item, in_para = True, False
            if section is None:
                yield _p(src.path, i + 1, "MV303", "bullet before the first '## Section' heading; put it under a section")
            continue
        if in_item and (line[:1] in (" ", "\t") or bullet):
            continue
        in_item = False
        if section is not None and not in_para and not line.lstrip().startswith("<!--"):
            yield _p(src.path, i + 1, "MV302", "text that is not a bullet is not read as a memory entry; "
                     "make it a '- ' bullet or indent it under one")
        in_para = True
    if not title:
        yield _p(src.path, 1, "MV306", "MEMORY.md has no '# ' title line (e.g. '# Long-Term Memory')")


def rule_secrets(src: SourceFile) -> Iterator[Problem]:
    """MV501-MV510: credentials; the message names the kind, never the value (MV500: allowed by a person)."""
    return secret_problems(src.path, src.text)


def file_problems(src: SourceFile, config: Config, now: datetime, budget: tuple[int, int]) -> list[Problem]:
    """Everything wrong inside one file on its own."""
    from memvault.check.hidden import rule_hidden  # it builds on this module

    out = list(src.parsed.problems)
    for rule in (rule_hidden, rule_title, rule_headings, rule_trailing_whitespace, rule_time_order, rule_metadata, rule_secrets):
        out.extend(rule(src))
    out.extend(rule_future(src, now))
    out.extend(rule_memory_structure(src, budget))
    return out


# ---------------------------------------------------------------------- cross-file rules


def by_stem(paths: Iterable[str]) -> dict[str, list[str]]:
    """File name without `.md` -> its paths: a daily log's stem is its date."""
    out: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        out[path.rsplit("/", 1)[-1][:-3]].append(path)
    return out


def duplicate_dates(stems: dict[str, list[str]]) -> list[Problem]:
    """MV006: every daily log that shares its date with another one (in another folder)."""
    out = []
    for day, group in stems.items():
        if len(group) < 2 or log_date(day + ".md") is None:
            continue
        for path in group:
            others = ", ".join(p for p in group if p != path)
            out.append(_p(path, 1, "MV006", f"another daily log for {day}: {others}; merge them into one file"))
    return out


def duplicate_ids(timeline: Timeline) -> list[Problem]:
    """MV010: every entry whose id another entry also has, pointing at the others."""
    groups: dict[str, list[Event]] = {}
    for dup in timeline.index.duplicates:
        groups.setdefault(dup.id, [timeline.by_id[dup.id]]).append(dup)
    out = []
    for eid, group in groups.items():
        for ev in group:
            others = ", ".join(f"{o.file}:{o.line}" for o in group if o is not ev)
            out.append(_p(ev.file, ev.line, "MV010", f"duplicate id '{eid}' (also {others})"))
    return out


def is_cycle_problem(p: Problem) -> bool:
    return p.code == "MV013" and "would make a cycle" in p.message


def cycle_problems(timeline: Timeline) -> list[Problem]:
    """MV013 on every entry of a supersession cycle, not only the one that closes it.

    The timeline refuses the link that would close a cycle and names that entry; a partial
    check may not be judging that file, so each member of the loop gets the report.
    """
    cycles = [p for p in timeline.problems if is_cycle_problem(p)]
    by_place = {(e.file, e.line): e for e in timeline.events} if cycles else {}
    out = []
    for prob in cycles:
        closer = by_place.get((prob.path, prob.line))
        if closer is None or not closer.supersedes:
            continue
        res = timeline.index.resolve(closer.supersedes, closer)
        loop, node = [closer.id], res.target
        while node is not None and node != closer.id and node not in loop:
            loop.append(node)
            node = timeline.supersedes.get(node)
        text = " -> ".join([*loop, closer.id])
        for eid in loop:
            ev = timeline.by_id[eid]
            out.append(_p(ev.file, ev.line, "MV013", f"'{eid}' is in a supersession cycle: {text}; "
                          f"the link from '{closer.id}' is ignored"))
    return out


def _aliases_name_an_entry(src: SourceFile | None, ev: Event, target: str, tl: Timeline) -> bool:
    """Every `[[target|alias]]` of `ev` has an entry id as its alias (curate writes these when a
    heading occurs twice in a day; the parser keeps only the target, memvault resolves the alias)."""
    if src is None:
        return False
    text = "\n".join(src.lines[ev.line - 1:ev.end_line])
    found = re.findall(r"\[\[" + re.escape(target) + r"(?:\|([^\[\]]*))?\]\]", text)
    return bool(found) and all(alias.strip() in tl.by_id for alias in found)


def _line_of(src: SourceFile | None, ev: Event, needle: str) -> tuple[int, int]:
    if src is not None:
        for i in range(ev.line - 1, min(ev.end_line, len(src.lines))):
            col = src.lines[i].find(needle)
            if col >= 0:
                return i + 1, col + 1
    return ev.line, 1


def link_problems(
    events: Iterable[Event], timeline: Timeline, log_dates: Container[str], sources: dict[str, SourceFile],
) -> list[Problem]:
    """MV401/MV402: `[[YYYY-MM-DD]]`, `[[YYYY-MM-DD#HH:MM - Type]]`, `[[...#^block]]`, `[[MEMORY#Section]]`.

    Links to other pages (ordinary Obsidian notes) are not memvault's to judge.
    """
    sections = {e.category.strip().lower() for e in timeline.events if e.file == MEMORY_FILE and e.category}
    out = []
    for ev in events:
        for target in dict.fromkeys((*ev.links, *ev.sources)):
            reason, code = _check_link(target, ev, timeline, log_dates, sections)
            if code == "MV402" and _aliases_name_an_entry(sources.get(ev.file), ev, target, timeline):
                continue
            if reason:
                line, col = _line_of(sources.get(ev.file), ev, target)
                out.append(_p(ev.file, line, code, f"link [[{target}]] {reason}", col=col))
    return out


def _check_link(
    target: str, ev: Event, tl: Timeline, log_dates: Container[str], sections: set[str],
) -> tuple[str, str]:
    page, _, anchor = target.partition("#")
    page, anchor = page.strip().rsplit("/", 1)[-1].removesuffix(".md"), anchor.strip()
    if not page:
        page = "MEMORY" if ev.file == MEMORY_FILE else ev.file.rsplit("/", 1)[-1].removesuffix(".md")
    if page == "MEMORY":
        if anchor.startswith("^"):
            found = [e for e in tl.index.by_block.get(anchor[1:], []) if e.file == MEMORY_FILE]
            return ("", "") if found else (f"does not resolve: no block {anchor} in MEMORY.md", "MV401")
        if anchor and anchor.lower() not in sections:
            return f"does not resolve: no section '## {anchor}' in MEMORY.md", "MV401"
        return "", ""
    if log_date(page + ".md") is None:
        return "", ""
    if page not in log_dates:
        return f"does not resolve: there is no daily log for {page}", "MV401"
    if not anchor:
        return "", ""
    res = tl.index.resolve(f"[[{page}#{anchor}]]")
    if res.ok:
        return "", ""
    if res.candidates:
        return f"is ambiguous; candidates: {', '.join(res.candidates)}; link to an id or a ^block instead", "MV402"
    return f"does not resolve: {res.reason or 'no such entry'}", "MV401"


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
    found.extend(duplicate_dates(stems))
    checked = [e for src in files for e in src.parsed.events]
    found.extend(link_problems(checked, timeline, stems, everything))
    keep = {src.path for src in files}
    return sorted(
        (p for p in found if p.code not in disabled and p.path in keep),
        key=lambda p: (p.path, p.line, p.col, p.code),
    )
