"""`memvault serve`'s ASGI app: MCP over streamable HTTP at /mcp, the JSON API under /v0, and
the guards every request passes (token, body size, rate) before either.

The /v0 operations are memorywire's (`memvault.memorywire`): `POST /v0/{op}` hands the body to
`memorywire.call` through the server's one store (`wire.py`) and answers what it answers;
`GET /v0/schemas[/{name}]` serves the shipped JSON Schemas; `GET /v0/review-queue/{id}` shows a
staged operation (its `approval_url`; a person decides with `memvault review-queue`). A library
error is `{"error": {"code", "message"}}` with the status of `STATUS` (usage 400, not found 404,
refused 403, secret 422, ...). Needs the `serve` extra; imported only when a server starts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memvault.errors import MemvaultError
from memvault.memorywire import OPERATIONS, schema, schema_names
from memvault.serve.mcp_tools import build_mcp
from memvault.serve.service import Service
from memvault.serve.settings import (
    RateLimiter,
    ServeSettings,
    foreign_request,
    is_json,
    is_loopback,
    token_ok,
)
from memvault.serve.wire import Wire

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"
STATUS = {"usage": 400, "not_found": 404, "ambiguous": 409, "refused": 403, "secret": 422, "unsafe_path": 403,
          "locked": 503, "conflict": 409}


def build_app(service: Service, settings: ServeSettings) -> ASGIApp:
    """The whole server: MCP (streamable HTTP) and /v0 routes, behind the guards."""
    wire = Wire(service)
    server = build_mcp(service, wire)

    @server.custom_route("/v0/health", methods=["GET", "POST"])
    async def health(request: Request) -> Response:
        return await _answer(lambda: wire.health(own_url(request)))

    @server.custom_route("/v0/schemas", methods=["GET"])
    async def schemas(request: Request) -> Response:
        return JSONResponse({"schemas": list(schema_names())})

    @server.custom_route("/v0/schemas/{name}", methods=["GET"])
    async def one_schema(request: Request) -> Response:
        return await _answer(lambda: schema(request.path_params["name"]))

    @server.custom_route("/v0/review-queue/{item_id}", methods=["GET"])
    async def staged(request: Request) -> Response:
        return await _answer(lambda: wire.staged(request.path_params["item_id"], own_url(request)))

    @server.custom_route("/v0/{op}", methods=["POST"])
    async def operation(request: Request) -> Response:
        if request.path_params["op"] != "health" and allowed_methods(request.path_params["op"]) == ("GET",):
            return await elsewhere(request)  # POST /v0/schemas: 405, not "no operation schemas"
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            return error_response(400, "usage", f"the request body is not JSON: {exc}")
        return await _answer(lambda: wire.call(request.path_params["op"], body, own_url(request)))

    # last: whatever no route above takes (a GET on an operation, an unknown path) answers JSON too
    for path in ("/v0", "/v0/{rest:path}"):
        server.custom_route(path, methods=list(ANY_METHOD))(elsewhere)

    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=settings.host,
                                     max_request_body_size=settings.max_body_bytes)
    return Guard(app, settings)


ANY_METHOD = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


async def elsewhere(request: Request) -> Response:
    """A /v0 request no route takes: 405 (with `Allow`) on a path that takes other methods, else 404."""
    rest = request.url.path.removeprefix("/v0").strip("/")
    allowed = allowed_methods(rest)
    if allowed:
        return error_response(405, "method_not_allowed", f"{request.method} /v0/{rest}: use {' or '.join(allowed)}",
                              {"Allow": ", ".join(allowed)})
    return error_response(404, "not_found", f"no route /v0/{rest}; the operations are POST /v0/{{{', '.join(OPERATIONS)}}}, "
                          "GET /v0/health, GET /v0/schemas[/NAME], GET /v0/review-queue/ID")


def allowed_methods(rest: str) -> tuple[str, ...]:
    """The methods a /v0 path takes (pure); none: no such path."""
    head, _, tail = rest.partition("/")
    if rest == "health":
        return ("GET", "POST")
    if rest in OPERATIONS:
        return ("POST",)
    if rest == "schemas" or (head in ("schemas", "review-queue") and tail and "/" not in tail):
        return ("GET",)
    return ()


def own_url(request: Request) -> str | None:
    """The address this server is bound to (the socket's, not the client's `Host` header)."""
    server = request.scope.get("server")
    if not server or server[1] is None:
        return None
    host = f"[{server[0]}]" if ":" in server[0] else server[0]
    return f"{request.url.scheme}://{host}:{server[1]}"


def _sync_answer(call: Callable[[], Any]) -> Response:
    try:
        return JSONResponse(call())
    except MemvaultError as exc:
        return error_response(STATUS.get(exc.code, 500), exc.code, str(exc))


async def _answer(call: Callable[[], Any]) -> Response:
    """`call` in a worker thread (the library blocks on files and locks); its answer as JSON."""
    return await anyio.to_thread.run_sync(_sync_answer, call)


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
        foreign = self._foreign(scope, headers)
        if foreign is not None:
            return foreign
        client = (scope.get("client") or ("?", 0))[0]
        wait = self.limiter.wait(client)
        if wait:  # the seconds until the bucket holds a request again, rounded up
            return error_response(429, "rate_limited", f"more than {self.settings.rate_per_minute} requests a "
                                  "minute from this client ([serve] rate_per_minute)",
                                  {"Retry-After": str(max(1, math.ceil(wait)))})
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.settings.max_body_bytes:
            return error_response(413, "too_large", f"request body over {self.settings.max_body_bytes} bytes "
                                  "([serve] max_body_bytes)")
        return None

    def _foreign(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        """/v0 takes no cross-site request: on loopback, `Host`/`Origin` must be this server's
        (a web page's DNS-rebinding or form post cannot reach it; /mcp has the SDK's own check),
        and a POST must say JSON, which a browser sends only after a CORS preflight this server
        never grants."""
        path = scope.get("path", "")
        if not (path == "/v0" or path.startswith("/v0/")):
            return None
        if is_loopback(self.settings.host):
            port = (scope.get("server") or (None, None))[1]
            why = foreign_request(headers.get("host"), headers.get("origin"), port)
            if why is not None:
                return error_response(421 if why.startswith("Host") else 403, "forbidden", why)
        if scope.get("method") == "POST" and path != "/v0/health" and not is_json(headers.get("content-type")):
            return error_response(415, "usage", f"POST {path} takes a JSON body: send `Content-Type: "
                                  f"application/json` (got {headers.get('content-type') or 'none'})")
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
