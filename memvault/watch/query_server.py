"""A running watcher answers the semantic side of other processes' searches.

A one-shot `memvault search` that must open the model pays for numpy, onnxruntime and the
session (~250 ms) before its first cosine. The watcher has them open already, so it listens on
`.memvault/semantic.sock` (a Unix socket, mode 0600: only the vault's owner) and answers one JSON
line per connection:

    -> {"key": "<model key>", "text": "...", "k": 100, "also": [rowid, ...]}
    <- {"key": "<model key>", "top": [[rowid, cosine], ...], "scores": [[rowid, cosine], ...],
        "mean": m, "std": s}

or `{"error": "..."}`. A search uses it when its model key matches and falls back to its own
model otherwise (search/index/semantic.py, `Probe`); nothing else is served, nothing is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

SOCKET_NAME = "semantic.sock"
MAX_REQUEST = 1 << 20  # one query and a few thousand row numbers


def socket_path(derived: Path) -> Path | None:
    """Where the socket is, or None when the path is too long for a Unix socket (~107 bytes)."""
    path = derived / SOCKET_NAME
    return path if len(os.fsencode(path)) < 104 else None


class QueryServer:
    def __init__(self, index: Any, say: Any = None):
        self.index = index
        self.say = say or (lambda message: None)
        self.path = socket_path(index.vault.derived)
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._sem: Any = None

    def start(self) -> bool:
        """Listen, when the vault searches by meaning (True when listening)."""
        from memvault.search.index import semantic

        if self.path is None or semantic.choose_mode(self.index.vault.config, None, self.index.vault.root) == "lexical":
            return False
        try:
            self._sem = semantic.Semantic.open(self.index)  # its own vector store: the worker keeps its own
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a socket left by a watcher that was killed
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)
            try:
                sock.bind(str(self.path))
            finally:
                os.umask(old)
            sock.listen(16)
        except (OSError, semantic.SemanticUnavailable) as exc:
            self.say(f"semantic queries are not served ({exc}); searches open the model themselves")
            return False
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="memvault-semantic-queries", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            if self.path is not None:
                with contextlib.suppress(OSError):
                    self.path.unlink()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._sem is not None:
            self._sem.close()

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed by stop()
            with conn:
                conn.settimeout(5.0)
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(self._answer(_read_line(conn))).encode() + b"\n")

    def _answer(self, raw: bytes) -> dict[str, Any]:
        try:
            req = json.loads(raw)
            if req.get("key") != self._sem.spec.key:
                return {"error": "another model", "key": self._sem.spec.key}
            vector = self._sem.query_vector(str(req["text"]))
            near = self._sem.nearest(vector, int(req["k"]), [int(r) for r in req.get("also", [])])
        except Exception as exc:  # a bad request or a model failing: the search falls back to its own
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {"key": self._sem.spec.key, "top": near.top, "scores": list(near.scores.items()),
                "mean": near.mean, "std": near.std}


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data
