"""MV019: a staged change that moves a reference in a file the commit does not touch.

`check --staged` judges the staged files, but what a `Supersedes:`/`Reconfirms:` line or a
`[[link]]` (a MEMORY.md bullet's source, a link in a log) in an unchanged file means can depend
on them: a backfilled entry can make a description ambiguous, a deleted or re-timed one can
leave it dangling, an edited one can take it over. Such a commit would change what the vault
believes, or where a bullet says it came from, without a line of the holder changing.

Cheap first: the entries that differ between HEAD and the index (added, removed or edited in
the staged files) are read, and only references whose text could reach one of them (its id,
day, block, type, or half of a description's words) are looked at. Their files are resolved
twice, against HEAD and against the index, each with the context a partial check loads
(context.py), and every reference that named an entry in HEAD and names another one, or none,
in the index is reported at its line, with the staged entries that moved it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memvault.check.context import ContextLoader, _keys
from memvault.check.crossfile import _aliases_name_an_entry
from memvault.check.registry import problem
from memvault.check.sourcefile import SourceFile, load_source
from memvault.check.sources import GitIndex, HeadView
from memvault.config.core import Config
from memvault.entries.daily import log_date
from memvault.entries.markdown import WIKILINK_RE, link_parts, page_of
from memvault.entries.model import Event, Problem
from memvault.entries.timeline import DATE_RE, ID_SPACE_RE, LINK_RE, WORD_RE, Timeline, _stems
from memvault.gitio import run_git
from memvault.layout import MEMORY_FILE

REF_LINE_RE = re.compile(rb"^[ \t>*-]*(?:supersedes|reconfirms)[ \t]*:[ \t]*(.+?)[ \t]*$", re.I | re.M)
REF_TEXT_RE = re.compile(REF_LINE_RE.pattern.decode(), re.I)
TYPE_WORDS = {"belief", "decision", "observation", "correction"}
Key = tuple[str, int, str, str]  # (file, line, what: Supersedes, Reconfirms or link, reference)


def moved_references(index: GitIndex, config: Config, judged: Sequence[SourceFile] = ()) -> list[Problem]:
    """MV019 problems for references in unchanged files that the staged change moves;
    `judged` are staged files the caller has parsed already (they are not parsed again)."""
    if not run_git(["rev-parse", "--verify", "-q", "HEAD"], index.root, check=False).ok:
        return []  # the first commit: nothing was committed that could move
    out = index._git("diff", "--cached", "--name-only", "--no-renames", "-z", "--relative")
    changed = sorted(p for p in out.split("\0") if p and index.selection.selects(p))
    if not changed:
        return []
    all_paths = index.paths()
    head = HeadView(index, changed, all_paths)
    present = set(all_paths)
    parsed = {f.path: f for f in judged if f.path in head.changed}
    now_raw = index.read([p for p in changed if p in present and p not in parsed])
    staged = _events(now_raw, index, config) + [e for f in parsed.values() for e in f.parsed.events]
    diff = _differing(_events(head.head, index, config), staged)
    if not diff:
        return []
    reach = _Reach(diff, changed)
    holders = _holder_files(index, set(changed), reach)
    if not holders:
        return []
    focus = [load_source(rel, raw, config, index.dates.of(rel)) for rel, raw in index.read(holders).items()]
    before = _answers(ContextLoader(head, head.paths(), config), focus, config, reach)
    after = _answers(ContextLoader(index, all_paths, config), focus, config, reach)
    found = []
    for key, (ev, was) in before.items():
        now = after[key][1] if key in after else "nothing"
        # A reference that named nothing in HEAD was already an error there (MV011/MV012/MV401):
        # that the change gives it an answer (a backfill of the day it meant) is a repair, not a move.
        if now != was and not was.startswith("nothing"):
            word, ref = key[2], key[3]
            what = f"link [[{ref}]]" if word == "link" else f"{word} '{ref}'"
            found.append(problem(ev.file, _line(focus, ev, key), "MV019", (
                f"this change makes {what} resolve to {now} instead of {was}"
                f"{_blame(word, ref, diff, staged)}")))
    return found


def _events(raws: dict[str, bytes | None], index: GitIndex, config: Config) -> list[Event]:
    return [e for rel, raw in raws.items() if raw is not None
            for e in load_source(rel, raw, config, index.dates.of(rel)).parsed.events]


def _sig(ev: Event) -> tuple[object, ...]:
    return (ev.id, ev.kind, ev.type, ev.is_note, ev.file, ev.timestamp, ev.title, ev.heading, ev.content,
            ev.block_ids)


def _differing(old: list[Event], new: list[Event]) -> list[Event]:
    """The entries that one side has and the other has not (line numbers aside)."""
    olds, news = {_sig(e) for e in old}, {_sig(e) for e in new}
    return [e for e in old if _sig(e) not in news] + [e for e in new if _sig(e) not in olds]


def _holder_files(index: GitIndex, changed: set[str], reach: _Reach) -> list[str]:
    """Unchanged files holding a reference that one of the differing entries could answer."""
    return sorted({rel for rel, word, ref in _reference_lines(index, reach.needles())
                   if rel not in changed and reach.could(ref, word)})


def _reference_lines(index: GitIndex, needles: list[str]) -> list[tuple[str, str, str]]:
    """(path, "ref" or "link", reference) for every `Supersedes:`/`Reconfirms:` line of the
    staged vault and every `[[link]]` on a line holding one of `needles` (the pages and blocks
    the change touches): one `git grep` of the working tree, and the staged blobs of the files
    that differ from it."""
    # fixed strings are three times faster for git than the line's pattern; the pattern sorts
    pattern = [arg for n in ["supersedes", "reconfirms", *needles] for arg in ("-e", n)]
    out = index._git("grep", "-i", "-z", "-I", "-F", *pattern, "--", *index.selection.pathspecs, ok=(0, 1))
    found = []
    chosen = index.selection.selects
    judged: dict[str, bool] = {}  # a path is asked once, however many of its lines match
    for row in out.split("\n"):
        path, _, text = row.partition("\0")
        refs = _refs_on(path, text)
        if refs and path not in index.dirty and judged.setdefault(path, chosen(path)):
            found += refs
    for rel, raw in index.read(sorted(p for p in index.dirty if chosen(p))).items():
        for line in (raw or b"").decode("utf-8", "replace").split("\n"):
            found += _refs_on(rel, line)
    return found


def _refs_on(path: str, text: str) -> list[tuple[str, str, str]]:
    m = REF_TEXT_RE.match(text)
    out = [(path, "ref", m[1])] if m else []
    return out + [(path, "link", t.strip()) for t in WIKILINK_RE.findall(text)] if "[[" in text else out


def _day(ev: Event) -> str | None:
    return ev.file.rsplit("/", 1)[-1][:10] if ev.kind == "log" and ev.timestamp is not None else None


class _Reach:
    """What the differing entries can answer, computed once: ids, days, blocks, pages, types
    and words; `could(ref)` says whether `ref`'s answer may change (conservative)."""

    def __init__(self, diff: list[Event], changed: Sequence[str] = ()):
        self.ids = {e.id.lower() for e in diff}
        self.days = {d for e in diff if (d := _day(e))}
        self.blocks = {b.lower() for e in diff for b in e.block_ids}
        self.pages = {page_of(e.file) for e in diff}
        # a link to a day names its file too: deleting a log without entries breaks `[[day]]`
        self.link_pages = self.days | self.pages | {page_of(p) for p in changed}
        described = [e for e in diff if not e.is_note]  # notes are never what a description means
        self.types = {e.type for e in described}
        self.stems = [_stems(f"{e.title} {e.content}") for e in described]

    def needles(self) -> list[str]:
        """What a line holding a link this change could answer contains (ignoring case)."""
        return sorted({p for p in self.link_pages if p} | {f"^{b}" for b in self.blocks})

    def could(self, ref: str, word: str = "ref") -> bool:
        ref = ref.strip()
        if word == "link":
            page, anchor = link_parts(ref)
            if anchor.startswith("^"):
                return anchor[1:].lower() in self.blocks
            return page in self.link_pages
        low = ref.lower()
        if low in self.ids:
            return True
        m = ID_SPACE_RE.match(ref)
        if m:  # an id by its time: only that id answers it (EventIndex.resolve)
            return f"{m[1]}t{int(m[2].split(':')[0]):02d}:{m[2].split(':')[1]}{m[3] or ''}" in self.ids
        link = LINK_RE.match(ref)
        if link:
            return self.could(link[1], "link")
        if low.startswith("^"):
            return low[1:] in self.blocks
        date = DATE_RE.search(ref)
        if date:
            return date[1] in self.days
        keys = _keys(ref)
        if not keys:
            return True  # a description of stopwords matches by type alone
        if {w.lower().rstrip("s") for w in WORD_RE.findall(ref)} & self.types:
            return True  # the first (or last) entry of a named type changes the pool
        return any(2 * len(keys & got) >= len(keys) for got in self.stems)


