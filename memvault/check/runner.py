"""Running the checks over the whole vault, over named files, or over exactly what is staged.

A full check reads and parses every file. A partial check (`PATHS` or `--staged`, which runs
on every commit and must stay well under a second on a 100k-entry vault) parses only the
files being judged plus the few others their references need: the daily logs a reference
or link names by date, files that `git grep` finds holding an id or block a reference
names, and the files along a supersession chain (for cycles). See docs/checks.md
"How --staged stays fast" for what that trades away.
"""

from __future__ import annotations

import contextlib
import gc
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from memvault.check.rules import (
    MEMORY_FILE,
    SourceFile,
    by_stem,
    disabled_codes,
    memory_budget,
    run_rules,
)
from memvault.config.core import CONFIG_NAME, Config, parse_toml
from memvault.entries.model import Event, Problem
from memvault.entries.parse import ParsedFile, log_date
from memvault.entries.timeline import (
    DATE_RE,
    ID_SPACE_RE,
    LINK_RE,
    STOPWORDS,
    WORD_RE,
    Timeline,
    stem,
)
from memvault.errors import ConfigError, InputError, UnsafePath
from memvault.fsio import decode_text
from memvault.gitio import not_in_repository, read_batch, run_git
from memvault.layout import (
    in_layout,
    is_vault_markdown,
    iter_markdown,
    read_file,
    staged_link_problem,
    vault_paths,
)
from memvault.parsed import BIG_FILE, ParsedVault, parse_text

__all__ = ["CheckReport", "check_vault", "load_source", "vault_paths"]

DEFAULT_ID_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{1,2}:\d{2}(?:-\d+)?$")
HEAD_RE = re.compile(rb"^##[ \t]", re.M)
TYPE_WORDS = {"belief", "decision", "observation", "correction"}
MAX_CHAIN_ROUNDS = 25
LINK_MODE = "120000"  # git's mode for a symbolic link


@dataclass
class CheckReport:
    mode: str  # "vault", "paths" or "staged"
    files: list[str]
    problems: list[Problem]
    context_files: int = 0
    fixed: dict[str, list[str]] = field(default_factory=dict)
    secrets_only: int = 0  # of `files`: staged files that are not memory, scanned for secrets only

    @property
    def errors(self) -> int:
        return sum(p.severity == "error" for p in self.problems)

    @property
    def warnings(self) -> int:
        return sum(p.severity == "warning" for p in self.problems)

    @property
    def infos(self) -> int:
        return sum(p.severity == "info" for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "files_checked": len(self.files),
            "context_files": self.context_files,
            "secrets_only": self.secrets_only,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
            "fixed": self.fixed,
            "problems": [p.to_dict() for p in self.problems],
        }


def load_source(path: str, raw: bytes | None, config: Config) -> SourceFile:
    """Bytes of one vault file -> SourceFile; unreadable or odd bytes become problems."""
    if raw is None:
        return SourceFile(path, "", ParsedFile(path, "log", problems=[Problem(path, 1, "cannot read file", code="MV100")]))
    text, notes = decode_text(raw)
    parsed = parse_text(text, path, config)
    parsed.problems[:0] = [Problem(path, line, msg, "warning", "MV102") for line, msg in notes]
    if len(raw) > BIG_FILE:
        parsed.problems.append(Problem(
            path, 1, f"file is {len(raw) // 1048576} MB; daily logs this large are slow to search", "warning", "MV103"))
    return SourceFile(path, text, parsed, crlf=b"\r\n" in raw, bom=raw.startswith(b"\xef\xbb\xbf"))


# ------------------------------------------------------------------------------ sources


class WorkingTree:
    """The vault's files as they are on disk."""

    def __init__(self, root: Path):
        self.root = root
        self.skipped: list[Problem] = []  # what the last `paths()` did not read (layout.py)

    def paths(self) -> list[str]:
        self.skipped = []
        return list(iter_markdown(self.root, self.skipped))

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for rel in paths:
            try:
                out[rel] = read_file(self.root, rel)
            except (OSError, UnsafePath):
                out[rel] = None
        return out

    def grep(self, needles: set[str]) -> dict[str, set[str]]:
        """{path: the needles (lower-cased) its text contains, ignoring case}."""
        return self.grep_files(self.paths(), needles)

    def grep_files(self, paths: list[str], needles: set[str]) -> dict[str, set[str]]:
        return _contains(self.read(paths), needles)


def _contains(texts: dict[str, bytes | None], needles: set[str]) -> dict[str, set[str]]:
    wanted = [(n, n.encode()) for n in {n.lower() for n in needles}]
    out: dict[str, set[str]] = {}
    for rel, raw in texts.items():
        low = (raw or b"").lower()
        found = {n for n, b in wanted if b in low}
        if found:
            out[rel] = found
    return out


