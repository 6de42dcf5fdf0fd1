"""The vault's file layout, and the one rule for reaching its files.

The vault's files are the Markdown files its `Selection` selects: `MEMORY.md` and
`memory/**/*.md` unless `[vault] include`/`exclude` in memvault.toml say otherwise. The rule:
**memvault reads and writes only regular files reached through real folders inside the
vault; it never follows a symbolic link.** A link anywhere on the way (`MEMORY.md`,
`memory/`, a subfolder, a daily log), wherever it points, is not read, a write to or
through it is refused, and `check` reports it (MV110) by its path. Anything else that is
not a regular file where a file belongs (`MEMORY.md` as a folder, a named pipe) is MV111;
a folder that cannot be listed is MV100. Links are not followed even when they point
inside the vault: git stores the link, not the file, so the hook, history and time travel
would see something else than search and check, and a link to another daily log would
count its entries twice.

Every reader and writer goes through this module: `walk` lists the files (with the
problems of what it skipped), `problem_at` judges one path, `open_file`/`read_file` read
one, `writable` clears one for writing, `vault_paths` turns command-line PATHS into files.
The checks run just before each read or write; they do not defend against a process that
swaps a folder for a link in between (such a process could write the files itself).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from fnmatch import fnmatchcase
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from memvault.entries.model import Problem
from memvault.entries.naming import log_name
from memvault.errors import InputError, UnsafePath
from memvault.fsio import DERIVED_DIR

if TYPE_CHECKING:
    from memvault.config.core import Config

MEMORY_FILE = "MEMORY.md"
LOG_DIR = "memory"
SKIP_DIRS = frozenset({".git", DERIVED_DIR, ".obsidian", ".trash", "node_modules"})
LINK, NOT_FILE, UNREADABLE = "MV110", "MV111", "MV100"
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)

DEFAULT_INCLUDE = (MEMORY_FILE, f"{LOG_DIR}/**/*.md")
# The files OpenClaw loads into every session besides MEMORY.md (its src/agents/workspace.ts):
# read as notes with `[vault] workspace_files = true`.
WORKSPACE_FILES = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md")
_GLOB = re.compile(r"[*?\[]")


# -- which files --------------------------------------------------------------------------

def _part_regex(part: str) -> str:
    """One path component of a glob as a regex: `*` and `?` never cross a `/`."""
    out, i = [], 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and (end := part.find("]", i + 2)) != -1:
            body = part[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> str:
    """A vault-relative glob as a regex matching the paths it names *and everything below
    them*, so a pattern naming a folder (`memory/archive`) covers its files. `**` as a whole
    component is any number of folders."""
    parts = pattern.strip("/").split("/")
    out = []
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            out.append("[^/]+(?:/[^/]+)*" if last else "(?:[^/]+/)*")
        else:
            out.append(_part_regex(part) + ("" if last else "/"))
    return "".join(out) + "(?:/.+)?"


def _could_hold(pattern: str, folder: list[str]) -> bool:
    """True when some path below `folder` (its components) can match `pattern`."""
    parts = pattern.strip("/").split("/")
    for k, name in enumerate(folder):
        if k == len(parts):
            return True  # the pattern names an ancestor folder: it covers everything below
        if parts[k] == "**":
            return True
        if not fnmatchcase(name, parts[k]):
            return False
    return True


def _day_folder(parts: list[str]) -> bool:
    """True for `memory`, `memory/YYYY` and `memory/YYYY/MM`: where a day's own file may be."""
    return (parts[0] == LOG_DIR and len(parts) <= 3 and all(len(p) == n and p.isascii() and p.isdigit()
                                                              for p, n in zip(parts[1:], (4, 2), strict=False)))


