"""Stale git lock files left by a killed git are removed; a live one never is.

git takes `.git/index.lock` (and, to move a branch, `HEAD.lock` and `refs/heads/<branch>.lock`)
by creating the file with O_EXCL, and deletes it when done. A git killed in between (the
watcher's process group killed during an auto-commit) leaves the file behind, and every later
commit fails with "Unable to create '.../index.lock': File exists" until someone deletes it.

A lock is **stale** when all of these hold:

- it is older than `STALE_AFTER` seconds (git holds these files for moments, except while a
  hook or the commit-message editor runs, and those are covered below; the age is the
  backstop for processes memvault cannot see, such as git in another container sharing the
  folder);
- no process has the file open (Linux: the links in `/proc/*/fd`);
- no git process runs in the repository (Linux: `/proc/*/comm` starting with "git" and
  `/proc/*/cwd` inside the work tree or the git folder). This is what protects a commit
  whose hook is running: git closes the lock file while it waits for the hook, but stays
  alive in the repository. A git process whose folder cannot be read (another user's)
  counts as running here.

Where there is no `/proc` (macOS, the BSDs) nothing is removed and the commit fails as
before, naming the file. A removal is said (a log line and the `memvault` logger).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

STALE_AFTER = 60.0  # seconds
PROC = Path("/proc")


@dataclass(frozen=True)
class LockState:
    path: Path
    age: float
    holder: str | None  # why it is live, or None when stale
    key: tuple[int, int] = (0, 0)  # inode and mtime_ns, to remove exactly the file judged

    @property
    def stale(self) -> bool:
        return self.holder is None


def lock_files(git_dir: Path, common_dir: Path) -> list[Path]:
    """The locks a commit takes: the index, HEAD and the branch HEAD names."""
    out = [git_dir / "index.lock", git_dir / "HEAD.lock"]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if head.startswith("ref: refs/"):
            out.append(common_dir / (head[5:] + ".lock"))
    return out


def judge(path: Path, repo_dirs: list[Path], *, now: float | None = None,
          stale_after: float = STALE_AFTER) -> LockState | None:
    """The state of lock file `path` (None when there is none)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    age = (now if now is not None else time.time()) - st.st_mtime
    key = (st.st_ino, st.st_mtime_ns)
    if age < stale_after:
        return LockState(path, age, f"it is only {age:.0f}s old (stale after {stale_after:g}s)", key)
    return LockState(path, age, holder(path, repo_dirs), key)


def holder(path: Path, repo_dirs: list[Path]) -> str | None:
    """A live process that may own the lock, described; None when there is none."""
    if not (PROC / "self" / "fd").is_dir():
        return "no /proc to look for the git process that owns it"
    target = os.path.realpath(path)
    dirs = [os.path.realpath(d) for d in repo_dirs]
    me = str(os.getpid())
    for entry in os.scandir(PROC):
        pid = entry.name
        if not pid.isdigit() or pid == me:
            continue
        if _has_open(pid, target):
            return f"process {pid} has it open"
        found = _git_in(pid, dirs)
        if found:
            return found
    return None


def _has_open(pid: str, target: str) -> bool:
    try:
        fds = os.listdir(PROC / pid / "fd")
    except OSError:  # gone, or another user's process (which could not write our .git anyway)
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(PROC / pid / "fd" / fd) == target:
                return True
    return False


def _git_in(pid: str, dirs: list[str]) -> str | None:
    try:
        comm = (PROC / pid / "comm").read_text().strip()
    except OSError:
        return None
    if not comm.startswith("git"):
        return None
    try:
        cwd = os.readlink(PROC / pid / "cwd")
    except FileNotFoundError:
        return None  # exited meanwhile
    except OSError:
        return f"{comm} (pid {pid}) runs and its folder cannot be read"
    if any(cwd == d or cwd.startswith(d + os.sep) for d in dirs):
        return f"{comm} (pid {pid}) runs in the repository"
    return None


def remove_stale(git_dir: Path, common_dir: Path, top: Path,
                 say: Callable[[str], None], *, stale_after: float = STALE_AFTER,
                 extra: tuple[Path, ...] = ()) -> list[LockState]:
    """Remove the stale locks of a commit (and the `extra` lock files: a sync's fetch, merge and
    config locks), saying so; returns every lock found (live ones stay, and the commit then fails
    naming them)."""
    found = []
    for path in [*lock_files(git_dir, common_dir), *extra]:
        state = judge(path, [top, git_dir, common_dir], stale_after=stale_after)
        if state is None:
            continue
        found.append(state)
        if state.stale and _unlink_if_same(path, state):
            say(f"removed a stale git lock {path} ({state.age:.0f}s old, no process holds it and no git "
                f"runs in the repository): a git process was killed while it held it")
    return found


def _unlink_if_same(path: Path, state: LockState) -> bool:
    """Unlink the very file judged (not one a new git created since), as far as a stat can tell."""
    try:
        st = os.stat(path)
        if (st.st_ino, st.st_mtime_ns) != state.key:
            return False
        os.unlink(path)
    except OSError:
        return False
    return True