def _answers(loader: ContextLoader, focus: list[SourceFile], config: Config, reach: _Reach) -> dict[Key, tuple[Event, str]]:
    """(file, line, what, ref) -> what each reachable reference of the focus files resolves to."""
    wanted: dict[Key, Event] = {}
    for f in focus:
        for ev in f.parsed.events:
            pairs = ([("Supersedes", ev.supersedes)] if ev.supersedes else []) + [("Reconfirms", r) for r in ev.reconfirms]
            pairs += [("link", t) for t in dict.fromkeys((*ev.links, *ev.sources))]
            for word, ref in pairs:
                if reach.could(ref, "link" if word == "link" else "ref"):
                    wanted[(ev.file, ev.line, word, ref)] = ev
    if not wanted:
        return {}
    # only the entries with a reference in reach lead the loader: a MEMORY.md of 200 bullets
    # would otherwise read every day its bullets cite, twice
    context = loader.load(focus, events={id(e) for e in wanted.values()})
    tl = Timeline([e for f in focus + context for e in f.parsed.events], config)
    sources = {f.path: f for f in focus}
    days = loader.by_date  # a page that is a date names a file of that day (by_stem, cheaper)
    out = {}
    for key, ev in wanted.items():
        if tl.by_id.get(ev.id) is not ev:
            continue
        if key[2] == "link":
            answer = _link_outcome(tl, key[3], ev, days, sources.get(ev.file))
            if answer:
                out[key] = (ev, answer)
        else:
            out[key] = (ev, _outcome(tl, key[3], ev))
    return out