class Selection:
    """Which Markdown files are the vault's: `[vault] include` minus `[vault] exclude`.

    MEMORY.md and the days' own files (`memory/[YYYY/[MM/]]YYYY-MM-DD.md`: where `log` and
    `curate` write) are always read. Only `.md` files are read, never one with a hidden
    name or under a skipped folder (SKIP_DIRS), whatever the globs say. Build it with
    `Selection.of(config)` (cached); the watcher, the index, history, check and the hook all
    ask the same object, so they agree on one set of files."""

    def __init__(self, include: tuple[str, ...] = DEFAULT_INCLUDE, exclude: tuple[str, ...] = ()):
        self.include, self.exclude = tuple(include), tuple(exclude)  # never changed afterwards

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selection) and (self.include, self.exclude) == (other.include, other.exclude)

    def __hash__(self) -> int:
        return hash((self.include, self.exclude))

    def __repr__(self) -> str:
        return f"Selection(include={self.include!r}, exclude={self.exclude!r})"

    @staticmethod
    def of(config: Config | None) -> Selection:
        """The selection `[vault]` in `config` makes (the default without one); one object per
        setting, so every reader of one vault shares it."""
        vault = config.section("vault") if config is not None else {}
        include = tuple(vault.get("include", DEFAULT_INCLUDE))
        if vault.get("workspace_files"):
            include += tuple(f for f in WORKSPACE_FILES if f not in include)
        return _selection(include, tuple(vault.get("exclude", ())))

    # Compiled on first use: the walk under memory/ (`covers`) needs no regex, so a warm
    # search never compiles one.
    @cached_property
    def _inc(self) -> Callable[[str], re.Match[str] | None]:
        inc = "|".join(glob_regex(p) for p in self.include) or "(?!)"
        return re.compile(f"(?:{inc})\\Z").match

    @cached_property
    def _exc(self) -> Callable[[str], re.Match[str] | None] | None:
        exc = "|".join(glob_regex(p) for p in self.exclude)
        return re.compile(f"(?:{exc})\\Z").match if exc else None

    def selects(self, relpath: str) -> bool:
        """True for the vault-relative path of a file memvault reads."""
        if not relpath.endswith(".md"):
            return False
        parts = relpath.split("/")
        if any(not p or p.startswith(".") or p in SKIP_DIRS for p in parts):
            return False
        return self.picks(relpath)

    def picks(self, relpath: str) -> bool:
        """`selects` for a path already known to be a visible `.md` file (the walk's case)."""
        if self._inc(relpath) and (self._exc is None or not self._exc(relpath)):
            return True
        return relpath == MEMORY_FILE or log_name(relpath).canonical

    def may_hold(self, folder: str) -> bool:
        """True for a vault-relative folder ("" is the vault) that can hold files it selects."""
        rel = folder.strip("/")
        if not rel:
            return True
        parts = rel.split("/")
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts):
            return False
        if _day_folder(parts):
            return True  # where the days' own files are: always read
        if self._exc is not None and self._exc(rel):
            return False
        return any(_could_hold(p, parts) for p in self.include)

    def covers(self, folder: str) -> bool:
        """True when every visible `.md` file below `folder` is selected (the walk then
        skips the per-file test): an include `DIR/**/*.md`, `DIR/**` or `DIR` over it and
        no exclude that can reach into it."""
        parts = folder.strip("/").split("/")
        if any(_could_hold(p, parts) for p in self.exclude):
            return False
        for p in self.include:
            base = p.removesuffix("/**/*.md").removesuffix("/**")
            if not _GLOB.search(base) and (folder == base or folder.startswith(base + "/")):
                return True
        return False

    def reaches(self, relpath: str) -> bool:
        """True for a path where a symbolic link would stand for a vault file or folder (a
        link is never followed there, and is reported)."""
        return relpath == MEMORY_FILE or self.selects(relpath) or self.may_hold(relpath)

    @property
    def roots(self) -> tuple[str, ...]:
        """Top-level folders to walk (recursively); "" when a glob starts at the vault root."""
        out = [LOG_DIR]
        for p in self.include:
            head, sep, _ = p.strip("/").partition("/")
            if not sep and head.endswith(".md"):
                continue  # a file in the vault folder (`top_files`)
            out.append("" if _GLOB.search(head) else head)  # a folder, or a glob that may name one
        return tuple(dict.fromkeys(out))

    @property
    def top_files(self) -> bool:
        """True when files directly in the vault folder other than MEMORY.md can be selected."""
        return any("/" not in p.strip("/") and p.endswith(".md") and p != MEMORY_FILE
                   for p in self.include) or "" in self.roots

    @property
    def pathspecs(self) -> tuple[str, ...]:
        """git pathspecs (vault-relative literal prefixes) covering every selected file; the
        answers are still filtered with `selects`."""
        specs = [MEMORY_FILE, LOG_DIR]
        for p in self.include:
            literal = []
            for part in p.strip("/").split("/"):
                if _GLOB.search(part):
                    break
                literal.append(part)
            if not literal:
                return (".",)
            specs.append("/".join(literal))
        kept = sorted(set(specs))
        return tuple(s for s in kept if not any(s.startswith(o + "/") for o in kept))


@lru_cache(maxsize=64)
def _selection(include: tuple[str, ...], exclude: tuple[str, ...]) -> Selection:
    return Selection(include, exclude)


