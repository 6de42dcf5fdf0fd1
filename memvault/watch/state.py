"""The watcher's lock and its status record, and how healthy a watcher looks from outside.

One watcher per vault: it holds an exclusive `flock` on `.memvault/watch.lock` for its
whole life. The kernel drops the lock when the process dies, even on SIGKILL, so a dead
watcher never blocks a new one and "is one running?" never trusts a stale pid file.

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

from ..errors import MemvaultError
from ..fsio import DERIVED_DIR

LOCK_NAME = "watch.lock"
STATUS_NAME = "watch.json"
HEARTBEAT = 5.0  # seconds between status rewrites when idle
STALE_AFTER = 4 * HEARTBEAT
MAX_ERRORS = 20


class WatcherRunning(MemvaultError):
    """Another `memvault watch` already watches this vault."""


def lock_path(root: Path) -> Path:
    return Path(root) / DERIVED_DIR / LOCK_NAME


def status_path(root: Path) -> Path:
    return Path(root) / DERIVED_DIR / STATUS_NAME


class WatchLock:
    """The single-watcher lock. `acquire` waits `wait` seconds (a status probe may hold a
    shared lock for a moment), then refuses with the other watcher's pid."""

    def __init__(self, root: Path):
        self.path = lock_path(root)
        self.fd: int | None = None

    def acquire(self, wait: float = 0.5) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
                    os.close(fd)
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    who = f" (pid {pid})" if pid.isdigit() else ""
                    raise WatcherRunning(
                        f"another memvault watcher{who} is already watching {self.path.parent.parent}; "
                        f"stop it first (one watcher per vault keeps the index consistent)"
                    ) from None
                time.sleep(0.02)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def watcher_alive(root: Path) -> bool:
    """True while some process holds the watcher lock (checked without disturbing it for long)."""
    path = lock_path(root)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
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

    def add_error(self, message: str, path: str = "") -> None:
        self.errors.append({"at": now_iso(), "path": path, "message": message})
        del self.errors[:-MAX_ERRORS]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def record_text(record: WatchRecord) -> str:
    record.heartbeat = now_iso()
    return json.dumps(record.to_dict(), indent=1) + "\n"



def read_record(root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(status_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


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
    except ValueError:
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
    broken = record.get("broken") or {}
    if broken:
        extra += f", {len(broken)} file{'s' * (len(broken) != 1)} failing to parse (last good entries kept)"
    msg = f"watcher running (pid {record.get('pid')}, {record.get('observer') or 'starting'}{extra})"
    if files and not pending:
        msg += lag
    elif files:
        msg += f"; catching up on {files} changed file{'s' * (files != 1)}"
    return Health("running", msg, behind, record)
