"""The search index heals itself: damage is found, said, and rebuilt from the Markdown.

Three ways damage is found (the shared rules are in `derived_db`):

- **on open, when the store changed behind memvault's back**: every writer records the
  store file's identity and last change (`<backend>.db.checked`) after it commits; a reader
  that finds the file different (bytes written over it, a crash mid-write, a copy put in
  place, the first run of this version) runs SQLite's `quick_check` once (0.17 s on a
  100k-entry index) and records the file as checked. A store that fails is *stale*;
- **on the error**: a query or update that SQLite answers with "malformed" / "not a
  database" (or the whoosh engine cannot read its files) rebuilds the index under the
  writer lock and is tried once more;
- **a folder or special file where the store belongs** makes the index stale; the rebuild
  removes it.

A rebuild for damage says so on stderr (logger `memvault`) and leaves a note in the
store's meta that `memvault status` shows. Temporary files of rebuilds that were killed
(`.sqlite.db.tmpPID`, `.whoosh.tmpPID`, `.whoosh.oldPID`) are removed by the next writer.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from memvault import derived_db
from memvault.search.index.files import inode

LEFTOVER_RE = re.compile(r"\.(sqlite|whoosh)\.(?:db\.tmp|tmp|old)(\d+)")
P = ParamSpec("P")
R = TypeVar("R")


class Index(Protocol):
    """What healing needs of `core.Index` (a protocol, so this module need not import core,
    which imports it)."""

    dir: Path
    backend: str
    db_path: Path
    _inode: int | None  # of the store file when it was opened

    def _reset(self) -> None: ...
    def _writer(self) -> AbstractContextManager[None]: ...
    def _rebuild_locked(self, progress: Any, reason: str) -> Any: ...


IndexT = TypeVar("IndexT", bound=Index)  # the concrete index class the decorated method belongs to


def stamp_path(index: Index) -> Path:
    return index.dir / f"{index.backend}.db.checked"


def damage_reason(exc: BaseException) -> str | None:
    """The stale reason for `exc` when it means damage, else None."""
    if not derived_db.is_damage(exc):
        return None
    return f"damaged index ({exc})"


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The store's meta table; {} when there is none yet, damage raised (not hidden as "empty")."""
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        if derived_db.is_damage(exc):
            raise
        return {}


def squatter_reason(index: Index) -> str | None:
    found = derived_db.squatter(index.db_path)
    return f"damaged index ({found} stands where {index.db_path.name} belongs)" if found else None


def verify(index: Index, conn: sqlite3.Connection) -> str | None:
    """quick_check the store when it is not as the last writer (or check) left it."""
    stamp = stamp_path(index)
    if derived_db.stamp_matches(index.db_path, stamp):
        return None
    before = derived_db.file_key(index.db_path)
    found = derived_db.quick_check(conn)
    if found is not None:
        return f"damaged index (quick_check: {found})"
    if derived_db.file_key(index.db_path) == before:  # a writer may have committed meanwhile
        derived_db.write_stamp(index.db_path, stamp, before)
    return None


def written(index: Index) -> None:
    """A writer is done: the store is as it left it (call under the writer lock)."""
    if not derived_db.stamp_matches(index.db_path, stamp_path(index)):
        derived_db.write_stamp(index.db_path, stamp_path(index))


def announce(index: Index, reason: str) -> str | None:
    """Say that a damaged index is being rebuilt; the note `status` shows (None: no damage)."""
    if not reason.startswith("damaged index"):
        return None
    derived_db.log.warning("the search index at %s is damaged (%s); rebuilding it from the files",
                           index.dir, reason.removeprefix("damaged index (").removesuffix(")"))
    return f"rebuilt {datetime.now().astimezone().isoformat(timespec='seconds')} after {reason}"


def clear_squatter(path: Path) -> None:
    """Remove a directory or special file standing where the new store is renamed to."""
    found = derived_db.squatter(path)
    if found:
        derived_db.discard(path, f"{found} stood where the index file belongs", "the search index")


def leftovers(directory: Path, *, dead_only: bool = True) -> list[Path]:
    """Temporary files of rebuilds (by process id in the name); with `dead_only`, those
    whose process is gone."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    out = []
    for name in names:
        m = LEFTOVER_RE.fullmatch(name)
        if m and not (dead_only and _alive(int(m.group(2)))):
            out.append(directory / name)
    return out


def remove_leftovers(directory: Path) -> None:
    """Under the writer lock no rebuild runs: every temporary file is a leftover."""
    for path in leftovers(directory, dead_only=False):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                path.unlink()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: alive
        return True
    return True


def healing(method: Callable[Concatenate[IndexT, P], R]) -> Callable[Concatenate[IndexT, P], R]:
    """A read of the index that meets damage rebuilds it and is tried once more."""

    @functools.wraps(method)
    def wrapper(index: IndexT, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(index, *args, **kwargs)
        except Exception as exc:
            if not rebuild_after(index, exc):
                raise
        try:
            return method(index, *args, **kwargs)
        except Exception as exc:
            if damage_reason(exc) is None:
                raise
            raise derived_db.Damaged(f"the search index at {index.dir} is still damaged after a rebuild "
                                     f"({exc}); is the disk failing?") from exc

    return wrapper


def rebuild_after(index: Index, exc: BaseException) -> bool:
    """Rebuild after a read met damage, unless another process replaced the file meanwhile;
    False when `exc` is no damage."""
    reason = damage_reason(exc)
    if reason is None:
        return False
    bad = index._inode
    index._reset()
    with index._writer():
        if bad is None or inode(index.db_path) == bad:
            index._rebuild_locked(None, reason)
            written(index)
    return True