DEFAULT = Selection()


# -- problems -----------------------------------------------------------------------------

def link_problem(root: str | os.PathLike[str], rel: str) -> Problem:
    """MV110 for the symbolic link at `rel`, saying where it points."""
    full = os.path.join(root, rel)
    try:
        target = os.readlink(full)
    except OSError:
        target = "?"
    fix = f"put the {'folder' if os.path.isdir(full) or _folder_name(full) else 'file'} itself here"
    if not os.path.exists(full):
        where, fix = "which cannot be followed (a loop or a missing target)", "remove it, or " + fix
    else:
        real, base = os.path.realpath(full), os.path.realpath(root)
        where = "(inside the vault)" if real.startswith(base + os.sep) else "(outside the vault)"
    return Problem(rel, 1, f"symbolic link to {target} {where}; memvault never follows links, so it is "
                   f"not read and nothing is written through it: {fix}", code=LINK)


def _folder_name(full: str) -> bool:
    """A link whose target is missing (`memory/archive -> /Volumes/Backup/archive`): named like a
    folder (no extension), it most likely stood for one."""
    return not os.path.exists(full) and not os.path.splitext(os.path.basename(full))[1]


def staged_link_problem(rel: str) -> Problem:
    """MV110 for a symbolic link staged in git: the commit would record the link, not a file."""
    return Problem(rel, 1, "staged as a symbolic link; memvault never follows links, so the link's "
                   "target would not be read: commit the file (or folder) itself", code=LINK)


def _not_file(rel: str, mode: int, want_dir: bool) -> Problem:
    if want_dir:
        return Problem(rel, 1, "a file, not a folder; daily logs live in folders under memory/", code=NOT_FILE)
    kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else "a special file"
    return Problem(rel, 1, f"{kind}, not a regular file; memvault reads vault files only as regular files",
                   code=NOT_FILE)


def _unreadable(rel: str, exc: OSError, folder: bool) -> Problem:
    what = "folder cannot be read" if folder else "cannot be read"
    tail = "; the daily logs in it are skipped" if folder else ""
    return Problem(rel, 1, f"{what} ({exc.strerror or exc}){tail}", code=UNREADABLE)


def problem_at(root: str | os.PathLike[str], rel: str, *, folder: bool = False) -> Problem | None:
    """Why the vault path `rel` must not be read or written, or None (also when it does not exist).

    Every component from the vault root down is looked at without following links: a link
    is MV110, a file where a folder belongs (or the reverse, `folder` saying which the last
    component must be) MV111, one that cannot be examined MV100."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        sub = "/".join(parts[:i])
        try:
            mode = os.lstat(os.path.join(root, sub)).st_mode
        except FileNotFoundError:
            return None  # nothing here yet: a writer creates it, a reader finds nothing
        except OSError as exc:  # the folder above cannot be searched (or the name is bad)
            return _unreadable("/".join(parts[: i - 1]) or sub, exc, folder=True)
        last = i == len(parts)
        if stat.S_ISLNK(mode):
            return link_problem(root, sub)
        if not last or folder:
            if not stat.S_ISDIR(mode):
                return _not_file(sub, mode, want_dir=True)
        elif not stat.S_ISREG(mode):
            return _not_file(sub, mode, want_dir=False)
    return None


# -- listing ------------------------------------------------------------------------------

def walk(root: str | os.PathLike[str], problems: list[Problem] | None = None,
         folders: Iterable[str] | None = None, *, with_stat: bool = False, selection: Selection = DEFAULT,
         ) -> Iterator[tuple[str, os.stat_result | None]]:
    """(vault-relative path, lstat or None) of every vault file memvault reads: the files
    `selection` selects (by default MEMORY.md and memory/**/*.md), or those under `folders`,
    given as vault-relative folders. What it skips by the rule goes to `problems`."""
    note = problems.append if problems is not None else (lambda p: None)
    base = os.fspath(root)
    stack: list[str] = []
    if folders is None:
        memory = _root_file(base, note)
        if memory is not None:
            yield MEMORY_FILE, memory if with_stat else None
        roots = selection.roots
        if "" in roots:  # a glob from the vault folder down: list everything from the top
            stack.append("")
            roots = ()
        elif selection.top_files:
            yield from _listing(base, "", None, note, with_stat, selection)
        folders = list(roots)
    for folder in sorted(folders, reverse=True):
        bad = problem_at(base, folder, folder=True)
        if bad is not None:
            note(bad)
        elif os.path.isdir(os.path.join(base, folder)) and selection.may_hold(folder):
            stack.append(folder)
    while stack:  # plain strings, not Path objects: search runs this on every call
        yield from _listing(base, stack.pop(), stack, note, with_stat, selection)


def _listing(base: str, rel_dir: str, stack: list[str] | None, note: Callable[[Problem], None],
             with_stat: bool, selection: Selection) -> list[tuple[str, os.stat_result | None]]:
    """The selected files in one folder; its subfolders that may hold some go on `stack`
    (None: files only). A list, not a generator: search walks 5,000 files on every call."""
    try:
        with os.scandir(os.path.join(base, rel_dir)) as listing:
            entries = sorted(listing, key=_name)
    except FileNotFoundError:
        return []  # removed since its parent was listed
    except OSError as exc:
        note(_unreadable(rel_dir, exc, folder=True))
        return []
    every = selection.covers(rel_dir) if rel_dir else False  # no per-file test below memory/
    prefix = rel_dir + "/" if rel_dir else ""
    found = [_entry(base, entry, prefix + entry.name, stack, note, with_stat, selection, every) for entry in entries]
    return [f for f in found if f is not None]


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _root_file(base: str, note: Callable[[Problem], None]) -> os.stat_result | None:
    """MEMORY.md's lstat when it is a regular file; otherwise notes why not (if it exists)."""
    try:
        st = os.lstat(os.path.join(base, MEMORY_FILE))
    except FileNotFoundError:
        return None
    except OSError as exc:
        note(_unreadable(MEMORY_FILE, exc, folder=False))
        return None
    if stat.S_ISREG(st.st_mode):
        return st
    note(link_problem(base, MEMORY_FILE) if stat.S_ISLNK(st.st_mode) else _not_file(MEMORY_FILE, st.st_mode, False))
    return None


