"""`memvault watch`: the long-running shell around the pure pieces of this package.

Threads: watchdog's observer threads turn OS events into keys ("re-read these paths") in
a per-path debounce; one worker thread owns the index and does every update (startup
reconcile, debounced batches, periodic light reconcile, flush on stop); with --commit a
committer thread commits after a quiet period, so a slow git hook never delays indexing; with
--sync it also syncs after each such commit and on an interval (syncer.py).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memvault.errors import MemvaultError
from memvault.layout import Selection
from memvault.parsed import ParsedVault
from memvault.watch.debounce import DEFAULT_DEBOUNCE, DEFAULT_MAX_DELAY, Coalescer
from memvault.watch.logsink import LogSink
from memvault.watch.observe import VaultObserver
from memvault.watch.paths import touched
from memvault.watch.query_server import QueryServer
from memvault.watch.state import (
    HEARTBEAT,
    WatchLock,
    WatchRecord,
    now_iso,
)
from memvault.watch.sync import Stat, SyncResult, disk_state, held_files, indexed_counts, sync
from memvault.watch.syncer import sync_interval
from memvault.watch.threads import Committer, RecordWriter, Scanner

DEFAULTS = {"debounce_ms": DEFAULT_DEBOUNCE * 1000, "max_delay_ms": DEFAULT_MAX_DELAY * 1000,
            "reconcile_seconds": 15.0, "commit_quiet_seconds": 10.0}
RECORD_EVERY = 0.25  # seconds: at most this often the status record is rewritten while busy
RETRY_SECONDS = 1.0  # a failed update is tried again after this long
# Polling sees no same-size edit that keeps its mtime; only the reconcile's hashing does.
POLLING_RECONCILE = 2.0


@dataclass
class WatchOptions:
    debounce: float = DEFAULT_DEBOUNCE
    max_delay: float = DEFAULT_MAX_DELAY
    reconcile: float = DEFAULTS["reconcile_seconds"]
    commit: bool = False
    commit_quiet: float = DEFAULTS["commit_quiet_seconds"]
    sync_every: float | None = None  # --sync: seconds between syncs (0: [sync] interval_seconds); implies commit
    observer: str = "auto"  # "auto" (inotify, polling when the OS refuses) or "polling"
    observer_factory: Callable[[], Any] | None = None
    backend: str | None = None

    @classmethod
    def from_config(cls, vault: ParsedVault, **given: Any) -> WatchOptions:
        """[watch] settings from memvault.toml, under what the command line gave."""
        sect = vault.config.section("watch", DEFAULTS)
        opts = cls(debounce=float(sect["debounce_ms"]) / 1000, max_delay=float(sect["max_delay_ms"]) / 1000,
                   reconcile=float(sect["reconcile_seconds"]), commit_quiet=float(sect["commit_quiet_seconds"]))
        for key, value in given.items():
            if value is not None:
                setattr(opts, key, value)
        opts.max_delay = max(opts.max_delay, opts.debounce)
        return opts


class _Handler:
    """watchdog handler: every event becomes keys in the coalescer."""

    def __init__(self, watcher: Watcher):
        self.w = watcher

    def dispatch(self, event: Any) -> None:
        t = touched(event.event_type, _s(event.src_path), _s(getattr(event, "dest_path", "")),
                    event.is_directory, str(self.w.root), self.w.selection)
        if t:
            self.w.enqueue(t.keys, config=t.config, log_dir=t.log_dir, complete=t.complete)


def _s(path: Any) -> str:
    return os.fsdecode(path) if path else ""


class Watcher:
    """Keeps one vault's index current. `start()`, then `stop()` (or `run()` in a CLI)."""

    def __init__(self, vault: ParsedVault, options: WatchOptions | None = None, log: LogSink | None = None):
        self.vault = vault
        self.root = vault.root.resolve()
        self.options = options or WatchOptions()
        self.log = log or LogSink()
        self.record = WatchRecord(pid=os.getpid(), started=now_iso(), vault=str(self.root),
                                  debounce_ms=self.options.debounce * 1000)
        self._cond = threading.Condition()
        self._coalescer = Coalescer(self.options.debounce, self.options.max_delay)
        self._flags = {"config": False, "log_dir": False}
        self._stopping = False
        self._record_due: float | None = None
        self._snapshot: dict[str, Stat] | None = None  # from the scanner thread, for a reconcile
        self._db_ino: int | None = None  # the index file the open connection belongs to
        self._recorder = RecordWriter(self.root, self.log)
        self._scanner = Scanner(self)
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._lock = WatchLock(self.root)
        self._observer = VaultObserver(self.root, _Handler(self), kind=self.options.observer,
                                       say=lambda m: self.log("warning", m),
                                       observer_factory=self.options.observer_factory,
                                       trees=self.selection.roots)
        self._worker: threading.Thread | None = None
        self._committer: Committer | None = None
        self.index: Any = None
        self._queries: QueryServer | None = None  # other processes' semantic queries (query_server.py)

    @property
    def selection(self) -> Selection:
        """The files watched: the vault's `[vault] include`/`exclude` (reloaded with it)."""
        return self.vault.selection

    # -- events in ------------------------------------------------------------------------

    def enqueue(self, keys: frozenset[str] | set[str], *, config: bool = False, log_dir: bool = False,
                complete: bool = False) -> None:
        with self._cond:
            self._coalescer.add(keys, time.monotonic(), complete=complete)
            self._flags["config"] |= config
            self._flags["log_dir"] |= log_dir
            self.record.last_event = now_iso()
            self._want_record()
            self._cond.notify()

    def _want_record(self) -> None:
        """Have the worker rewrite the status record soon (call with self._cond held)."""
        if self._record_due is None:
            self._record_due = time.monotonic() + RECORD_EVERY

    def request_record(self) -> None:
        with self._cond:
            self._want_record()
            self._cond.notify()

    # -- life cycle -------------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> None:
        """Take the vault's watcher lock, start watching, reconcile; return once ready."""
        self._lock.acquire()
        try:
            every = sync_interval(self.vault.config, self.options.sync_every)
            if self.options.commit or every:
                self._committer = Committer(self, self.options.commit_quiet, every)
                self._committer.check()
                self.record.sync_every = every or 0.0
            self.record.observer = self._observer.start()  # before the reconcile: no change slips between
            self._recorder.start()
            self._worker = threading.Thread(target=self._work, name="memvault-watch", daemon=True)
            self._worker.start()
            if not self._ready.wait(timeout):
                raise MemvaultError(f"the watcher did not get ready within {timeout:g}s")
            if self._startup_error is not None:
                raise self._startup_error
            self._scanner.start()
            if self._committer is not None:
                self._committer.start()
            self._queries = QueryServer(self.index, say=lambda m: self.log("warning", m))
            if self._queries.start():
                self.record.semantic_queries = True
                self.request_record()
        except BaseException:
            self._observer.stop()
            self._scanner.stop()
            if self._queries is not None:
                self._queries.stop()
            self._shutdown_threads()
            self._recorder.stop()
            self._lock.release()
            raise

    def stop(self) -> None:
        """Flush what is pending, commit if asked, write the final record, let go of the lock."""
        if self._queries is not None:
            self._queries.stop()
        self._observer.stop()
        self._scanner.stop()
        self._shutdown_threads()
        if self._committer is not None:
            self._committer.stop()
        self.record.state = "stopped"
        self.record.pending = 0
        self._write_record()
        self._recorder.stop()
        self._lock.release()
        self.log("stop", "stopped; index is up to date" if not self.record.broken else
                 f"stopped; {len(self.record.broken)} file(s) still fail to parse")

    def _shutdown_threads(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._worker is not None:
            self._worker.join()

    def run(self) -> int:
        """Foreground: start, serve until SIGINT/SIGTERM, flush, exit status 0."""
        stop = threading.Event()
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.start()
            while not stop.wait(3600):
                pass
            self.log("stop", "signal received; flushing pending updates")
            self.stop()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    # -- the worker ---------------------------------------------------------------------------

    def _work(self) -> None:
        try:
            self._open()
            self._first_sync()
        except BaseException as exc:  # reported to start()
            self._startup_error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop()
        finally:
            if self.index is not None:
                self.index.close()

    def _open(self) -> None:
        from memvault.search.index import open_index

        self.index = open_index(self.vault, self.options.backend)
        self._db_ino = None

    def _first_sync(self) -> None:
        start = time.perf_counter()
        disk = disk_state(self.root, selection=self.selection)
        self.record.files_on_disk = len(disk)
        result = self._sync(None, disk)
        self.record.state = "ready"
        self._count()
        self._recorder.write_now(self.record)  # on disk before start() returns
        n = len(result.updated)
        caught = f"; caught up on {n} file{'s' * (n != 1)} changed while nobody watched" if n else ""
        if result.rebuilt:
            caught = f"; index rebuilt ({result.rebuilt})"
        self.log("ready", f"watching {self.root} ({self.record.observer}): {self.record.files_indexed} files, "
                 f"{self.record.events_indexed} entries indexed{caught} in {time.perf_counter() - start:.2f}s",
                 files=self.record.files_indexed, events=self.record.events_indexed, caught_up=result.updated)

    def offer_snapshot(self, disk: dict[str, Stat]) -> None:
        """The scanner's view of the disk, for the next light reconcile."""
        with self._cond:
            self._snapshot = disk
            self._cond.notify()

    def _loop(self) -> None:
        next_beat = time.monotonic() + HEARTBEAT
        while True:
            with self._cond:
                while not self._stopping:
                    now = time.monotonic()
                    deadline = min(self._coalescer.next_deadline() or float("inf"), next_beat,
                                   self._record_due or float("inf"))
                    if now >= deadline or any(self._flags.values()) or self._snapshot is not None:
                        break
                    self._cond.wait(deadline - now)
                stopping = self._stopping
                keys = self._coalescer.take_all() if stopping else self._coalescer.take_due(now)
                flags, self._flags = self._flags, {"config": False, "log_dir": False}
                snapshot, self._snapshot = self._snapshot, None
                if len(self._coalescer):  # pending work would look like missed events: next time
                    snapshot = None
                self.record.pending = len(self._coalescer)
            if flags["log_dir"]:
                self._observer.rewatch_log_dir()
            if flags["config"]:
                self._reload()
            if keys:
                self._batch(set(keys))
                self.request_record()
            if stopping:
                self._count()
                return
            if snapshot is not None:
                self.record.files_on_disk = len(snapshot)
                self._reconcile(snapshot)
            now = time.monotonic()
            with self._cond:
                due = now >= next_beat or (self._record_due is not None and now >= self._record_due)
                if due:
                    self._record_due = None
                    self.record.pending = len(self._coalescer)
            if due:
                next_beat = now + HEARTBEAT
                self._lock.refresh()  # `.memvault/` may have been deleted under us
                self._count()
                self._write_record()

    def reconcile_every(self) -> float:
        polling = self._observer.mode == "polling"
        return min(self.options.reconcile, POLLING_RECONCILE) if polling else self.options.reconcile

    def _index_ino(self) -> int | None:
        try:
            return os.stat(self.index.db_path).st_ino
        except (AttributeError, OSError):
            return None

    def _sync(self, keys: set[str] | None, snapshot: dict[str, Stat] | None = None) -> SyncResult:
        # A rebuild by another process (`memvault index --rebuild`) renames a new index file
        # into place; a connection kept open would go on using the old, unlinked one.
        if self._db_ino is not None and self._index_ino() != self._db_ino:
            self.index.close()  # the next call opens the new file
        try:
            result = sync(self.root, self.vault.config, self.index, keys, snapshot)
        except Exception:
            self.index.close()  # whatever went wrong, the retry starts from a fresh connection
            raise
        finally:
            self._db_ino = self._index_ino()
        self._note_broken(result)
        if result.updated or result.broken:
            self.record.last_update = now_iso()
            self.record.updates += 1
            if self._committer is not None:
                self._committer.changed()
        return result

    def _batch(self, keys: set[str]) -> None:
        try:
            result = self._sync(keys)
        except MemvaultError as exc:  # e.g. a rebuild holds the index lock: try again shortly
            self._fail(f"index update failed: {exc}; retrying", keys)
            return
        except Exception as exc:  # never die on one bad update
            self._fail(f"index update failed: {type(exc).__name__}: {exc}; retrying", keys)
            return
        if result.rebuilt:
            self.log("indexed", f"index rebuilt ({result.rebuilt}) in {result.seconds:.2f}s", rebuilt=result.rebuilt)
        elif result.updated:
            self.log("indexed", describe(result), paths=result.updated, ms=round(result.seconds * 1000, 1))

    def _fail(self, message: str, keys: set[str]) -> None:
        self.record.add_error(message)
        self.log("error", message)
        with self._cond:  # re-queued with a delay, so a persistent failure cannot spin
            self._coalescer.add(keys, time.monotonic() + RETRY_SECONDS)

    def _reconcile(self, snapshot: dict[str, Stat] | None = None) -> None:
        try:
            result = self._sync(None, snapshot)
        except Exception as exc:
            self.record.add_error(f"reconcile failed: {exc}")
            self.log("error", f"reconcile failed: {exc}")
            return
        if result.rebuilt:
            self.log("reconcile", f"index rebuilt ({result.rebuilt}) in {result.seconds:.2f}s")
        elif result.updated:
            self.log("reconcile", f"reconcile found {len(result.updated)} change(s) the OS did not report "
                     f"(event queue overflow or watch limit?): " + ", ".join(result.updated[:5]),
                     paths=result.updated)

    def _note_broken(self, result: SyncResult) -> None:
        for path in result.updated:
            if self.record.broken.pop(path, None) is not None:
                self.log("fixed", f"{path} parses again; indexed", path=path)
        for path, why in result.broken.items():
            if self.record.broken.get(path) != why:
                self.record.broken[path] = why
                self.record.add_error(why, path)
                self.log("broken", why, path=path)

    def _reload(self) -> None:
        """memvault.toml changed: re-read it, reopen the index, reconcile."""
        try:
            vault = ParsedVault.open(self.root)
        except MemvaultError as exc:
            self.log("error", f"memvault.toml changed but cannot be read: {exc}; keeping the old settings")
            return
        self.vault = vault
        self._observer.set_trees(self.selection.roots)  # [vault] include may name other folders
        self.index.close()
        self._open()
        self.log("reconcile", "memvault.toml changed: settings reloaded")
        self._reconcile()

    def _count(self) -> None:
        """Files and entries in the index (two small queries); entries on disk as the watcher
        knows them: the index plus what the files that fail to parse hold now. The files held
        back are the index's list (whoever updated it: a search may have found one first)."""
        counts = indexed_counts(self.index)
        held = held_files(self.index)
        if counts is None or held is None:
            return
        self.record.files_indexed = len(counts)
        self.record.events_indexed = sum(counts.values())
        self.record.broken = {path: why for path, (_, _, why) in held.items()}
        if not self.record.pending:
            self.record.events_on_disk = self.record.events_indexed + sum(now - kept for kept, now, _ in held.values())

    def _write_record(self) -> None:
        self._recorder.submit(self.record)


def describe(result: SyncResult) -> str:
    """One log line for one batch: which files, and how long it took."""
    paths = result.updated
    names = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"indexed {names} in {result.seconds * 1000:.0f} ms"
