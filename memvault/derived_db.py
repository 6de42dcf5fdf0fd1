"""Derived SQLite databases heal themselves: a damaged one is deleted, said so, and rebuilt.

Everything under `.memvault/` is rebuilt from the Markdown (or from git) on demand, so a
damaged database is never worth a failing command. This module is the one place that
decides what "damaged" means and how a database file is cleared away; the search index
(`index/`), the recorded-time cache (`history.sqlite`: parse cache, recorded index,
postings) and the access counts (`access.sqlite`) all use it.

Damage is what SQLite reports as SQLITE_CORRUPT or SQLITE_NOTADB ("database disk image is
malformed", "file is not a database"), a directory or special file standing where the
database belongs, or `Damaged` raised by a text engine that cannot read its files. A
database that is merely locked, read-only or on a full disk is not damaged: deleting it
would not help, and those errors are left to the caller.

What was done is said through the `memvault` logger (the CLI prints it on stderr as
`memvault: ...`; a library user without logging set up gets it on stderr from Python's
last-resort handler).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
import shutil
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.errors import MemvaultError

log = logging.getLogger("memvault")

DAMAGE_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB (primary codes)
DAMAGE_WORDS = ("malformed", "not a database")
SIDECARS = ("-journal", "-wal", "-shm")


class Damaged(MemvaultError):
    """Derived files that cannot be read as what they should be (raised by text engines)."""


def is_damage(exc: BaseException) -> bool:
    """True when `exc` says the database file itself is damaged (not locked, not read-only)."""
    if isinstance(exc, Damaged):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in DAMAGE_CODES:
        return True
    text = str(exc).lower()
    return any(word in text for word in DAMAGE_WORDS)


def squatter(path: Path) -> str | None:
    """What stands where a database file belongs when it is not a file (None: a file, or nothing)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a dangling symbolic link" if os.path.islink(path) else None
    except OSError as exc:  # a symlink loop, a path through a file
        return f"an unreadable path ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    return "a directory" if stat.S_ISDIR(mode) else "a special file"


IGNORE_ALL = "# memvault's derived state (index, caches): rebuilt from the Markdown, never committed\n*\n"


def self_ignore(derived: Path) -> None:
    """`.memvault/.gitignore` holding `*`: git ignores the derived folder whatever the person's
    own `.gitignore` says (a search in a folder never adopted must not leave `?? .memvault/`)."""
    marker = derived / ".gitignore"
    if not derived.is_dir() or os.path.lexists(marker):
        return
    try:  # O_EXCL: two processes building at once write it once; a few bytes, written whole
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(IGNORE_ALL)


def clear_folder(path: Path) -> None:
    """Make room for a derived folder: anything else standing at `path` (a file, a link) is
    memvault's own derived state gone wrong, so it is removed, and said."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        return
    _remove(path)
    log.warning("removed %s: it stood where memvault's folder of derived state belongs; rebuilding", path)


def _remove(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):  # a symlink is unlinked, never followed
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def discard(path: Path, why: str, what: str, source: str = "the files") -> None:
    """Delete a damaged derived database and its journal/WAL files, saying so."""
    for p in (Path(path), *(Path(f"{path}{s}") for s in SIDECARS)):
        _remove(p)
    log.warning("%s was damaged (%s): deleted %s; it is rebuilt from %s", what, why, path, source)


def quick_check(conn: sqlite3.Connection) -> str | None:
    """SQLite's quick_check (b-tree structure, not record contents): None when fine, else
    what it found first. Other errors (a lock held too long) are raised."""
    try:
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            return str(exc)
        raise
    first = " ".join(str(rows[0][0]).split()) if rows else "no answer"
    return None if first == "ok" else first


def connect(path: Path, setup: Callable[[sqlite3.Connection], Any], *, what: str,
            source: str = "the files", **options: Any) -> sqlite3.Connection:
    """Open a derived database and run `setup` on it; a damaged file (or a folder standing
    in its place) is deleted and created anew, once. Other errors are raised."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in (1, 2):
        found = squatter(path)
        if found:
            discard(path, f"{found} stood where the database belongs", what, source)
        conn = sqlite3.connect(path, **options)
        try:
            setup(conn)
            return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            if attempt == 2 or not is_damage(exc):
                raise
            discard(path, str(exc), what, source)
    raise AssertionError("unreachable")


# -- noticing a database changed behind our back ---------------------------------------

def file_key(path: Path) -> str | None:
    """Identity and last change of a file, as text (None when it is missing)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def stamp_matches(path: Path, stamp: Path) -> bool:
    """Is `path` exactly as it was when `stamp` was last written for it?"""
    key = file_key(path)
    try:
        return key is not None and stamp.read_text(encoding="ascii").strip() == key
    except (OSError, ValueError):
        return False


def write_stamp(path: Path, stamp: Path, key: str | None = None) -> None:
    """Remember `path` as it is now (or as `key` says it was). Best effort and not synced: a
    lost stamp costs one check the next time, nothing else, and a writer must not wait for it."""
    key = key or file_key(path)
    if key is None:
        return
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}.mvtmp")
    try:
        tmp.write_text(key + "\n", encoding="ascii")
        os.replace(tmp, stamp)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@functools.lru_cache(maxsize=64)
def source_fingerprint(seed: str, *modules: str) -> str:
    """A digest of `seed` and the source of `modules` (dotted names; a package stands for all its
    modules): derived state computed by other code than this is stale and is rebuilt."""
    h = hashlib.sha1(seed.encode())
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise MemvaultError(f"cannot find the source of {name}")
        origin = Path(spec.origin)
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            h.update(f.read_bytes())
    return h.hexdigest()
