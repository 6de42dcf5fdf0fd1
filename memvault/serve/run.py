"""Running the servers: `memvault mcp` (stdio) and `memvault serve` (uvicorn), each with the
watcher inside, until the client hangs up or SIGINT/SIGTERM; then the watcher flushes and
lets go of the vault. `ThreadedServer` runs the HTTP server in a thread (tests, benchmarks).
Needs the `serve` extra; imported only when a server starts.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

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


def run_http(service: Service, settings: ServeSettings, announce: Callable[[str], None]) -> int:
    """Serve until SIGINT/SIGTERM (uvicorn's handlers: in-flight requests finish first);
    `announce(url)` once listening."""
    server = _uvicorn(service, settings)
    try:  # uvicorn shuts down gracefully, then raises the signal again: it ends up here
        with _sigterm_exits(service):
            service.start()
            asyncio.run(_serve(server, announce))
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
    return 0


async def _serve(server: uvicorn.Server, announce: Callable[[str], None]) -> None:
    task = asyncio.create_task(server.serve())
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
