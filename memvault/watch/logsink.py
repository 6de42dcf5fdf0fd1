"""The watcher's log: readable lines for people, one JSON object per line for supervisors."""

from __future__ import annotations

import sys
import threading
from datetime import datetime
from typing import Any, TextIO

from memvault.textsafety import dumps_json, printable


class LogSink:
    """`log(kind, message, **fields)`; kinds: ready, indexed, reconcile, broken, fixed,
    commit, sync, error, warning, stop. Thread-safe; every line is flushed at once."""

    def __init__(self, stream: TextIO | None = None, *, as_json: bool = False):
        self.stream = stream if stream is not None else sys.stdout
        self.as_json = as_json
        self._lock = threading.Lock()
        self.lines: list[dict[str, Any]] = []  # kept for in-process callers (tests, bench)
        self.keep = False

    def __call__(self, kind: str, message: str, **fields: Any) -> None:
        now = datetime.now().astimezone()
        record = {"time": now.isoformat(timespec="milliseconds"), "event": kind, "message": message, **fields}
        if self.as_json:
            line = dumps_json(record, default=str)
        else:
            tag = "" if kind in ("indexed", "ready", "stop", "commit", "sync", "reconcile") else f"{kind}: "
            line = printable(f"{now:%H:%M:%S} {tag}{message}")  # paths and problems come from files
        with self._lock:
            if self.keep:
                self.lines.append(record)
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass  # a closed terminal must not stop the watcher

    def kinds(self) -> list[str]:
        with self._lock:
            return [r["event"] for r in self.lines]