def _overlap(needles: list[str]) -> bool:
    """Could `git grep -o` hide a needle where it matters?

    It prints the leftmost-longest match and resumes after it, so needle `b` is lost where
    it starts inside a match of `a`. That only matters where `b` starts a word (keys are
    word stems, ids stand alone): at `a`'s start, or after a non-word character in `a`.
    """
    for a in needles:
        for b in needles:
            for k in range(len(a)) if a != b else ():
                if (k == 0 or not a[k - 1].isalnum()) and (b.startswith(a[k:]) or a[k:].startswith(b)):
                    return True
    return False


class GitIndex:
    """The vault's files as staged in git's index: what the next commit will contain."""

    def __init__(self, root: Path):
        self.root = root
        found = run_git(["rev-parse", "--show-prefix"], root, check=False)
        if not found.ok:
            raise not_in_repository(found, "--staged needs one")
        self.prefix = found.text.strip()
        self.skipped: list[Problem] = []  # staged links (see `staged`)

    def _git(self, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        return run_git(args, self.root, ok=ok).text

    def staged(self) -> list[str]:
        """Vault-relative paths added, copied, modified, renamed or retyped in the index;
        symbolic links in the layout are left out, as problems in `skipped`."""
        out = self._git("diff", "--cached", "--raw", "--no-renames", "-z", "--diff-filter=ACMRT", "--relative")
        fields = out.split("\0")
        names, self.skipped = [], []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if meta.split()[1:2] == [LINK_MODE] and in_layout(path):
                self.skipped.append(staged_link_problem(path))
            elif path:
                names.append(path)
        return names

    def paths(self) -> list[str]:
        out = self._git("ls-files", "-z", "--cached", "--stage", "--", MEMORY_FILE, "memory")
        rows = (row.partition("\t") for row in out.split("\0") if row)
        return sorted({p for meta, _, p in rows if not meta.startswith(LINK_MODE) and is_vault_markdown(p)})

    @cached_property
    def dirty(self) -> set[str]:
        """Vault files whose working copy differs from the index (a stat check, then content)."""
        return {p for p in self._git("diff", "--name-only", "-z", "--relative").split("\0") if p}

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        """The staged content of each path.

        A file git reports unchanged is read from the working tree (ten times faster than
        inflating its blob); the others come from the index through one `git cat-file
        --batch`. (A clean/smudge filter on vault Markdown would break that equivalence.)
        """
        paths = list(paths)
        out: dict[str, bytes | None] = {}
        blobs = []
        for rel in paths:
            if rel in self.dirty:
                blobs.append(rel)
                continue
            try:
                out[rel] = read_file(self.root, rel)
            except (OSError, UnsafePath):  # e.g. outside a sparse checkout
                blobs.append(rel)
        out.update(self._blobs(blobs))
        return {rel: out[rel] for rel in paths}

    def _blobs(self, paths: list[str]) -> dict[str, bytes | None]:
        return dict(zip(paths, read_batch(self.root, [f":{self.prefix}{p}" for p in paths]), strict=True))

    def grep(self, needles: set[str]) -> dict[str, set[str]]:
        """{staged path: the needles (lower-cased) its staged text contains, ignoring case}.

        `git grep --cached` inflates every blob (~150 ms on 100k entries); grepping the
        working tree takes a fifth of that. Files whose working copy differs from the
        index are searched in their staged blobs instead, so the answer is the index's.
        """
        wanted = sorted({n.lower() for n in needles})
        pattern_args = [arg for n in wanted for arg in ("-e", n)]
        spec = ["--", MEMORY_FILE, "memory"]
        found: dict[str, set[str]] = {}
        if _overlap(wanted):  # `-o` could hide one of two overlapping needles: read the files
            out = self._git("grep", "-l", "-z", "-i", "-F", *pattern_args, *spec, ok=(0, 1))
            listed = [p for p in out.split("\0") if p and p not in self.dirty]
            found = _contains(self.read(listed), needles)
        else:
            out = self._git("grep", "-o", "-z", "-i", "-F", *pattern_args, *spec, ok=(0, 1))
            for row in out.split("\n"):
                path, _, match = row.partition("\0")
                if match:
                    found.setdefault(path, set()).add(match.lower())
        hits = {p: f for p, f in found.items() if p not in self.dirty and is_vault_markdown(p)}
        hits.update(_contains(self.read(sorted(p for p in self.dirty if is_vault_markdown(p))), needles))
        return hits


def staged_config(index: GitIndex, base: Config) -> Config:
    """The staged memvault.toml, so a commit is judged by the settings it commits."""
    raw = index.read([CONFIG_NAME]).get(CONFIG_NAME)
    if raw is None:
        return base
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{CONFIG_NAME} (staged): {exc}") from None
    return Config.from_dict(parse_toml(text, f"{CONFIG_NAME} (staged)"), Path(CONFIG_NAME))


# ------------------------------------------------------------------- partial checks


class ContextLoader:
    """Finds and loads the files that the focus files' references need, and nothing else."""

    def __init__(self, source: WorkingTree | GitIndex, all_paths: list[str], config: Config):
        self.source, self.all_paths, self.config = source, all_paths, config
        self.by_date = by_stem(all_paths)  # looked up by date only
        self.all_paths_set = set(all_paths)
        self.loaded: dict[str, SourceFile] = {}
        self.focus: set[str] = set()
        self.everything = False

    def load(self, focus: list[SourceFile]) -> list[SourceFile]:
        self.loaded = {f.path: f for f in focus}
        self.focus = set(self.loaded)
        paths: set[str] = set()
        anywhere: set[str] = set()
        vague: list[tuple[str, Event, set[str]]] = []
        for ev in (e for f in focus for e in f.parsed.events):
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
        self._follow_chains(focus)
        return self.context()

    def context(self) -> list[SourceFile]:
        return [f for f in self.loaded.values() if f.path not in self.focus]

    def _add(self, paths: Iterable[str]) -> None:
        new = sorted(set(paths) - self.loaded.keys())
        for rel, raw in self.source.read(new).items():
            self.loaded[rel] = load_source(rel, raw, self.config)

    def _add_where_an_entry_could_match(self, paths: set[str], descriptions: list[set[str]]) -> None:
        """Parse only the files where one entry holds half a description's words.

        A file of twenty entries often holds two common words in different entries; the
        resolver scores entries, so such a file cannot hold the answer. Reading the bytes
        is cheap; parsing is what costs.
        """
        for rel, raw in self.source.read(sorted(paths)).items():
            if raw is None or rel == MEMORY_FILE or any(_entry_could_match(raw, keys) for keys in descriptions):
                self.loaded[rel] = load_source(rel, raw, self.config)

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
            page, _, anchor = link[1].partition("#")
            page = page.strip().rsplit("/", 1)[-1].removesuffix(".md")
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
            for f in self.loaded.values() for e in f.parsed.events
        )

    def _follow_chains(self, focus: list[SourceFile]) -> None:
        """Load the entries the focus entries supersede, transitively, so cycles show up."""
        starts = [e for f in focus for e in f.parsed.events if e.supersedes]
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


