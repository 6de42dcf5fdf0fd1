"""Where a check reads the vault's files from: the working tree, or git's index (`--staged`).

`HeadView` is the index with the staged files as HEAD has them (MV019, moved.py). All
answer the same questions (`paths`, `read`, `grep`), so the runner and the context
loader do not care which one they have.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

from memvault.config.core import CONFIG_NAME, Config, decode_error, parse_toml
from memvault.entries.model import Problem
from memvault.errors import UnsafePath
from memvault.filedates import FileDates
from memvault.gitio import not_in_repository, read_batch, run_git
from memvault.layout import (
    DEFAULT,
    Selection,
    iter_markdown,
    read_file,
    staged_link_problem,
)

LINK_MODE = "120000"  # git's mode for a symbolic link


class WorkingTree:
    """The vault's files as they are on disk: those `selection` selects, dated by `dates`."""

    def __init__(self, root: Path, selection: Selection = DEFAULT, dates: FileDates | None = None):
        self.root = root
        self.selection = selection
        self.dates = dates or FileDates(root, selection, Config().tz)
        self.skipped: list[Problem] = []  # what the last `paths()` did not read (layout.py)

    def paths(self) -> list[str]:
        self.skipped = []
        return list(iter_markdown(self.root, self.skipped, selection=self.selection))

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


def overlap(needles: list[str]) -> bool:
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
    """The vault's files as staged in git's index: what the next commit will contain (those
    `selection` selects, dated by `dates`: a new file is dated by its mtime)."""

    def __init__(self, root: Path, selection: Selection = DEFAULT, dates: FileDates | None = None):
        self.root = root
        self.selection = selection
        self.dates = dates or FileDates(root, selection, Config().tz)
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
            if meta.split()[1:2] == [LINK_MODE] and self.selection.reaches(path):
                self.skipped.append(staged_link_problem(path))
            elif path:
                names.append(path)
        return names

    def paths(self) -> list[str]:
        out = self._git("ls-files", "-z", "--cached", "--stage", "--", *self.selection.pathspecs)
        rows = (row.partition("\t") for row in out.split("\0") if row)
        return sorted({p for meta, _, p in rows if not meta.startswith(LINK_MODE) and self.selection.selects(p)})

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
        spec = ["--", *self.selection.pathspecs]
        found: dict[str, set[str]] = {}
        if overlap(wanted):  # `-o` could hide one of two overlapping needles: read the files
            out = self._git("grep", "-l", "-z", "-i", "-F", *pattern_args, *spec, ok=(0, 1))
            listed = [p for p in out.split("\0") if p and p not in self.dirty]
            found = _contains(self.read(listed), needles)
        else:
            out = self._git("grep", "-o", "-z", "-i", "-F", *pattern_args, *spec, ok=(0, 1))
            for row in out.split("\n"):
                path, _, match = row.partition("\0")
                if match:
                    found.setdefault(path, set()).add(match.lower())
        chosen = self.selection.selects
        hits = {p: f for p, f in found.items() if p not in self.dirty and chosen(p)}
        hits.update(_contains(self.read(sorted(p for p in self.dirty if chosen(p))), needles))
        return hits


class HeadView:
    """The vault as committed in HEAD, answering as `GitIndex` does: the staged files (and
    deleted ones) from HEAD's blobs, every other file as the index has it (the same bytes)."""

    def __init__(self, index: GitIndex, changed: list[str], index_paths: list[str]):
        self.index, self.changed = index, set(changed)
        self.dates = index.dates
        blobs = read_batch(index.root, [f"HEAD:{index.prefix}{p}" for p in changed])
        self.head = dict(zip(changed, blobs, strict=True))
        kept = [p for p in index_paths if p not in self.changed]
        self._paths = sorted(kept + [p for p, raw in self.head.items() if raw is not None])

    def paths(self) -> list[str]:
        return list(self._paths)

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        paths = list(paths)
        out = self.index.read([p for p in paths if p not in self.changed])
        out.update({p: self.head[p] for p in paths if p in self.changed})
        return {p: out[p] for p in paths}

    def grep(self, needles: set[str]) -> dict[str, set[str]]:
        hits = {p: f for p, f in self.index.grep(needles).items() if p not in self.changed}
        hits.update(_contains({p: raw for p, raw in self.head.items() if raw is not None}, needles))
        return hits


def staged_config(index: GitIndex, base: Config) -> Config:
    """The staged memvault.toml, so a commit is judged by the settings it commits."""
    raw = index.read([CONFIG_NAME]).get(CONFIG_NAME)
    if raw is None:
        return base
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise decode_error(f"{CONFIG_NAME} (staged)", raw, exc) from None
    return Config.from_dict(parse_toml(text, f"{CONFIG_NAME} (staged)"), Path(CONFIG_NAME), text=text)
