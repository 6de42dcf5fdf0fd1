"""Start the OS file watcher over the vault, falling back to polling when the OS refuses.

A few watches, not one recursive watch of the whole vault: the vault folder itself (not
recursive: MEMORY.md, memvault.toml, OpenClaw's workspace files, and memory/ appearing or
vanishing) and each top folder the vault's files are in (recursive: memory/, plus those
`[vault] include` names). So `.git/` (busy during commits), `.memvault/` (written on every
index update) and `.obsidian/` never cost an inotify watch or wake the watcher up, unless
an include glob starts at the vault folder (`**/*.md`): then the vault folder is watched
recursively, and the events under those folders are filtered out (watch/paths.py).

inotify has a per-user watch limit (fs.inotify.max_user_watches). When it is hit,
watchdog raises for the top folder but silently skips subfolders; both cases are caught
here, said once, and answered with watchdog's PollingObserver instead of dying.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.layout import LOG_DIR
from memvault.watch.paths import is_ignored

LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE, errno.ENFILE)
POLL_SECONDS = 1.0
# watchdog holds an unpaired "moved from" event for 0.5 s to pair it with its "moved to",
# and every event queued behind it waits too. Pairs arrive in the same read from the
# kernel, so a short hold loses nothing: an unpaired move is a delete, which we re-read
# the same way.
MOVE_PAIR_SECONDS = 0.02


def is_watch_limit(exc: BaseException) -> bool:
    """True for the OS errors that mean "no more inotify watches or instances"."""
    return isinstance(exc, OSError) and exc.errno in LIMIT_ERRNOS


def limit_message(exc: OSError) -> str:
    current = ""
    with contextlib.suppress(OSError):
        current = Path("/proc/sys/fs/inotify/max_user_watches").read_text().strip()
    setting = f" (fs.inotify.max_user_watches = {current})" if current else ""
    return (f"the OS file-watch limit is reached{setting}: {exc.strerror or exc}; "
            f"falling back to polling every {POLL_SECONDS:g}s. Raise the limit with "
            f"`sysctl fs.inotify.max_user_watches=524288` to get instant updates again")


def count_dirs(folder: Path) -> int:
    n = 0
    for _, dirnames, _ in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not is_ignored(d)]
        n += 1
    return n


def inotify_watch_count(observer: Any) -> int | None:
    """How many folders the inotify emitters really watch (watchdog internals; None if unknown)."""
    total = 0
    try:
        for emitter in observer.emitters:
            group = emitter._inotify  # noqa: SLF001 - no public way to ask
            if group is None:
                return None
            total += len(group._active_callbacks_by_path)  # noqa: SLF001
    except AttributeError:
        return None
    return total


class VaultObserver:
    """The running observer and its watches: the vault folder, and each of `trees` (top
    folders, "" for the vault folder itself) recursively; `rewatch_log_dir` after one moves."""

    def __init__(self, root: Path, handler: Any, *, kind: str = "auto",
                 say: Callable[[str], None] = lambda _m: None, observer_factory: Callable[[], Any] | None = None,
                 trees: tuple[str, ...] = (LOG_DIR,)):
        self.root = root
        self.handler = handler
        self.say = say
        self.kind = kind
        self.factory = observer_factory
        self.trees = trees
        self.observer: Any = None
        self.mode = ""
        self._root_watch: Any = None
        self._tree_watches: list[Any] = []
        self._lock = threading.Lock()

    def start(self) -> str:
        """Start watching; returns "inotify" or "polling"."""
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"watchdog\..*")
        if self.kind != "polling":
            try:
                self._start(self._native())
                self._check_limit()
                return self.mode
            except OSError as exc:
                if not is_watch_limit(exc):
                    raise
                self._stop_quietly()
                self.say(limit_message(exc))
        self._start(self._polling())
        return self.mode

    def _native(self) -> Any:
        if self.factory is not None:
            return self.factory()
        try:
            from watchdog.observers.inotify_move_event_grouper import InotifyMoveEventGrouper
            InotifyMoveEventGrouper.delay = MOVE_PAIR_SECONDS
        except ImportError:  # not Linux: watchdog picks FSEvents/kqueue/Windows itself
            pass
        from watchdog.observers import Observer

        return Observer()

    @staticmethod
    def _polling() -> Any:
        from watchdog.observers.polling import PollingObserver

        return PollingObserver(timeout=POLL_SECONDS)

    def _start(self, observer: Any) -> None:
        self.observer = observer
        name = type(observer).__name__.lower()
        self.mode = "polling" if "polling" in name else ("inotify" if "inotify" in name else name)
        self._root_watch = observer.schedule(self.handler, str(self.root), recursive="" in self.trees)
        self._schedule_trees()
        observer.start()

    def _folders(self) -> list[Path]:
        """The folders watched recursively that exist now."""
        if "" in self.trees:
            return []
        return [self.root / t for t in self.trees if (self.root / t).is_dir()]

    def _check_limit(self) -> None:
        """watchdog skips subfolders it cannot watch without a word: count them ourselves."""
        if self.mode != "inotify":
            return
        folders = [self.root] if "" in self.trees else self._folders()
        if not folders:
            return
        watched = inotify_watch_count(self.observer)
        wanted = ("" not in self.trees) + sum(count_dirs(f) for f in folders)
        if watched is not None and watched < wanted:
            raise OSError(errno.ENOSPC, f"only {watched} of {wanted} folders could be watched")

    def _schedule_trees(self) -> None:
        for folder in self._folders():
            self._tree_watches.append(self.observer.schedule(self.handler, str(folder), recursive=True))

    def set_trees(self, trees: tuple[str, ...]) -> None:
        """Watch other top folders (memvault.toml's include changed)."""
        if trees == self.trees:
            return
        whole = ("" in trees) != ("" in self.trees)
        self.trees = trees
        if whole and self.observer is not None:  # the vault folder's watch changes kind: start over
            with self._lock:
                self._stop_quietly()
                self._tree_watches = []
                self._start(self._native() if self.mode != "polling" else self._polling())
            return
        self.rewatch_log_dir()

    def rewatch_log_dir(self) -> None:
        """memory/ (or another watched top folder) was created, deleted or moved: drop the
        old watches and watch anew."""
        with self._lock:
            for watch in self._tree_watches:
                with contextlib.suppress(KeyError, OSError):
                    self.observer.unschedule(watch)
            self._tree_watches = []
            try:
                self._schedule_trees()
            except OSError as exc:
                if not is_watch_limit(exc):
                    raise
                self.say(limit_message(exc))
                self._stop_quietly()
                self._start(self._polling())

    def _stop_quietly(self) -> None:
        if self.observer is None:
            return
        try:
            if self.observer.is_alive():
                self.observer.stop()
                self.observer.join(timeout=5)
            else:
                self.observer.unschedule_all()
        except (RuntimeError, OSError):
            pass

    def stop(self) -> None:
        self._stop_quietly()
        self.observer = None
