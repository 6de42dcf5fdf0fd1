"""The watcher's lock and its status record, and how healthy a watcher looks from outside.

One watcher per vault: it holds an exclusive `flock` on the vault folder itself (an open
descriptor of the directory) and on `.memvault/watch.lock` (which names its pid) for its
whole life. The kernel drops the locks when the process dies, even on SIGKILL, so a dead
watcher never blocks a new one and "is one running?" never trusts a stale pid file. The
folder's lock is the one that counts: `rm -rf .memvault` under a running watcher deletes
the lock file (a new one would be free to lock), not the folder. The watcher writes its pid
file again on its next heartbeat. Where a folder cannot be locked (some network file
systems), the file lock alone is used, as before.

The status record `.memvault/watch.json` is rewritten atomically on every batch and at
least every HEARTBEAT seconds; a record whose heartbeat is old while the lock is still
held means a hung watcher.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memvault.errors import Refused
from memvault.fsio import DERIVED_DIR, flock_by

LOCK_NAME = "watch.lock"
STATUS_NAME = "watch.json"
HEARTBEAT = 5.0  # seconds between status rewrites when idle
STALE_AFTER = 4 * HEARTBEAT
MAX_ERRORS = 20


class WatcherRunning(Refused):
    """Another `memvault watch` already watches this vault."""


def lock_path(root: Path) -> Path:
    return Path(root) / DERIVED_DIR / LOCK_NAME


def status_path(root: Path) -> Path:
    return Path(root) / DERIVED_DIR / STATUS_NAME


BUSY = (errno.EAGAIN, errno.EACCES)


class WatchLock:
    """The single-watcher lock. `acquire` waits `wait` seconds (a status probe may hold a
    shared lock for a moment), then refuses with the other watcher's pid."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.path = lock_path(root)
        self.fd: int | None = None
        self.dir_fd: int | None = None

    def acquire(self, wait: float = 0.5) -> None:
        deadline = time.monotonic() + wait
        dir_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if not flock_by(dir_fd, deadline, optional=True):
                raise self._running()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            taken = False
            try:
                taken = flock_by(fd, deadline)
            finally:
                if not taken:
                    os.close(fd)
            if not taken:
                raise self._running()
        except BaseException:
            os.close(dir_fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd, self.dir_fd = fd, dir_fd

    def _running(self) -> WatcherRunning:
        try:
            pid = self.path.read_text(errors="replace").strip()
        except OSError:
            pid = ""
        who = f" (pid {pid})" if pid.isdigit() else ""
        return WatcherRunning(f"another memvault watcher{who} is already watching {self.root}; "
                              f"stop it first (one watcher per vault keeps the index consistent)")

    def refresh(self) -> None:
        """Write the pid file again if `.memvault/` was deleted (the folder lock still holds)."""
        if self.fd is None or self.path.exists():
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            os.close(self.fd)
            self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
        if self.dir_fd is not None:
            os.close(self.dir_fd)  # closing drops the folder's lock
            self.dir_fd = None


def watcher_alive(root: Path) -> bool:
    """True while some process holds the watcher lock, on the vault folder or on its lock
    file (checked without disturbing them for long)."""
    for path, flags in ((Path(root), os.O_RDONLY | os.O_DIRECTORY), (lock_path(root), os.O_RDONLY)):
        try:
            fd = os.open(path, flags)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in BUSY:
                return True
        finally:
            os.close(fd)  # closing drops our shared lock at once
    return False


# -- the status record ---------------------------------------------------------------

def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class WatchRecord:
    """What `.memvault/watch.json` holds."""

    pid: int
    started: str
    vault: str
    state: str = "starting"  # starting, ready, stopping, stopped
    observer: str = ""  # inotify or polling
    debounce_ms: float = 0.0
    heartbeat: str = ""
    last_event: str | None = None
    last_update: str | None = None
    pending: int = 0
    updates: int = 0
    files_on_disk: int = 0
    files_indexed: int = 0
    events_indexed: int | None = None
    events_on_disk: int | None = None  # the index plus what the files failing to parse hold now
    broken: dict[str, str] = field(default_factory=dict)  # path -> why its last good entries are kept
    errors: list[dict[str, str]] = field(default_factory=list)
    commit: dict[str, Any] = field(default_factory=dict)
    sync_every: float = 0.0  # --sync: seconds between syncs (0: the watcher does not sync)
    sync: dict[str, Any] = field(default_factory=dict)  # the watcher's last sync: at, result, error
    semantic_queries: bool = False  # it answers other processes' semantic side (query_server.py)

    def add_error(self, message: str, path: str = "") -> None:
        self.errors.append({"at": now_iso(), "path": path, "message": message})
        del self.errors[:-MAX_ERRORS]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def record_text(record: WatchRecord) -> str:
    record.heartbeat = now_iso()
    return json.dumps(record.to_dict(), indent=1) + "\n"



def read_record(root: Path) -> dict[str, Any] | None:
    """The status record's fields that have the right type (a damaged, hand-edited or
    foreign `watch.json` must not break `memvault status`), or None when there is none."""
    try:
        data = json.loads(status_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return checked_record(data) if isinstance(data, dict) else None


SCALARS: dict[str, type | tuple[type, ...]] = {
    "pid": int, "started": str, "vault": str, "state": str, "observer": str, "debounce_ms": (int, float),
    "heartbeat": str, "last_event": str, "last_update": str, "pending": int, "updates": int,
    "files_on_disk": int, "files_indexed": int, "events_indexed": int, "events_on_disk": int,
    "semantic_queries": bool, "sync_every": (int, float),
}  # fmt: skip


def _strings(value: Any) -> dict[str, str]:
    """The string items of a dict (broken files, an error, the last commit all hold only strings)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def checked_record(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in data.items() if k in SCALARS and isinstance(v, SCALARS[k])
                           and (SCALARS[k] is bool or not isinstance(v, bool))}
    out["broken"] = _strings(data.get("broken"))
    errors = data.get("errors")
    out["errors"] = [_strings(e) for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    out["commit"] = _strings(data.get("commit"))
    out["sync"] = _strings(data.get("sync"))
    return out


# -- health, as `memvault status` reports it -------------------------------------------

@dataclass
class Health:
    state: str  # "running", "not running", "gone", "stale"
    message: str
    behind: list[str] = field(default_factory=list)
    record: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "message": self.message, "behind": self.behind,
                "record": self.record}


def _age(stamp: str | None, now: datetime) -> float | None:
    if not stamp:
        return None
    try:
        return (now - datetime.fromisoformat(stamp)).total_seconds()
    except (TypeError, ValueError):  # not a time, or one without a zone
        return None


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def classify(record: dict[str, Any] | None, alive: bool, behind: list[str], now: datetime) -> Health:
    """The watcher's health from its record, whether its lock is held, and the files the
    index has not caught up with (pure: every input is given)."""
    files = len(behind)
    lag = f"; the index is behind the files ({files} file{'s' * (files != 1)} changed: " + \
        ", ".join(behind[:3]) + (", ..." if files > 3 else "") + ")" if files else ""
    if not alive:
        if record and record.get("state") not in ("stopped", None):
            seen = _age(record.get("heartbeat"), now)
            when = f", last seen {_ago(seen)}" if seen is not None else ""
            msg = f"watcher gone: pid {record.get('pid')} stopped without shutting down{when}"
            return Health("gone", msg + (lag or "; run `memvault watch` to keep the index current"), behind, record)
        msg = "no watcher running" + (lag + "; run `memvault index` or `memvault watch`" if lag else "")
        return Health("not running", msg, behind, record)
    if record is None:
        return Health("running", "watcher starting" + lag, behind, record)
    beat = _age(record.get("heartbeat"), now)
    if beat is not None and beat > STALE_AFTER:
        msg = f"watcher stale: pid {record.get('pid')} holds the lock but last reported {_ago(beat)}"
        return Health("stale", msg + lag, behind, record)
    pending = record.get("pending", 0)
    extra = f", {pending} pending" if pending else ""
    extra += ", answers semantic queries" if record.get("semantic_queries") else ""
    msg = f"watcher running (pid {record.get('pid')}, {record.get('observer') or 'starting'}{extra})"
    if files and not pending:
        msg += lag
    elif files:
        msg += f"; catching up on {files} changed file{'s' * (files != 1)}"
    return Health("running", msg, behind, record)
