"""Cross-file rules: what one file's entries mean together with the others'.

Duplicate ids (MV010), supersession cycles (MV013, on every member) and links that do not
resolve (MV401/MV402). Duplicate dates (MV006) are judged from file names alone, in
`memvault.parsed`, where `Vault.problems` finds them too.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable

from memvault.check.registry import problem as _p
from memvault.check.sourcefile import SourceFile
from memvault.entries.daily import log_date
from memvault.entries.markdown import link_parts, page_of
from memvault.entries.model import Event, Problem
from memvault.entries.timeline import Timeline
from memvault.layout import MEMORY_FILE


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
    page, anchor = link_parts(target)
    if not page:
        page = "MEMORY" if ev.file == MEMORY_FILE else page_of(ev.file)
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

