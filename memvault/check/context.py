"""What a partial check loads besides the files it judges.

A partial check (`PATHS` or `--staged`, which runs on every commit and must stay well under a
second on a 100k-entry vault) parses only the files being judged plus the few others their
references need: the daily logs a reference or link names by date, files that `git grep`
finds holding an id or block a reference names, and the files along a supersession chain
(for cycles). See docs/checks.md "How --staged stays fast" for what that trades away.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from functools import cached_property

from memvault.check.sourcefile import SourceFile, load_source
from memvault.check.sources import GitIndex, HeadView, WorkingTree
from memvault.config.core import Config
from memvault.entries.daily import log_date
from memvault.entries.markdown import link_parts
from memvault.entries.model import Event
from memvault.entries.naming import log_name
from memvault.entries.timeline import (
    DATE_RE,
    ID_SPACE_RE,
    LINK_RE,
    STOPWORDS,
    WORD_RE,
    Timeline,
    stem,
)
from memvault.layout import MEMORY_FILE
from memvault.parsed import by_day

DEFAULT_ID_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{1,2}:\d{2}(?:-\d+)?$")
DERIVED_ID_RE = re.compile(r"^([^#@\s]+)[#@]")  # `<key>#<slug path>…` (a note), `<key>@HH:MM` (an entry)
HEAD_RE = re.compile(rb"^##[ \t]", re.M)
TYPE_WORDS = {"belief", "decision", "observation", "correction"}
MAX_CHAIN_ROUNDS = 25


class ContextLoader:
    """Finds and loads the files that the focus files' references need, and nothing else."""

    def __init__(self, source: WorkingTree | GitIndex | HeadView, all_paths: list[str], config: Config):
        self.source, self.all_paths, self.config = source, all_paths, config
        self.by_date = by_day(all_paths)  # looked up by date only: a day's own file, topics, archive
        self.all_paths_set = set(all_paths)
        self.loaded: dict[str, SourceFile] = {}
        self.focus: set[str] = set()
        self.everything = False

    def load(self, focus: list[SourceFile], events: set[int] | None = None) -> list[SourceFile]:
        """The files the focus files' references need; with `events` (their `id()`s), only
        what those entries' references need (MV019 resolves a few references of a file)."""
        self.loaded = {f.path: f for f in focus}
        self.focus = set(self.loaded)
        paths: set[str] = set()
        anywhere: set[str] = set()
        vague: list[tuple[str, Event, set[str]]] = []
        leading = [e for f in focus for e in f.parsed.events if events is None or id(e) in events]
        for ev in leading:
            self._wanted(ev, paths, anywhere, vague)
        needles = anywhere | {_needle(k) for _, _, keys in vague for k in keys}
        found = self.source.grep(needles) if needles else {}
        ids = {n.lower() for n in anywhere}
        by_id = {p for p, has in found.items() if has & ids}
        by_words = {p for p, has in found.items() if any(_enough(has, keys) for _, _, keys in vague)}
        self._add(paths | by_id)
        self._add_where_an_entry_could_match(by_words - self.loaded.keys(), [keys for _, _, keys in vague])
        if self.everything or not all(self._has_type(ref, ev) for ref, ev, _ in vague):
            self._add(set(self.all_paths))
            return self.context()
        self._follow_chains(leading)
        return self.context()

    @cached_property
    def by_key(self) -> dict[str, list[str]]:
        """The file key (`memvault.entries.naming`) -> its paths: what a derived id starts with."""
        out: dict[str, list[str]] = defaultdict(list)
        for path in self.all_paths:
            out[log_name(path).key].append(path)
        return out

    def context(self) -> list[SourceFile]:
        return [f for f in self.loaded.values() if f.path not in self.focus]

    def _add(self, paths: Iterable[str]) -> None:
        new = sorted(set(paths) - self.loaded.keys())
        for rel, raw in self.source.read(new).items():
            self.loaded[rel] = load_source(rel, raw, self.config, self.source.dates.of(rel))

    def _add_where_an_entry_could_match(self, paths: set[str], descriptions: list[set[str]]) -> None:
        """Parse only the files where one entry holds half a description's words.

        A file of twenty entries often holds two common words in different entries; the
        resolver scores entries, so such a file cannot hold the answer. Reading the bytes
        is cheap; parsing is what costs.
        """
        for rel, raw in self.source.read(sorted(paths)).items():
            if raw is None or rel == MEMORY_FILE or any(_entry_could_match(raw, keys) for keys in descriptions):
                self.loaded[rel] = load_source(rel, raw, self.config, self.source.dates.of(rel))

    def _wanted(self, ev: Event, paths: set[str], anywhere: set[str], vague: list[tuple[str, Event, set[str]]]) -> None:
        """Note where the entry's id, references and links may lead."""
        if ev.explicit_id:  # a duplicate may be anywhere
            anywhere.add(f"^{ev.id}" if ev.kind == "curated" else ev.id)
        for ref in ((ev.supersedes,) if ev.supersedes else ()) + ev.reconfirms:
            keys = self._ref(ref.strip(), paths, anywhere)
            if keys is not None:
                vague.append((ref, ev, keys))
        for link in (*ev.links, *ev.sources):
            self._ref(f"[[{link}]]", paths, anywhere)

    def _ref(self, ref: str, paths: set[str], anywhere: set[str]) -> set[str] | None:
        """Note where `ref` can point; for a dateless description, return its key words."""
        if not ref:
            return None
        m = DEFAULT_ID_RE.match(ref) or ID_SPACE_RE.match(ref)
        if m:
            paths.update(self.by_date.get(m[1], ()))
            return None
        link = LINK_RE.match(ref)
        if link:
            page, anchor = link_parts(link[1])
            if page == "MEMORY":
                paths.add(MEMORY_FILE)
            elif log_date(page + ".md"):
                paths.update(self.by_date.get(page, ()))
            elif anchor.strip().startswith("^"):
                anywhere.add(anchor.strip())
            return None
        if ref.startswith("^") or not any(ch.isspace() for ch in ref):
            anywhere.add(ref)  # a single token may be an explicit id or a ^block, anywhere
            if ref.startswith("^"):
                return None
            key = DERIVED_ID_RE.match(ref)  # a note's or a topic file's entry id: not in any file's text
            if key and key[1] in self.by_key:
                paths.update(self.by_key[key[1]])
                return None
        date = DATE_RE.search(ref)
        if date:
            paths.update(self.by_date.get(date[1], ()))
            return None
        keys = _keys(ref)
        if not keys:
            self.everything = True  # a description of stopwords matches by type alone
        return keys

    def _has_type(self, ref: str, source: Event) -> bool:
        """A description naming a type narrows to earlier entries of that type, if any exist.

        The files read so far may hold none while the vault does; then the answer could
        differ from a full check's. MEMORY.md and the daily logs just before the entry are
        read until one turns up; failing that, the caller reads everything.
        """
        words = {w.lower().rstrip("s") for w in WORD_RE.findall(ref)} & TYPE_WORDS
        if not words or self._typed_loaded(words, source):
            return True
        day = source.file.rsplit("/", 1)[-1][:10]
        earlier = sorted((d for d in self.by_date if d < day and log_date(d + ".md")), reverse=True)
        batches = [[MEMORY_FILE]] + [[p for d in earlier[i : i + 10] for p in self.by_date[d]] for i in (0, 10, 20)]
        for batch in batches:
            self._add(p for p in batch if p in self.all_paths_set)
            if self._typed_loaded(words, source):
                return True
        return False

    def _typed_loaded(self, words: set[str], source: Event) -> bool:
        return any(
            e.type in words and e is not source and _earlier(e, source)
            and not (source.kind == "log" and e.kind == "curated")  # as EventIndex._resolve_text
            for f in self.loaded.values() for e in f.parsed.events
        )

    def _follow_chains(self, leading: list[Event]) -> None:
        """Load the entries the focus entries supersede, transitively, so cycles show up."""
        starts = [e for e in leading if e.supersedes]
        for _ in range(MAX_CHAIN_ROUNDS):
            tl = Timeline([e for f in self.loaded.values() for e in f.parsed.events], self.config)
            paths: set[str] = set()
            anywhere: set[str] = set()
            for ev in starts:
                node, seen = ev.id, set()
                while node in tl.supersedes and node not in seen:
                    seen.add(node)
                    node = tl.supersedes[node]
                end = tl.by_id.get(node)
                if end is not None and end is not ev and end.supersedes and node not in tl.supersedes:
                    keys = self._ref(end.supersedes.strip(), paths, anywhere)
                    anywhere.update(_needle(k) for k in keys or ())
            found = self.source.grep(anywhere) if anywhere else {}
            todo = (paths | found.keys()) - self.loaded.keys()
            if not todo:
                return
            self._add(todo)