# ---------------------------------------------------------------------------- entry


def check_vault(
    vault: ParsedVault, paths: Sequence[str] = (), *, staged: bool = False, now: datetime | None = None,
) -> CheckReport:
    """Check the whole vault, the named vault files, or (`staged`) exactly the staged blobs."""
    with gc_paused():
        return _check(vault, paths, staged, now or vault.now())


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """A check builds millions of objects and frees them together at the end; the cyclic
    collector's passes over them cost ~10% of a full check and find nothing to free."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _check(vault: ParsedVault, paths: Sequence[str], staged: bool, now: datetime) -> CheckReport:
    config = vault.config
    if staged:
        if paths:
            raise InputError("give either PATHS or --staged, not both")
        index = GitIndex(vault.root)
        names = index.staged()
        if CONFIG_NAME in names:
            config = staged_config(index, config)
            disabled_codes(config)  # a bad [checks] or [curate] table fails the commit
            memory_budget(config)
        from memvault.check.secrets.check import with_other_staged_files

        report = _partial("staged", index, [n for n in names if is_vault_markdown(n)], config, now)
        report = _with_skipped(report, index.skipped, config)
        return with_other_staged_files(report, index, names, disabled_codes(config))
    tree = WorkingTree(vault.root)
    if paths:
        skipped: list[Problem] = []
        report = _partial("paths", tree, vault_paths(vault.root, paths, skipped), config, now)
        return _with_skipped(report, skipped, config)
    all_paths = tree.paths()
    files = [load_source(rel, raw, config) for rel, raw in tree.read(all_paths).items()]
    report = CheckReport("vault", all_paths, run_rules(files, config, now=now, all_paths=all_paths))
    return _with_skipped(report, tree.skipped, config)


def _with_skipped(report: CheckReport, skipped: list[Problem], config: Config) -> CheckReport:
    """The report with what the layout rule did not read (links, non-files, unreadable folders)."""
    off = disabled_codes(config)
    if skipped:
        report.problems = sorted(report.problems + [p for p in skipped if p.code not in off],
                                 key=lambda p: (p.path, p.line, p.col, p.code))
    return report


def _partial(mode: str, source: WorkingTree | GitIndex, focus: list[str], config: Config, now: datetime) -> CheckReport:
    if not focus:
        return CheckReport(mode, [], [])
    all_paths = source.paths()
    files = [load_source(rel, raw, config) for rel, raw in source.read(focus).items()]
    loader = ContextLoader(source, all_paths + sorted(set(focus).difference(all_paths)), config)
    context = loader.load(files)
    problems = run_rules(files, config, now=now, all_paths=loader.all_paths, context=context)
    return CheckReport(mode, focus, problems, context_files=len(context))
