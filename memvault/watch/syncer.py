"""`memvault watch --sync`: when the committer thread commits and syncs, and what it says.

The committer thread (threads.py) does both, so a commit and a sync never run at the same
time in one watcher. Pure pieces here: `decide` (what is due now) and `describe` (a sync's
log line); `blocked` asks git whether a merge or rebase is under way; `SyncRunner` is the thin
shell around `memvault.sync.run.sync` that logs, holds a stopped sync and never raises.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Protocol

from memvault.config.core import Config
from memvault.errors import MemvaultError
from memvault.parsed import ParsedVault
from memvault.sync.state import alive, git_dir, in_progress, read_step
from memvault.watch.logsink import LogSink
from memvault.watch.state import WatchRecord, now_iso

SYNC_INTERVAL = 60.0  # seconds between syncs when neither --sync SECONDS nor [sync] interval_seconds says
GIT_BUSY = ("MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD")


def sync_interval(config: Config, given: float | None) -> float | None:
    """Seconds between syncs: None without --sync; `--sync` alone (0) takes `[sync]
    interval_seconds` (0 or unset there: SYNC_INTERVAL)."""
    if given is None:
        return None
    return given or float(config.section("sync", {}).get("interval_seconds") or SYNC_INTERVAL)


def decide(now: float, *, dirty: bool, last_change: float, quiet: float, sync_at: float,
           stopping: bool) -> tuple[str, float | None]:
    """What the committer thread does now: ("commit" | "sync" | "stop" | "wait", seconds to wait,
    None for "until something changes"). A sync that falls due while files are still being
    written waits for the quiet period (then the commit is followed by a sync anyway), but no
    longer than one quiet period past its time, so a file written without pause still syncs."""
    if stopping:
        return ("commit" if dirty else "stop"), 0.0
    quiet_at = last_change + quiet
    if dirty and now >= quiet_at:
        return "commit", 0.0
    if now >= sync_at and (not dirty or now >= sync_at + quiet):
        return "sync", 0.0
    wake = min(quiet_at, sync_at + quiet) if dirty else sync_at
    return "wait", None if math.isinf(wake) else max(wake - now, 0.0)


def blocked(root: Path, *, committing: bool) -> str | None:
    """Why the watcher may not commit (or sync) now: a merge, rebase or cherry-pick under way, a
    sync stopped for the person, another process's sync running. None when it may. An interrupted
    sync (its process gone) does not block a sync, which recovers it, nor a commit unless git was
    left in the middle of a merge."""
    gdir = git_dir(root)
    busy = in_progress(root, gdir)
    if busy is None:
        return None
    step = read_step(gdir)
    git_busy = any((gdir / name).exists() for name in GIT_BUSY)
    if step is not None and step.get("step") == "stopped" and not (gdir / "MERGE_HEAD").exists():
        return None  # the person committed or aborted the merge: the next sync tidies up
    if busy.what == "sync" and step is not None and not _other_live(step) and not (committing and git_busy):
        return None
    return busy.message


def _other_live(step: dict[str, Any]) -> bool:
    pid = step.get("pid")
    return isinstance(pid, int) and pid != os.getpid() and alive(pid)


def describe(report: dict[str, Any]) -> str | None:
    """One log line for a sync, or None when there is nothing to say (already up to date)."""
    parts = []
    if report.get("recovered"):
        parts.append(str(report["recovered"]))
    if report.get("merged_from"):
        parts.append(f"brought in {report['merged_from']} commit(s)")
    if report.get("pushed"):
        parts.append(f"pushed {report['pushed']} commit(s)")
    if report.get("conflicts"):
        parts.append(f"{len(report['conflicts'])} entry conflict(s) marked (`memvault check` lists them)")
    if report.get("reviews"):
        parts.append(f"{len(report['reviews'])} MEMORY.md bullet(s) for `memvault curate`")
    if not parts:
        return None
    return f"synced with {report.get('remote')}/{report.get('branch')}: {report.get('result')}; " + "; ".join(parts)


class Host(Protocol):
    root: Path
    vault: ParsedVault
    record: WatchRecord
    log: LogSink

    def request_record(self) -> None: ...


class SyncRunner:
    """One watcher's syncs: each failure logged once per attempt (the next interval tries again),
    a sync stopped for the person logged once and not tried again until git's state or the
    vault's files change, nothing tried while a merge or rebase is under way."""

    def __init__(self, watcher: Host, every: float):
        self.w = watcher
        self.every = every
        self.changes = 0  # vault changes the watcher indexed (a stopped sync waits for one)
        self._said: str | None = None  # the last "not syncing because" line, said once
        self._stopped: tuple[str | None, int] | None = None

    def hold(self, why: str | None) -> None:
        """Log `why` nothing is done now, once while it stays the same."""
        if why is not None and why != self._said:
            self.w.log("warning", f"not committing or syncing: {why}")
        self._said = why

    def run(self) -> None:
        """One sync if it may run now; never raises (the watcher goes on whatever a sync meets)."""
        try:
            self._run()
        except MemvaultError as exc:  # a GitError from asking git's state, a lock, the network
            self._note("error", f"sync failed, will retry in {self.every:g}s: {exc}", exc)
        except Exception as exc:  # never let one sync end the watcher
            self._note("error", f"sync failed, will retry in {self.every:g}s: {type(exc).__name__}: {exc}", exc)

    def _run(self) -> None:
        from memvault.sync.run import SyncStopped, sync

        why = blocked(self.w.root, committing=False)
        if why is not None:
            return self.hold(why)
        self._said = None
        if self._stopped == (why, self.changes):
            return None  # stopped for the person and nothing changed since
        self._stopped = None
        try:
            report = sync(self.w.vault, say=lambda m: self.w.log("sync", m)).as_dict()
        except SyncStopped as exc:
            after = blocked(self.w.root, committing=False)
            self._stopped, self._said = (after, self.changes), after
            said = str(exc) if str(exc).startswith("sync stopped") else f"sync stopped: {exc}"
            self._note("warning", f"{said}; the watcher tries again once that changes", exc)
            return None
        self.w.record.sync = {"at": now_iso(), "result": str(report["result"])}
        self.w.request_record()
        line = describe(report)
        if line:
            self.w.log("sync", line, result=report["result"], pushed=report["pushed"],
                       merged_from=report["merged_from"], conflicts=report["conflicts"])
        return None

    def _note(self, kind: str, message: str, exc: Exception) -> None:
        self.w.record.sync = {"at": now_iso(), "result": "stopped" if kind == "warning" else "failed",
                              "error": str(exc)}
        self.w.record.add_error(message)
        self.w.request_record()
        self.w.log(kind, message)
