"""Helpers for the watcher tests: a watcher in a thread or a subprocess, and polling waits."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from memvault.search.index import open_index, store
from memvault.vault import Vault
from memvault.watch.logsink import LogSink
from memvault.watch.watcher import Watcher, WatchOptions

DAY = "memory/2026-02-21.md"


def entry(hhmm: str, text: str, kind: str = "Observation") -> str:
    return f"## {hhmm} - {kind}\n{text}\n\n"


def log_file(day: str, *entries: str) -> str:
    return f"# {day}\n\n" + "".join(entries)


def wait_for(cond: Callable[[], object], timeout: float = 5.0, what: str = "condition") -> object:
    """Poll `cond` every 10 ms until it is truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


def index_rows(root: Path) -> set[tuple[str, str, str]]:
    """(file, id, content) of every event in the index."""
    index = open_index(Vault.open(root))
    try:
        if not index.db_path.exists():
            return set()
        conn = store.connect(index.db_path)
        try:
            return {(e.file, e.id, e.content) for _, e in store.load_events(conn)}
        except Exception:
            return set()
        finally:
            conn.close()
    finally:
        index.close()


def disk_rows(root: Path) -> set[tuple[str, str, str]]:
    """The same rows from a fresh parse of the files."""
    return {(e.file, e.id, e.content) for e in Vault.open(root).events}


def in_sync(root: Path) -> bool:
    return index_rows(root) == disk_rows(root)


def contents(root: Path) -> set[str]:
    return {c for _, _, c in index_rows(root)}


@contextlib.contextmanager
def watching(root: Path, **options) -> Iterator[Watcher]:
    """A watcher running in this process (threads) for the duration of the block."""
    log = LogSink(io.StringIO())
    log.keep = True
    watcher = Watcher(Vault.open(root), WatchOptions(**options), log)
    watcher.start(timeout=30)
    try:
        yield watcher
    finally:
        watcher.stop()


def atomic_save(path: Path, text: str) -> None:
    """What many editors do: write a temp file beside the target, then rename it over."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class WatchProcess:
    """`memvault watch --json` as a child process; its log lines are read by a thread."""

    def __init__(self, root: Path, *args: str):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memvault", "--vault", str(root), "watch", "--json", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        self.lines: list[dict] = []
        self._queue: queue.Queue[dict | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.strip():
                self._queue.put(json.loads(line))
        self._queue.put(None)

    def read_until(self, event: str, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                record = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {event!r} log line within {timeout}s; got {self.lines}") from None
            if record is None:
                raise AssertionError(f"watcher exited ({self.proc.wait()}): {self.proc.stderr.read()}")
            self.lines.append(record)
            if record["event"] == event:
                return record

    def finish(self, timeout: float = 20.0) -> tuple[int, list[dict]]:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout)
        while not self._queue.empty():
            record = self._queue.get()
            if record is not None:
                self.lines.append(record)
        return code, self.lines

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
