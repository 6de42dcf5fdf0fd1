"""The watcher's helper threads: the status-record writer, the disk scanner and the committer.

Each keeps slow work (an fsync, a stat walk with hashing, a git commit and its hooks) off the
worker thread that owns the index, so a save is never queued behind it.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import Protocol

from memvault.errors import GitError, Refused
from memvault.fsio import atomic_write
from memvault.parsed import ParsedVault
from memvault.watch.logsink import LogSink
from memvault.watch.state import WatchRecord, now_iso, record_text, status_path
from memvault.watch.sync import Stat, disk_state
from memvault.watch.syncer import SyncRunner, blocked, decide
from memvault.watch.verify import ContentCheck

LOCK_RETRY_SECONDS = 10.0  # a commit that met a live git lock is tried again after this long


class Host(Protocol):
    """What the scanner and the committer need of the `Watcher` (a protocol: watcher.py
    imports this module)."""

    root: Path
    vault: ParsedVault
    record: WatchRecord
    log: LogSink

    def reconcile_every(self) -> float: ...
    def offer_snapshot(self, disk: dict[str, Stat]) -> None: ...
    def request_record(self) -> None: ...


class RecordWriter:
    """Writes the status record on its own thread: an fsync must not delay an index update."""

    def __init__(self, root: Path, log: LogSink):
        self.root = root
        self.log = log
        self._cond = threading.Condition()
        self._text: str | None = None
        self._stopping = False
        self._write_lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="memvault-watch-record", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, record: WatchRecord) -> None:
        text = record_text(record)  # serialised here, so the record may change right after
        with self._cond:
            self._text = text
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join()
        self._flush()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._text is None and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
            self._flush()

    def write_now(self, record: WatchRecord) -> None:
        self.submit(record)
        self._flush()

    def _flush(self) -> None:
        with self._write_lock:  # taken before the text, so a newer record is never overwritten
            with self._cond:
                text, self._text = self._text, None
            if text is None:
                return
            try:
                atomic_write(status_path(self.root), text)
            except OSError as exc:
                self.log("error", f"cannot write the status record: {exc}")


class Scanner:
    """Takes the light reconcile's look at the disk (sizes and mtimes of every file, hashes of a slice) off the
    worker thread, every `reconcile` seconds, so a save is never queued behind a scan."""

    def __init__(self, watcher: Host):
        self.w = watcher
        self._stop = threading.Event()
        self._check = ContentCheck()  # hashes a slice of the files each time
        self._thread = threading.Thread(target=self._loop, name="memvault-watch-scan", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.w.reconcile_every()):
            try:
                self.w.offer_snapshot(self._check.hash_slice(self.w.root, disk_state(self.w.root, selection=self.w.vault.selection)))
            except Exception as exc:  # never let a scan error end the reconciles
                self.w.log("error", f"scanning the vault failed: {exc}")


class Committer:
    """Commits vault Markdown after `commit_quiet` seconds without a change; with `sync_every`
    (--sync) also syncs after each such commit and every `sync_every` seconds (syncer.py), on
    the same thread, so a commit and a sync never run at once."""

    def __init__(self, watcher: Host, quiet: float, sync_every: float | None = None):
        self.w = watcher
        self.quiet = quiet
        self._cond = threading.Condition()
        self._dirty = True  # whatever was left uncommitted before we started
        self._last_change = time.monotonic()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.syncer = SyncRunner(watcher, sync_every) if sync_every else None
        self._sync_at = time.monotonic() if sync_every else math.inf  # the first sync at start
        self._held: str | None = None  # why the last commit was not tried (a merge under way)

    def check(self) -> None:
        from memvault.sync.commit import repo_prefix

        repo_prefix(self.w.root)  # raises GitError when the vault is not in a git repository
        if self.syncer is not None:
            from memvault.sync.state import upstream_of

            remote, _branch, ref = upstream_of(self.w.root, **_where(self.w.vault))
            if ref is None:
                raise Refused(f"--sync: the vault's git repository has {'no branch checked out' if remote else 'no remote'}"
                              " to sync with; add one (`git remote add origin URL`), or drop --sync")

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="memvault-commit", daemon=True)
        self._thread.start()

    def changed(self) -> None:
        with self._cond:
            self._dirty = True
            self._last_change = time.monotonic()
            if self.syncer is not None:
                self.syncer.changes += 1
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()

    def _retry_in(self, seconds: float) -> None:
        with self._cond:
            self._dirty = True
            self._last_change = max(self._last_change, time.monotonic() + seconds - self.quiet)
            self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    action, wait = decide(now, dirty=self._dirty, last_change=self._last_change, quiet=self.quiet,
                                          sync_at=self._sync_at, stopping=self._stopping)
                    if action != "wait":
                        break
                    self._cond.wait(wait)
                if action == "commit":
                    self._dirty = False
                elif action == "sync":
                    self._sync_at = now + self.syncer.every if self.syncer else math.inf
                stopping = self._stopping
            if action == "stop":
                return
            if action == "sync":
                self._sync()
            elif self._commit() and not stopping:
                self._sync()  # what was just committed goes out at once
            if stopping:
                return

    def _sync(self) -> None:
        if self.syncer is None:
            return
        self.syncer.run()
        with self._cond:
            self._sync_at = time.monotonic() + self.syncer.every

    def _hold(self, why: str | None) -> None:
        """Say once why nothing is committed now; look again in a while (nothing else may wake us)."""
        if self.syncer is not None:
            self.syncer.hold(why)
        elif why is not None and why != self._held:
            self.w.log("warning", f"not committing: {why}")
        self._held = why
        if why is not None:
            self._retry_in(LOCK_RETRY_SECONDS)

    def _commit(self) -> bool:
        """Commit what changed; True when a commit was made."""
        from memvault.sync.commit import CommitRefused, GitLocked, commit_vault

        try:
            why = blocked(self.w.root, committing=True)
            if why is not None:  # a merge or rebase under way: its files are the person's (or git's) now
                self._hold(why)
                return False
            self._hold(None)
            done = commit_vault(self.w.root, self.w.vault.config, say=lambda m: self.w.log("warning", m))
        except GitError as exc:
            locked = isinstance(exc, GitLocked)
            when = f"in {LOCK_RETRY_SECONDS:g}s" if locked else "after the next change"
            self.w.record.commit = {"error": str(exc), "at": now_iso()}
            if isinstance(exc, CommitRefused):  # `status` says so, and that nothing was left staged
                self.w.record.commit["unstaged"] = ", ".join(exc.paths)
            self.w.record.add_error(f"commit failed: {exc}")
            self.w.log("error", f"commit failed, will retry {when}: {exc}")
            self.w.request_record()
            if locked:  # the lock may go away (or turn stale) without any change of ours
                self._retry_in(LOCK_RETRY_SECONDS)
            return False
        if done is None:
            return False
        subject = done.message.split("\n", 1)[0]
        self.w.record.commit = {"sha": done.sha, "message": subject, "at": now_iso()}
        self.w.request_record()
        self.w.log("commit", f"committed {done.sha[:8]} {subject}", sha=done.sha, paths=list(done.paths))
        return True


def _where(vault: ParsedVault) -> dict[str, str | None]:
    """The `[sync]` remote and branch, as `upstream_of` takes them."""
    settings = vault.config.section("sync", {})
    return {"remote": settings.get("remote"), "branch": settings.get("branch")}
