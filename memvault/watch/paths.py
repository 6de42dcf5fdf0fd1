"""Which file-system events matter, and which vault files they ask us to re-read.

Everything here is pure: strings in, strings out. The watcher never trusts an event's
kind to tell it *what* happened (editors save in too many ways, and some events never
arrive); an event only says "look at these paths again", and the index re-reads them
from disk. A key ending in "/" names a folder: every file under it, on disk or in the
index, is looked at again (folder moves, deletes and moves out of the vault arrive as
one event for the folder, never one per file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memvault.config.core import CONFIG_NAME
from memvault.layout import (  # noqa: F401 - the watcher's names for them
    DEFAULT,
    IGNORED_DIRS,
    IGNORED_NAMES,
    MEMORY_FILE,
    TEMP_SUFFIXES,
    Selection,
    is_ignored,
    is_watched_file,
)

# Events that cannot change a file's content.
NO_CHANGE_EVENTS = frozenset({"opened", "closed_no_write"})
# Events that end a write: the file is whole now (see debounce.py).
COMPLETE_EVENTS = frozenset({"closed", "moved", "deleted"})


def is_watched_dir(relpath: str, selection: Selection = DEFAULT) -> bool:
    """True for folders that can hold watched files (memory/ and the folders below it, and
    those the selection's globs reach); never the vault folder itself."""
    rel = relpath.strip("/")
    return bool(rel) and selection.may_hold(rel) and not is_ignored(rel)


@dataclass(frozen=True)
class Touch:
    """What one file-system event asks for."""

    keys: frozenset[str] = frozenset()  # files, and folders as "dir/", to re-read
    config: bool = False  # memvault.toml changed
    log_dir: bool = False  # memory/ (or another watched tree) appeared, vanished or moved: watch it again
    complete: bool = False  # the event ends a write (closed, renamed into place, deleted)

    def __bool__(self) -> bool:
        return bool(self.keys) or self.config or self.log_dir


NOTHING = Touch()


def relative(path: str, root: str) -> str | None:
    """`path` relative to `root` as POSIX, or None when it lies outside the vault."""
    if not path:
        return None
    rel = os.path.relpath(path, root)
    if rel == ".":
        return ""
    if rel == ".." or rel.startswith(".." + os.sep):
        return None
    return rel.replace(os.sep, "/")


def touched(event_type: str, src: str, dest: str, is_directory: bool, root: str,
            selection: Selection = DEFAULT) -> Touch:
    """Map one watchdog event (its type, absolute paths and kind) to the paths to re-read,
    by the files `selection` selects.

    Both ends of a move count: the source is gone (its entries must go) and the
    destination is new. A move from outside the vault arrives as "created", a move out
    as "deleted"; both are covered by reading the path again.
    """
    if event_type in NO_CHANGE_EVENTS:
        return NOTHING
    if is_directory and event_type == "modified":
        return NOTHING  # a folder's listing changed; the files' own events follow
    keys: set[str] = set()
    config = log_dir = False
    for path in (src, dest):
        rel = relative(path, root)
        if not rel:
            continue
        if rel == CONFIG_NAME and not is_directory:
            config = True
        elif rel in selection.roots:
            log_dir = True
            keys.add(rel + "/")
        elif is_directory:
            if is_watched_dir(rel, selection):
                keys.add(rel + "/")
        elif is_watched_file(rel, selection):
            keys.add(rel)
    if not (keys or config or log_dir):
        return NOTHING
    return Touch(frozenset(keys), config, log_dir, event_type in COMPLETE_EVENTS)


def under(key: str, relpath: str) -> bool:
    """True when `relpath` is the file `key` or lies in the folder `key` ("dir/")."""
    return relpath.startswith(key) if key.endswith("/") else relpath == key


def expand(keys: set[str], on_disk: set[str], indexed: set[str]) -> set[str]:
    """Files named by `keys`: files as given, folders as every file below them on disk or in the index."""
    files = {k for k in keys if not k.endswith("/")}
    folders = [k for k in keys if k.endswith("/")]
    if folders:
        for rel in on_disk | indexed:
            if any(rel.startswith(f) for f in folders):
                files.add(rel)
    return files


__all__ = [
    "MEMORY_FILE", "NOTHING", "Touch", "expand", "is_ignored", "is_watched_dir", "is_watched_file",
    "relative", "touched", "under",
]
