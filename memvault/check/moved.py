"""MV019: a staged change that moves a reference in a file the commit does not touch.

`check --staged` judges the staged files, but what a `Supersedes:`/`Reconfirms:` line in an
unchanged file means can depend on them: a backfilled entry can make a description
ambiguous, a deleted one can leave it dangling, an edited one can take it over. Such a commit
would change what the vault believes without a line of the holder changing.

Cheap first: the entries that differ between HEAD and the index (added, removed or edited in
the staged files) are read, and only references whose text could reach one of them (its id,
day, block, type, or half of a description's words) are looked at. Their files are resolved
twice, against HEAD and against the index, each with the context a partial check loads
(context.py), and every reference that named an entry in HEAD and names another one, or none,
in the index is reported at its line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memvault.check.context import ContextLoader, _keys
from memvault.check.registry import problem
from memvault.check.sourcefile import SourceFile, load_source
from memvault.check.sources import GitIndex, HeadView
from memvault.config.core import Config
from memvault.entries.markdown import link_parts, page_of
from memvault.entries.model import Event, Problem
from memvault.entries.timeline import DATE_RE, ID_SPACE_RE, LINK_RE, WORD_RE, Timeline, _stems
from memvault.gitio import run_git

REF_LINE_RE = re.compile(rb"^[ \t>*-]*(?:supersedes|reconfirms)[ \t]*:[ \t]*(.+?)[ \t]*$", re.I | re.M)
REF_TEXT_RE = re.compile(REF_LINE_RE.pattern.decode(), re.I)
TYPE_WORDS = {"belief", "decision", "observation", "correction"}


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
    holders = _holder_files(index, set(changed), diff)
    if not holders:
        return []
    focus = [load_source(rel, raw, config, index.dates.of(rel)) for rel, raw in index.read(holders).items()]
    before = _answers(ContextLoader(head, head.paths(), config), focus, config, diff)
    after = _answers(ContextLoader(index, all_paths, config), focus, config, diff)
    found = []
    for key, (ev, was) in before.items():
        now = after[key][1]
        # A reference that named nothing in HEAD was already an error there (MV011/MV012): that
        # the change gives it an answer (a backfill of the day it meant) is a repair, not a move.
        if now != was and not was.startswith("nothing"):
            word, ref = key[2], key[3]
            found.append(problem(ev.file, ev.line, "MV019", (
                f"this change makes {word} '{ref}' resolve to {now} instead of {was}")))
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


def _holder_files(index: GitIndex, changed: set[str], diff: list[Event]) -> list[str]:
    """Unchanged files holding a reference that one of the differing entries could answer."""
    reach = _Reach(diff)
    return sorted({rel for rel, ref in _reference_lines(index) if rel not in changed and reach.could(ref)})


def _reference_lines(index: GitIndex) -> list[tuple[str, str]]:
    """(path, reference) for every `Supersedes:`/`Reconfirms:` line of the staged vault: one
    `git grep` of the working tree, and the staged blobs of the files that differ from it."""
    # fixed strings are three times faster for git than the line's pattern; the pattern sorts
    out = index._git("grep", "-i", "-z", "-I", "-F", "-e", "supersedes", "-e", "reconfirms",
                     "--", *index.selection.pathspecs, ok=(0, 1))
    found = []
    chosen = index.selection.selects
    for row in out.split("\n"):
        path, _, text = row.partition("\0")
        m = REF_TEXT_RE.match(text)
        if m and path not in index.dirty and chosen(path):
            found.append((path, m[1]))
    for rel, raw in index.read(sorted(p for p in index.dirty if chosen(p))).items():
        found += [(rel, m.decode("utf-8", "replace")) for m in REF_LINE_RE.findall(raw or b"")]
    return found


def _day(ev: Event) -> str | None:
    return ev.file.rsplit("/", 1)[-1][:10] if ev.kind == "log" and ev.timestamp is not None else None


class _Reach:
    """What the differing entries can answer, computed once: ids, days, blocks, pages, types
    and words; `could(ref)` says whether `ref`'s answer may change (conservative)."""

    def __init__(self, diff: list[Event]):
        self.ids = {e.id.lower() for e in diff}
        self.days = {d for e in diff if (d := _day(e))}
        self.blocks = {b.lower() for e in diff for b in e.block_ids}
        self.pages = {page_of(e.file) for e in diff}
        described = [e for e in diff if not e.is_note]  # notes are never what a description means
        self.types = {e.type for e in described}
        self.stems = [_stems(f"{e.title} {e.content}") for e in described]

    def could(self, ref: str) -> bool:
        ref = ref.strip()
        low = ref.lower()
        if low in self.ids:
            return True
        m = ID_SPACE_RE.match(ref)
        if m:  # an id by its time: only that id answers it (EventIndex.resolve)
            return f"{m[1]}t{int(m[2].split(':')[0]):02d}:{m[2].split(':')[1]}{m[3] or ''}" in self.ids
        link = LINK_RE.match(ref)
        if link:
            page, anchor = link_parts(link[1])
            if anchor.startswith("^"):
                return anchor[1:].lower() in self.blocks
            return page in self.days or page in self.pages
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


def _answers(loader: ContextLoader, focus: list[SourceFile], config: Config,
             diff: list[Event]) -> dict[tuple[str, int, str, str], tuple[Event, str]]:
    """(file, line, kind, ref) -> what each reference of the focus files resolves to."""
    reach = _Reach(diff)
    context = loader.load(focus)
    tl = Timeline([e for f in focus + context for e in f.parsed.events], config)
    out = {}
    for f in focus:
        for ev in f.parsed.events:
            if tl.by_id.get(ev.id) is not ev:
                continue
            pairs = ([("Supersedes", ev.supersedes)] if ev.supersedes else []) + [("Reconfirms", r) for r in ev.reconfirms]
            for word, ref in pairs:
                if reach.could(ref):
                    out[(ev.file, ev.line, word, ref)] = (ev, _outcome(tl, ref, ev))
    return out


def _outcome(tl: Timeline, ref: str, ev: Event) -> str:
    res = tl.index.resolve(ref, ev)
    if res.target is not None:
        return res.target
    if res.candidates:
        return "nothing (ambiguous: " + ", ".join(c.split(" ", 1)[0] for c in res.candidates) + ")"
    return "nothing"
