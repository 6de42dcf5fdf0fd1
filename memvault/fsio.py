"""Every write memvault makes goes through these helpers.

`rewrite` changes a user's file (a daily log, MEMORY.md) without losing a save that another
program makes at the same moment; `atomic_write` writes memvault's own files (config, derived
state) in one step (temp file in the same directory, fsync, `os.replace`), so a reader or a crash
never sees half a file. `locked` serialises read-modify-write cycles between memvault processes
with `flock` on a side file: the lock cannot live on the target itself because the target's inode
changes on replace.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Final

from memvault.errors import LockTimeout, MemvaultError, WriteConflict
from memvault.textsafety import normalize_newlines

DERIVED_DIR = ".memvault"
BOM = b"\xef\xbb\xbf"


def atomic_write(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` atomically, keeping the file's permissions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    _replace_via_temp(path, raw, mode=mode)


def _replace_via_temp(path: Path, raw: bytes, *, mode: int | None = None) -> None:
    """Temp file beside `path`, synced, then renamed over it."""
    tmp = temp_beside(path, raw, _mode_of(path) if mode is None else mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def temp_beside(path: Path, raw: bytes, mode: int) -> Path:
    """A synced temp file holding `raw` in `path`'s folder (so a rename of it is atomic)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".mvtmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o644


# ------------------------------------------------------------ rewriting a user's file, losslessly
#
# Editors, sync tools and scripts save a user's file without memvault's lock, most of them by a
# temp file renamed over it. Comparing the file with what was read and then renaming over it leaves
# a window in which such a save is lost. So a write either appends in place, never touching bytes
# another save could have changed, or swaps the new file in with renameat2(RENAME_EXCHANGE), which
# hands back exactly the file it displaced: deleted when it is what the edit was made on, else put
# straight back and the edit made again on it. A save made on memvault's version in the moment it
# was visible is carried over if it only added lines, else kept in a conflict file: never dropped.
# docs/format.md#writing describes the guarantees.

AT_FDCWD = -100
RENAME_EXCHANGE = 2


class _Retry(Enum):
    """The file changed under an attempt: read it again (a sentinel the types can tell apart)."""

    token = 0


_RETRY: Final = _Retry.token
# what one attempt ends with: the bytes written, None (nothing to write), _RETRY, or an unsure
# append (the block and the file's count of it before)
_Outcome = bytes | None | _Retry | tuple[bytes, int]


def rewrite(path: Path, edit: Callable[[bytes | None], bytes | None], *, attempts: int = 20,
            what: str | None = None) -> bytes | None:
    """Replace the content of a user's file with `edit(its bytes)`, losing no concurrent save.

    Call it holding the vault's lock: that orders memvault's own writers; this guards against
    everyone else. `edit` gets the file's bytes (None: no such file) and returns the new bytes, or
    None to leave the file alone. It is called again on the current bytes whenever the file
    changed under it, so it must depend on nothing else (it may raise to give up). Returns the
    bytes written, or None. Raises WriteConflict when the file keeps changing for `attempts`
    tries, and when a save collided with memvault's in a way it cannot undo (it keeps that save).
    """
    path = Path(path)
    what = what or str(path)
    landed: tuple[bytes, int] | None = None  # an appended block whose fate is unknown, its count before
    for attempt in range(attempts):
        if attempt:
            time.sleep(min(0.01 * attempt, 0.1))
        outcome = _attempt(path, edit, what, landed)
        if isinstance(outcome, tuple):
            landed = outcome
        elif outcome is not _RETRY:
            return outcome
    raise WriteConflict(f"{what} kept changing while memvault was writing it ({attempts} tries); "
                        "nothing was written, try again")


