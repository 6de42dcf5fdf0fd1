"""Every write memvault makes goes through these helpers.

`atomic_write` replaces a file in one step (temp file in the same directory, fsync,
`os.replace`), so a reader or a crash never sees half a file. `locked` serialises
read-modify-write cycles between memvault processes with `flock` on a side file: the
lock cannot live on the target itself because the target's inode changes on replace.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .errors import LockTimeout
from .textsafety import normalize_newlines

DERIVED_DIR = ".memvault"


def atomic_write(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` atomically, keeping the file's permissions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    _replace_via_temp(path, raw, mode=mode)


def replace_if_unchanged(path: Path, data: bytes, expected: bytes | None) -> bool:
    """Atomically write `data` to `path` only if the file still holds `expected` (None: absent).

    The lock only serialises memvault processes; an editor saving in place (truncate, then
    write) does not take it. The temp file is written and synced first, so the window between
    the comparison and the rename is as short as it can be. False: the file changed meanwhile
    (the caller reads it again and redoes its edit), and nothing was written.
    """
    path = Path(path)

    def unchanged() -> bool:
        try:
            return path.read_bytes() == expected
        except FileNotFoundError:
            return expected is None

    return _replace_via_temp(path, data, ready=unchanged)


def _replace_via_temp(path: Path, raw: bytes, *, mode: int | None = None, ready=None) -> bool:
    """Temp file beside `path`, synced, then renamed over it if `ready()` (default: always)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".mvtmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if ready is not None and not ready():
            os.unlink(tmp)
            return False
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        return True
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(lock_path: Path, *, timeout: float = 10.0, what: str = "the vault") -> Iterator[None]:
    """Hold an exclusive lock on `lock_path`; wait up to `timeout` seconds, then fail clearly."""
    lock_path = Path(lock_path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    raise LockTimeout(
                        f"another memvault process{holder} is writing {what}; "
                        f"gave up after {timeout:g}s (lock: {lock_path})"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


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