def _needle(key: str) -> str:
    """Every word whose stem is `key` contains it, or it minus the `y` of a stemmed -ies."""
    return key[:-1] if key.endswith("y") and len(key) > 3 else key


def _enough(found: set[str], keys: set[str]) -> bool:
    """Can a file holding these needles have an entry matching half the keys (the resolver's bar)?"""
    return 2 * sum(_needle(k) in found for k in keys) >= len(keys)


def _entry_could_match(raw: bytes, keys: set[str]) -> bool:
    """Does some `## ` section of this daily log contain half of `keys` (as the resolver needs)?

    Conservative: a file with a code fence (where a `## ` line may not be a heading) counts.
    """
    low = raw.lower()
    if b"```" in low or b"~~~" in low:
        return True
    heads = [m.start() for m in HEAD_RE.finditer(low)]
    found: dict[int, set[str]] = defaultdict(set)
    for key in keys:
        needle = _needle(key).encode()
        i = low.find(needle)
        while i >= 0:
            found[bisect_right(heads, i)].add(key)
            i = low.find(needle, i + 1)
    return any(section and 2 * len(hit) >= len(keys) for section, hit in found.items())


def _keys(ref: str) -> set[str]:
    words = [w.lower() for w in WORD_RE.findall(DATE_RE.sub(" ", ref))]
    types = {w.rstrip("s") for w in words} & TYPE_WORDS
    return {stem(w) for w in words if w not in STOPWORDS and w.rstrip("s") not in types}


def _earlier(a: Event, b: Event) -> bool:
    if a.timestamp is None or b.timestamp is None:
        return True
    return (a.timestamp, a.file, a.line) < (b.timestamp, b.file, b.line)