def _entry(base: str, entry: os.DirEntry[str], rel: str, stack: list[str] | None, note: Callable[[Problem], None],
           with_stat: bool, selection: Selection, every: bool,
           ) -> tuple[str, os.stat_result | None] | None:
    """One listed name: a file to yield, a folder to descend into (pushed), or skipped."""
    name = entry.name
    if name.startswith(".") or name in SKIP_DIRS or rel == MEMORY_FILE:  # MEMORY.md: see _root_file
        return None
    try:
        if entry.is_symlink():
            # a link where a vault file or folder could be would hide or pull in entries: say so,
            # also when its target is missing (a backup disk not mounted) and its name is a folder's
            folder = os.path.isdir(entry.path) or _folder_name(entry.path)
            if selection.selects(rel) or (folder and selection.may_hold(rel)):
                note(link_problem(base, rel))
            return None
        if entry.is_dir(follow_symlinks=False):
            if stack is not None and selection.may_hold(rel):
                stack.append(rel)
            return None
        if not name.endswith(".md") or not (every or selection.picks(rel)):
            return None
        if not entry.is_file(follow_symlinks=False):
            note(_not_file(rel, entry.stat(follow_symlinks=False).st_mode, want_dir=False))
            return None
        return rel, entry.stat(follow_symlinks=False) if with_stat else None
    except OSError:
        return None  # removed between the listing and the look


def iter_markdown(root: str | os.PathLike[str], problems: list[Problem] | None = None, *,
                  selection: Selection = DEFAULT) -> Iterator[str]:
    """Vault-relative POSIX paths of the files memvault reads (see `walk`)."""
    for rel, _ in walk(root, problems, selection=selection):
        yield rel


# -- reading and writing one file ---------------------------------------------------------

def open_file(root: str | os.PathLike[str], rel: str) -> BinaryIO:
    """Open the vault file `rel` for reading, by the rule. Raises UnsafePath (with the
    problem) for a link or a non-regular file, FileNotFoundError/OSError as `open` does."""
    bad = problem_at(root, rel)
    if bad is not None:
        raise UnsafePath(f"{bad.path}: {bad.message}", bad)
    try:  # O_NOFOLLOW: a link put in place since the look above still fails
        fd = os.open(os.path.join(root, rel), _OPEN_FLAGS)
    except OSError as exc:
        if os.path.islink(os.path.join(root, rel)):
            bad = link_problem(root, rel)
            raise UnsafePath(f"{rel}: {bad.message}", bad) from None
        raise exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # a pipe would block every reader
        os.close(fd)
        bad = _not_file(rel, mode, want_dir=False)
        raise UnsafePath(f"{rel}: {bad.message}", bad)
    return os.fdopen(fd, "rb")


