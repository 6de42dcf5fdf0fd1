"""Running the servers: `memvault mcp` (stdio) and `memvault serve` (uvicorn), each with the
watcher inside, until the client hangs up or SIGINT/SIGTERM; then the watcher flushes and
lets go of the vault. `ThreadedServer` runs the HTTP server in a thread (tests, benchmarks).
Needs the `serve` extra; imported only when a server starts.
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from memvault.errors import InputError, Refused
from memvault.serve.http import MCP_PATH, build_app
from memvault.serve.mcp_tools import build_mcp
from memvault.serve.service import Service
from memvault.serve.settings import ServeSettings

GRACE_SECONDS = 5.0


@contextmanager
def _sigterm_exits(service: Service) -> Iterator[None]:
    """SIGTERM ends the process as Ctrl-C does: through `finally`, so the watcher flushes. If
    the interrupt lands where the event loop swallows it (seen under heavy load: the process
    kept serving), a timer stops the watcher and leaves after GRACE_SECONDS anyway."""
    def stop(*_: Any) -> None:
        threading.Thread(target=_leave_after_grace, args=(service,), daemon=True).start()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _leave_after_grace(service: Service) -> None:
    time.sleep(GRACE_SECONDS)
    service.stop()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_stdio(service: Service) -> int:
    """MCP over stdin/stdout until the client closes the pipe or a signal comes."""
    server = build_mcp(service)
    interrupted = False
    try:
        with _sigterm_exits(service):  # before the watcher starts: a signal during its start-up stops it too
            service.start()
            server.run("stdio")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        service.stop()
    if interrupted:  # the SDK's stdin reader is a thread blocked in a read that no signal ends,
        sys.stdout.flush()  # and Python waits for it at exit: leave now that the watcher is flushed
        sys.stderr.flush()
        os._exit(0)
    return 0


def _uvicorn(service: Service, settings: ServeSettings) -> uvicorn.Server:
    app = build_app(service, settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning", lifespan="on",
                            access_log=False, timeout_graceful_shutdown=5)
    return uvicorn.Server(config)


def bound_url(server: uvicorn.Server) -> str:
    """The address the server listens on (the port chosen when it was 0)."""
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}"


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound here rather than by uvicorn, so a port in use is one clear
    `Refused` (exit 1, JSON with --json) instead of uvicorn's log line and a traceback."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise InputError(f"--host {host!r}: not an address this machine can listen on ({exc.strerror})") from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port at once
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise Refused(f"port {port} on {host} is in use (another server?); stop it or give --port") from exc
        raise Refused(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from exc
    sock.set_inheritable(True)
    return sock


def run_http(service: Service, settings: ServeSettings, announce: Callable[[str], None]) -> int:
    """Serve until SIGINT/SIGTERM (uvicorn's handlers: in-flight requests finish first);
    `announce(url)` once listening."""
    sock = listen(settings.host, settings.port)
    server = _uvicorn(service, settings)
    try:  # uvicorn shuts down gracefully, then raises the signal again: it ends up here
        with _sigterm_exits(service):
            service.start()
            asyncio.run(_serve(server, announce, sock))
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
    return 0


async def _serve(server: uvicorn.Server, announce: Callable[[str], None], sock: socket.socket) -> None:
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started:
        announce(bound_url(server))
    await task


class ThreadedServer:
    """`memvault serve` in a thread of this process, on a free loopback port by default."""

    def __init__(self, service: Service, settings: ServeSettings | None = None):
        self.service = service
        self.settings = settings or ServeSettings(port=0)
        self.server = _uvicorn(service, self.settings)
        self.thread = threading.Thread(target=self.server.run, name="memvault-serve", daemon=True)
        self.url = ""

    def __enter__(self) -> ThreadedServer:
        self.service.start()
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                self.service.stop()
                raise RuntimeError("the server did not start")
            threading.Event().wait(0.01)
        self.url = bound_url(self.server)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.service.stop()


def ready_message(url: str) -> dict[str, str]:
    """Where the server answers, for a person (`text`) and a program (the rest)."""
    return {"url": url, "mcp": url + MCP_PATH, "api": url + "/v0",
            "text": f"serving at {url}: MCP at {url}{MCP_PATH}, JSON API at {url}/v0 (Ctrl-C stops)"}
