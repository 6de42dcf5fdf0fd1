"""memvault for agents: MCP tools (stdio and streamable HTTP) and a JSON HTTP API.

`memvault mcp` serves the MCP tools over stdio (what desktop clients start); `memvault serve`
serves MCP over streamable HTTP at `/mcp` plus the `/v0` JSON API, with the watcher running
inside the process. Everything here calls the library (`memvault.vault.Vault`,
`memvault.write.log`, the index); the server adds transport and guards, no memory logic.

The MCP SDK, starlette and uvicorn are the optional extra `serve`: only the modules that need
them import them (`mcp_tools`, `http`, `run`), and only when a server starts. `service` and
`settings` import nothing from the extra, so the CLI and the tests of the operations stay light.
"""

from __future__ import annotations

import importlib.util

from memvault.errors import Refused

EXTRA = "serve"
INSTALL_HINT = "pip install 'memvault[serve]'"
NEEDED = ("mcp", "starlette", "uvicorn")


class ExtraMissing(Refused):
    """The `serve` extra (MCP SDK, starlette, uvicorn) is not installed (a refusal: exit 1)."""


def missing_modules() -> list[str]:
    """The modules of the `serve` extra that cannot be imported here (found without importing)."""
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


def require_extra(what: str) -> None:
    """Refuse, saying how to install it, when the `serve` extra is not installed."""
    missing = missing_modules()
    if missing:
        raise ExtraMissing(f"{what} needs the optional extra `{EXTRA}` ({', '.join(missing)} not installed): "
                           f"{INSTALL_HINT}")