def _outcome(tl: Timeline, ref: str, ev: Event) -> str:
    res = tl.index.resolve(ref, ev)
    if res.target is not None:
        return res.target
    if res.candidates:
        return "nothing (ambiguous: " + ", ".join(c.split(" ", 1)[0] for c in res.candidates) + ")"
    return "nothing"


def _link_outcome(tl: Timeline, target: str, ev: Event, days: Mapping[str, list[str]], src: SourceFile | None) -> str:
    """What a `[[link]]` names, as the full check judges it (crossfile._check_link); "" for a
    page that is not memvault's to judge."""
    page, anchor = link_parts(target)
    page = page or ("MEMORY" if ev.file == MEMORY_FILE else page_of(ev.file))
    if page == "MEMORY":
        if anchor.startswith("^"):
            found = [e.id for e in tl.index.by_block.get(anchor[1:], []) if e.file == MEMORY_FILE]
            return found[0] if found else "nothing"
        sections = {e.category.strip().lower() for e in tl.events if e.file == MEMORY_FILE and e.category}
        return "nothing" if anchor and anchor.lower() not in sections else f"MEMORY.md {anchor}".strip()
    if log_date(page + ".md") is None:
        return ""
    if not any(p.rsplit("/", 1)[-1] == f"{page}.md" for p in days.get(page, ())):
        return f"nothing (no daily log for {page})"
    if not anchor:
        return f"the daily log {page}"
    res = tl.index.resolve(f"[[{page}#{anchor}]]")
    if res.target is None and res.candidates and _aliases_name_an_entry(src, ev, target, tl):
        return "the entry its alias names"
    return _outcome(tl, f"[[{page}#{anchor}]]", ev)


def _line(focus: list[SourceFile], ev: Event, key: Key) -> int:
    """The line of the entry that holds the reference (a link: the line it is written on, as MV401)."""
    src = next((f for f in focus if f.path == ev.file), None)
    if src is not None and key[2] == "link":
        needle = f"[[{key[3]}"
        for i in range(ev.line - 1, min(ev.end_line, len(src.lines))):
            if needle in src.lines[i]:
                return i + 1
    return ev.line


def _blame(word: str, ref: str, diff: list[Event], staged: list[Event]) -> str:
    """The staged change that moved `ref`: the differing entries that could answer it."""
    now = {_sig(e) for e in staged}
    new_ids = {e.id for e in diff if _sig(e) in now}
    old_ids = {e.id for e in diff if _sig(e) not in now}
    parts = []
    for e in diff:
        if not _Reach([e]).could(ref, "link" if word == "link" else "ref"):
            continue
        if _sig(e) not in now:
            parts.append(f"{e.file}:{e.line} (in HEAD) {'edits' if e.id in new_ids else 'removes'} "
                         f"'{e.heading}' ({e.id})")
        elif e.id not in old_ids:
            parts.append(f"{e.file}:{e.line} adds '{e.heading}' ({e.id})")
    if not parts:
        return ""
    shown = "; ".join(parts[:3]) + (f"; and {len(parts) - 3} more" if len(parts) > 3 else "")
    return f"; the staged change: {shown}"
