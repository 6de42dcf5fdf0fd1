"""`memvault serve`'s settings and the pure decisions of its guards.

`[serve]` in memvault.toml (host, port, body and rate limits) under what the command line
gives; the token never lives in the vault's config (a file people commit): `--token` or
`MEMVAULT_TOKEN`. Nothing here imports the server stack.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memvault.errors import InputError, Refused

TOKEN_ENV = "MEMVAULT_TOKEN"
SERVE_DEFAULTS: dict[str, Any] = {
    "host": "127.0.0.1",
    "port": 8765,
    "max_body_bytes": 1_000_000,  # a memory is text: a megabyte is far more than one needs
    "rate_per_minute": 600,  # per client address; 0 turns the limit off
}


@dataclass
class ServeSettings:
    host: str = SERVE_DEFAULTS["host"]
    port: int = SERVE_DEFAULTS["port"]
    token: str | None = None
    max_body_bytes: int = SERVE_DEFAULTS["max_body_bytes"]
    rate_per_minute: int = SERVE_DEFAULTS["rate_per_minute"]

    @classmethod
    def from_config(cls, section: dict[str, Any], env: Mapping[str, str] | None = None, **given: Any) -> ServeSettings:
        """`[serve]` (with SERVE_DEFAULTS filled in), then the environment's token, then what
        the command line gave (None: not given)."""
        environ = os.environ if env is None else env
        opts = cls(host=str(section["host"]), port=int(section["port"]),
                   max_body_bytes=int(section["max_body_bytes"]), rate_per_minute=int(section["rate_per_minute"]),
                   token=environ.get(TOKEN_ENV) or None)
        for key, value in given.items():
            if value is not None:
                setattr(opts, key, value)
        check_bind(opts.host, opts.token)
        return opts


def is_loopback(host: str) -> bool:
    """Only this machine can reach `host`: localhost or a loopback address (127/8, ::1), in any
    spelling the system's resolver reads as one (`127.1` is 127.0.0.1)."""
    name = host.strip().lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        pass
    try:  # the short IPv4 forms (127.1, 2130706433) that inet_aton and so the bind accept
        return name != "" and ipaddress.IPv4Address(socket.inet_aton(name)).is_loopback
    except OSError:
        return False  # a name other than localhost may resolve anywhere


def split_host(value: str) -> tuple[str, int | None]:
    """A `Host` header's (name, port): `[::1]:8765` -> ("::1", 8765); port None when absent or bad."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        name, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    return name, int(port) if port.isdigit() else None


def foreign_request(host_header: str | None, origin: str | None, port: int | None) -> str | None:
    """Why a request to a loopback server comes from elsewhere (DNS rebinding, a web page's
    cross-site request), or None. `Host` must name a loopback address or localhost on the port
    the server listens on; `Origin`, when sent, must be such an http address too (pure)."""
    name, given = split_host(host_header or "")
    given = 80 if given is None else given  # no port: http's own
    if not name or not is_loopback(name) or given != port:
        return f"Host {host_header!r} is not this server's loopback address (DNS-rebinding protection)"
    if origin is None:
        return None
    scheme, _, rest = origin.strip().partition("://")
    name, given = split_host(rest.rstrip("/"))
    given = 80 if given is None else given
    if scheme.lower() != "http" or not is_loopback(name) or given != port:
        return f"Origin {origin!r} is not this server (cross-site requests are refused)"
    return None


def is_json(content_type: str | None) -> bool:
    """Whether a `Content-Type` says JSON (`application/json; charset=utf-8` does)."""
    return (content_type or "").split(";")[0].strip().lower() == "application/json"


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token: anyone who can reach the port
    could read and write the vault."""
    if not host.strip():
        raise InputError("--host is empty: give the address to listen on, such as 127.0.0.1 (this machine only)")
    if token is not None and not token.strip():
        raise InputError("the token is empty; give a long random string (--token or MEMVAULT_TOKEN)")
    if not is_loopback(host) and not token:
        raise Refused(f"refusing to listen on {host}, which other machines can reach, without a token: "
                      f"give --token or set {TOKEN_ENV} (clients send `Authorization: Bearer <token>`)")


def token_ok(expected: str | None, header: str | None) -> bool:
    """Whether an `Authorization` header carries the token (always, when none is set)."""
    if not expected:
        return True
    scheme, _, given = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer":  # auth schemes are case-insensitive (RFC 9110 §11.1)
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())


@dataclass
class RateLimiter:
    """A token bucket per client: `per_minute` requests a minute, in bursts up to that many.
    Thread-safe; `clock` is injectable for tests."""

    per_minute: int
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def allow(self, client: str) -> bool:
        return self.wait(client) == 0

    def wait(self, client: str) -> float:
        """0 when `client` may go on now (its request counted), else the seconds until a slot frees."""
        if self.per_minute <= 0:
            return 0.0
        now = self.clock()
        rate = self.per_minute / 60.0
        with self._lock:
            tokens, last = self._buckets.get(client, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - last) * rate)
            if tokens < 1:
                self._buckets[client] = (tokens, now)
                return (1 - tokens) / rate
            self._buckets[client] = (tokens - 1, now)
            if len(self._buckets) > 10_000:  # many one-off clients: forget the full buckets
                self._buckets = {k: v for k, v in self._buckets.items() if v[0] < self.per_minute - 1}
            return 0.0