def _attempt(path: Path, edit: Callable[[bytes | None], bytes | None], what: str,
             landed: tuple[bytes, int] | None) -> _Outcome:
    """One read-edit-write; the new bytes, None (nothing to write), _RETRY, or an unsure append."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # not for writing: a watcher would see a write on close
    except FileNotFoundError:
        if path.is_symlink():
            raise MemvaultError(f"{what} is a symbolic link to a missing file; not writing through it") from None
        new = edit(None)
        if new is None:
            return None
        return new if _create(path, new) else _RETRY
    try:
        before = _read_fd(fd)
        if landed is not None and before.count(landed[0]) > landed[1]:
            return before  # the append of an earlier try was kept by whoever replaced the file
        new = edit(before)
        if new is None or new == before:
            return None
        # A symbolic link is replaced, as it always was, not written through.
        if before and new.startswith(before) and not path.is_symlink():
            appended = _append(fd, path, before, new[len(before):], new)
            if appended is not None:
                return appended
        return new if _swap_in(path, os.fstat(fd), before, new, what) else _RETRY
    finally:
        os.close(fd)


def _read_fd(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _append(fd: int, path: Path, before: bytes, tail: bytes, new: bytes) -> _Outcome:
    """Append `tail` in place, so no byte another save could have written is rewritten.

    Returns the new bytes, _RETRY, an unsure append (see `rewrite`), or None when the file
    cannot be opened for writing (read-only: it is replaced instead, as an editor would).
    """
    try:
        wfd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    except PermissionError:
        return None
    except FileNotFoundError:
        return _RETRY
    try:
        if not _same_file(os.fstat(wfd), os.fstat(fd)) or _read_fd(fd) != before:
            return _RETRY  # replaced or changed in place since it was read
        _write_all(wfd, tail)
        try:
            if _same_file(os.stat(path), os.fstat(wfd)):
                return new
        except FileNotFoundError:
            pass
    finally:
        os.close(wfd)
    # Renamed over since it was opened: the bytes went to the file that was replaced, and the
    # replacement holds them only if it was read after they were written. The next try tells.
    block = tail.lstrip(b"\r\n")
    return (block, before.count(block))


def _create(path: Path, new: bytes) -> bool:
    """Create `path` holding `new`, whole; False when someone else created it first."""
    tmp = temp_beside(path, new, 0o644)
    try:
        os.link(tmp, path)  # unlike a rename, fails rather than replace a file created meanwhile
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        return _create_exclusive(path, new)  # no hard links on this file system
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _create_exclusive(path: Path, new: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return False
    try:
        _write_all(fd, new)
    finally:
        os.close(fd)
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def _swap_in(path: Path, read: os.stat_result, before: bytes, new: bytes, what: str) -> bool:
    """Put `new` in place of `before` (the bytes of file `read`); False (nothing lost, nothing
    written) if it is not there any more."""
    tmp = temp_beside(path, new, _mode_of(path))
    try:
        if _read(path) != before:
            return False  # changed already: do not even briefly show an edit of stale bytes
        try:
            exchanged = exchange(tmp, path)
        except FileNotFoundError:
            return False  # deleted meanwhile
        if not exchanged:
            os.replace(tmp, path)  # best effort: a save in the last microseconds is lost
            return True
        displaced = os.stat(tmp)
        # Same file and bytes: the edit was made on it. Anything else is a save that landed after
        # the read; it goes straight back (first the cheap check, to show `new` for the least
        # time), and the edit is made again on it.
        if _same_file(displaced, read) and tmp.read_bytes() == before:
            return True
        _swap_back(tmp, path, displaced, new, what)
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _swap_back(tmp: Path, path: Path, theirs: os.stat_result, new: bytes, what: str) -> None:
    """Put the displaced save `theirs` back at `path`; `tmp` then holds memvault's version.

    Another save can have been made on memvault's version while it was visible. One that only
    added to its end is carried over by appending the addition to the save put back; any other
    is kept in a conflict file.
    """
    try:
        exchange(tmp, path)
        back = tmp.read_bytes()
    except OSError:
        back = None
    if back == new:
        return
    if back is not None and back.startswith(new) and _carry(path, theirs, back[len(new):]):
        return
    _keep_conflict(tmp, path, what)


def _carry(path: Path, theirs: os.stat_result, tail: bytes) -> bool:
    """Append `tail` to `path` if it still is the file `theirs`; True when it surely landed there."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        here = os.fstat(fd)
        if not _same_file(here, theirs):
            return False
        if here.st_size and os.pread(fd, 1, here.st_size - 1) != b"\n":
            tail = b"\n" + tail  # not glued onto their last line
        _write_all(fd, tail)
        return _same_file(os.stat(path), theirs)
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)


