"""`memvault serve`'s ASGI app: MCP over streamable HTTP at /mcp, the JSON API under /v0, and
the guards every request passes (token, body size, rate) before either.

The /v0 operations are memorywire's (`memvault.memorywire`, its own room); this module only
carries them: a request body in, `memorywire.call(store, op, request)`'s answer out. While
that module is not installed the routes answer 501 with a JSON error saying so.
Needs the `serve` extra; imported only when a server starts.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable, MutableMapping
from types import ModuleType
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memvault.errors import MemvaultError
from memvault.serve.mcp_tools import build_mcp
from memvault.serve.service import Service
from memvault.serve.settings import RateLimiter, ServeSettings, token_ok

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"
WIRE_MODULE = "memvault.memorywire"
STATUS = {"usage": 400, "not_found": 404, "ambiguous": 409, "refused": 403, "secret": 422, "unsafe_path": 403,
          "locked": 503, "conflict": 409}


def build_app(service: Service, settings: ServeSettings) -> ASGIApp:
    """The whole server: MCP (streamable HTTP) and /v0 routes, behind the guards."""
    server = build_mcp(service)

    @server.custom_route("/v0/health", methods=["GET"])
    async def health(request: Request) -> Response:
        return JSONResponse(service.health() | {"memorywire": _wire() is not None})

    @server.custom_route("/v0/schemas/{name}", methods=["GET"])
    async def schema(request: Request) -> Response:
        wire = _wire()
        if wire is None:
            return _not_yet()
        return _answer(lambda: wire.schema(request.path_params["name"]))

    @server.custom_route("/v0/{op}", methods=["POST"])
    async def operation(request: Request) -> Response:
        wire = _wire()
        if wire is None:
            return _not_yet()
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            return error_response(400, "usage", f"the request body is not JSON: {exc}")
        # The store over this vault: memorywire's own (the one line to check when the rooms meet).
        return await _answer_async(lambda: wire.call(wire.open_store(service.root), request.path_params["op"], body))

    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=settings.host,
                                     max_request_body_size=settings.max_body_bytes)
    return Guard(app, settings)


def _wire() -> ModuleType | None:
    """memorywire, when installed (it is a separate room, added by issue 16's other half)."""
    try:
        return importlib.import_module(WIRE_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != WIRE_MODULE:
            raise
        return None


def _not_yet() -> Response:
    return error_response(501, "not_implemented", "the memorywire operations are not part of this memvault yet; "
                          "MCP tools are at /mcp")


def _answer(call: Callable[[], Any]) -> Response:
    try:
        return JSONResponse(call())
    except MemvaultError as exc:
        return error_response(STATUS.get(exc.code, 500), exc.code, str(exc))


async def _answer_async(call: Callable[[], Any]) -> Response:
    import anyio.to_thread

    return await anyio.to_thread.run_sync(_answer, call)


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


class Guard:
    """ASGI middleware in front of everything: the token (when set) on every request, the
    per-client rate, and the body size (read into memory up to the limit, then handed on: a
    request without Content-Length cannot slip past)."""

    def __init__(self, app: ASGIApp, settings: ServeSettings):
        self.app = app
        self.settings = settings
        self.limiter = RateLimiter(settings.rate_per_minute)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the MCP session manager starts and stops here
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            body, too_big = await self._read_body(scope, receive)
            if too_big:
                refusal = error_response(413, "too_large", f"request body over {self.settings.max_body_bytes} "
                                         "bytes ([serve] max_body_bytes)")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not token_ok(self.settings.token, headers.get("authorization")):
            return error_response(401, "unauthorized", "missing or wrong token: send `Authorization: Bearer <token>`",
                                  {"WWW-Authenticate": "Bearer"})
        client = (scope.get("client") or ("?", 0))[0]
        if not self.limiter.allow(client):
            return error_response(429, "rate_limited", f"more than {self.settings.rate_per_minute} requests a "
                                  "minute from this client ([serve] rate_per_minute)", {"Retry-After": "1"})
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.settings.max_body_bytes:
            return error_response(413, "too_large", f"request body over {self.settings.max_body_bytes} bytes "
                                  "([serve] max_body_bytes)")
        return None

    async def _read_body(self, scope: Scope, receive: Receive) -> tuple[list[Message], bool]:
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            return [], False  # no body; the GET stream of MCP stays a stream
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages, False
            size += len(message.get("body", b""))
            if size > self.settings.max_body_bytes:
                return messages, True
            if not message.get("more_body"):
                return messages, False


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A `receive` that hands on the messages already read, then the rest as they come."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()
    return replayed