def read_file(root: str | os.PathLike[str], rel: str) -> bytes:
    """The bytes of the vault file `rel`, by the rule (see `open_file`)."""
    with open_file(root, rel) as fh:
        return fh.read()


def is_file(root: str | os.PathLike[str], rel: str) -> bool:
    """True when `rel` is a regular vault file that the rule lets memvault read."""
    return problem_at(root, rel) is None and os.path.isfile(os.path.join(root, rel))


def writable(root: str | os.PathLike[str], rel: str) -> Path:
    """The full path to write the vault file `rel` at, once the rule allows it: no link on
    the way, folders are folders, and the file, if there, is a regular file. Raises
    UnsafePath naming the offending path otherwise (nothing is written)."""
    bad = problem_at(root, rel)
    if bad is not None:
        raise UnsafePath(f"refusing to write {rel}: {bad.path} is a {bad.message}"
                         if bad.code == LINK else f"refusing to write {rel}: {bad.path}: {bad.message}", bad)
    return Path(root) / rel


# -- command-line paths -------------------------------------------------------------------

def vault_paths(root: Path, given: Sequence[str], problems: list[Problem] | None = None, *,
                selection: Selection = DEFAULT) -> list[str]:
    """PATHS (files or folders, relative to the current directory) -> vault-relative files.

    A link among them is not followed: it goes to `problems` (as do the links and unreadable
    folders met below a folder), and is not a file to check."""
    note = problems.append if problems is not None else (lambda p: None)
    out: list[str] = []
    for item in given:
        rel = _relative(root, item)
        bad = problem_at(root, rel, folder=os.path.isdir(root / rel)) if rel else None
        if bad is not None:
            note(bad)
        elif rel == "" or (root / rel).is_dir():
            inside: list[Problem] = []
            out.extend(p for p in iter_markdown(root, inside, selection=selection) if rel == "" or p.startswith(rel + "/"))
            for p in inside:
                if rel == "" or p.path == rel or p.path.startswith(rel + "/"):
                    note(p)
        elif not (root / rel).exists():
            raise InputError(f"{item}: no such file")
        elif selection.selects(rel):
            out.append(rel)
        else:
            but = f" minus {', '.join(selection.exclude)}" if selection.exclude else ""
            raise InputError(f"{item} is not a vault file: the vault reads {', '.join(selection.include)}{but} "
                             "([vault] include/exclude in memvault.toml)")
    return sorted(dict.fromkeys(out))


def _relative(root: Path, item: str) -> str:
    """`item` relative to the vault, its last component kept as given (a link is not resolved)."""
    full = Path(os.path.abspath(Path(item).expanduser()))
    for candidate in (full, full.parent.resolve() / full.name):  # as given, then via a linked parent
        try:
            rel = candidate.relative_to(root).as_posix()
        except ValueError:
            continue
        return "" if rel == "." else rel
    raise InputError(f"{item} is not inside the vault {root}")


# -- what a watcher or a commit leaves alone ---------------------------------------------

IGNORED_DIRS = SKIP_DIRS  # the folders the vault walk skips (above)
# Editor leftovers: vim swap/backup files, emacs lock and autosave files, generic temp
# files, and memvault's own fsio.atomic_write temp files (".NAME.XXXX.mvtmp").
TEMP_SUFFIXES = (".swp", ".swo", ".swx", "~", ".tmp", ".mvtmp", ".part", ".crdownload")
IGNORED_NAMES = frozenset({".DS_Store", "4913"})  # 4913: vim's "can I write here" probe


def is_ignored(relpath: str) -> bool:
    """True for paths the watcher must never act on: editor temp files and tool folders.

    `relpath` is vault-relative and POSIX; a folder may be given with or without a
    trailing "/".
    """
    parts = [p for p in relpath.split("/") if p]
    if not parts:
        return False
    if any(p in IGNORED_DIRS for p in parts):
        return True
    name = parts[-1]
    return (
        name in IGNORED_NAMES
        or name.startswith(".#")  # emacs lock file
        or (name.startswith("#") and name.endswith("#"))  # emacs autosave
        or name.endswith(TEMP_SUFFIXES)
        or any(p.startswith(".") for p in parts)  # hidden files and folders, like iter_markdown
    )


def is_watched_file(relpath: str, selection: Selection = DEFAULT) -> bool:
    """True for the files whose changes reach the index: those `selection` selects (by
    default MEMORY.md and memory/**/*.md)."""
    return not is_ignored(relpath) and selection.selects(relpath)