def _keep_conflict(tmp: Path, path: Path, what: str) -> None:
    """A save memvault cannot merge with the one it put back: keep it beside the file, say so."""
    kept = path.with_name(f"{path.name}.conflict-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    os.rename(tmp, kept)
    raise WriteConflict(
        f"{what}: another program saved it twice while memvault was writing it, and the saves cannot "
        f"be merged; nothing was dropped: one is in {path.name}, the other in {kept.name} (with "
        "memvault's change); compare the two and merge by hand",
        kept=kept,
    )


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where not available."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False  # this file system (or kernel) cannot exchange
    raise OSError(err, os.strerror(err), str(b))


@functools.cache
def _renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28 (musl has it too, as a wrapper)
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def append_spacing(text: str) -> str:
    """What goes between `text` and a block added after it: one blank line, whatever it ends with."""
    if not text or text.endswith("\n\n"):
        return ""
    return "\n" if text.endswith("\n") else "\n\n"


def encode_like(raw: bytes, old: str, new: str) -> bytes:
    """`new` (LF text) in the line endings and BOM of `raw`, whose decoded text is `old`.

    When `new` only adds to the end of `old`, the result is `raw` itself plus the addition, so the
    write can append in place and no byte the file held is rewritten.
    """
    eol = "\r\n" if b"\r\n" in raw else "\n"
    if old and new.startswith(old):
        return raw + new[len(old):].replace("\n", eol).encode("utf-8")
    return (BOM if raw.startswith(BOM) else b"") + new.replace("\n", eol).encode("utf-8")


@contextlib.contextmanager
def locked(lock_path: Path, *, timeout: float = 10.0, what: str = "the vault",
           file: str | None = None, setting: str = "") -> Iterator[None]:
    """Hold an exclusive lock on `lock_path`; wait up to `timeout` seconds, then fail clearly
    (a LockTimeout naming `file`, the vault file the write was for, when given, and the
    `setting` that sets the wait)."""
    lock_path = Path(lock_path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    held = False
    try:
        if not flock_by(fd, time.monotonic() + timeout):
            raise LockTimeout(f"{lock_holder(fd)} holds the lock for {what}; gave up after {timeout:g}s"
                              f"{f' ({setting})' if setting else ''} (lock: {lock_path})", file=file)
        held = True
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            if held:  # the pid names the holder only while it holds the lock
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def flock_by(fd: int, deadline: float, *, optional: bool = False) -> bool:
    """Take an exclusive flock on `fd`, retrying (5 ms, doubling to 100 ms) until `deadline`
    (a `time.monotonic()` value); False when another process still holds it then. With
    `optional`, a file system that cannot lock this (EBADF, ENOLCK, EOPNOTSUPP on some network
    file systems) counts as taken."""
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                if optional:
                    return True
                raise
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def lock_holder(fd: int) -> str:
    """Who holds the flock on `fd`'s file, as a lock error says it: "another process (pid N)"
    only for a pid that holds it now, else "another process". The file keeps the pid memvault
    wrote when it took the lock (cleared on release, but not by a killed process), and a process
    that is not memvault writes none, so the pid written is trusted only when /proc/locks shows it
    holding the lock; where /proc/locks cannot be read, only while that pid is alive."""
    try:
        written = int(os.pread(fd, 32, 0).decode().strip() or 0)
    except (OSError, ValueError):
        written = 0
    holders = flock_holders(os.fstat(fd))
    if holders is None:
        pid = written if written > 0 and _alive(written) else 0
    else:
        pid = written if written in holders else min(holders, default=0)
    return f"another process (pid {pid})" if pid else "another process"


def flock_holders(st: os.stat_result) -> set[int] | None:
    """The pids /proc/locks shows holding a flock on the file `st` describes (none of them 0:
    a holder in another pid namespace), or None where /proc/locks cannot be read."""
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            rows = [line.split() for line in f]
    except OSError:
        return None
    # `1: FLOCK  ADVISORY  WRITE 4120 08:01:1234 0 EOF`; a waiter's row has `->` after the number
    return {int(r[4]) for r in rows if len(r) > 5 and r[1] == "FLOCK" and r[5] == want and r[4].isdigit()
            and int(r[4]) > 0}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def read_text(path: Path) -> tuple[str, list[tuple[int, str]]]:
    """Read a Markdown file as text, never failing on its content.

    Returns the text with a BOM stripped and CRLF/CR line endings normalised to LF, and a
    list of (line, message) notes for what had to be repaired (invalid UTF-8).
    """
    raw = Path(path).read_bytes()
    return decode_text(raw)


def decode_text(raw: bytes) -> tuple[str, list[tuple[int, str]]]:
    notes: list[tuple[int, str]] = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        notes.append((line, f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced"))
        text = raw.decode("utf-8", errors="replace")
    return normalize_newlines(text), notes
