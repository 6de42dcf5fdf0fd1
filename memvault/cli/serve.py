"""`memvault mcp` and `memvault serve`: the vault for agents (the optional `serve` extra)."""

from __future__ import annotations

import click

from memvault.cli._common import cli, json_option, open_vault
from memvault.textsafety import dumps_json

NO_WATCH_HELP = "Do not run the watcher inside the server (every search then checks the files itself)."


@cli.command()
@click.option("--no-watch", is_flag=True, help=NO_WATCH_HELP)
@json_option
@click.pass_context
def mcp(ctx, no_watch: bool, as_json: bool) -> None:
    """Serve the vault's MCP tools over stdin/stdout, for a desktop agent client to start.

    Tools: search, get, remember, asof, changes, history, curate_preview, context;
    resources: MEMORY.md and today's log (docs/agents.md has client configs). The watcher
    runs inside, so edits made meanwhile are searchable. Needs `pip install 'memvault[serve]'`.
    The protocol owns stdout; --json only shapes an error that stops it from starting.
    """
    from memvault.serve import require_extra

    require_extra("memvault mcp")
    from memvault.serve.run import run_stdio
    from memvault.serve.service import Service

    ctx.exit(run_stdio(Service(open_vault(ctx).root, watch=not no_watch)))


@cli.command()
@click.option("--host", help="Address to listen on. Default: [serve] host, 127.0.0.1 (this machine only); "
                             "any other needs a token.")
@click.option("--port", type=click.IntRange(0, 65535), help="Port (0: any free one). Default: [serve] port, 8765.")
@click.option("--token", help="Require `Authorization: Bearer TOKEN` on every request. Default: $MEMVAULT_TOKEN.")
@click.option("--no-watch", is_flag=True, help=NO_WATCH_HELP)
@json_option
@click.pass_context
def serve(ctx, host: str | None, port: int | None, token: str | None, no_watch: bool, as_json: bool) -> None:
    """Serve the vault over HTTP: MCP (streamable HTTP) at /mcp and a JSON API at /v0.

    One process, with the watcher inside; runs until Ctrl-C or SIGTERM. Listens on loopback
    unless --host says otherwise, which needs a token (--token or MEMVAULT_TOKEN). Body size
    and per-client rate limits: [serve] in memvault.toml. Needs `pip install 'memvault[serve]'`.
    Once listening it says where, on stderr (--json: one JSON object on stdout, for supervisors).
    """
    from memvault.serve import require_extra
    from memvault.serve.settings import SERVE_DEFAULTS, ServeSettings

    vault = open_vault(ctx)
    settings = ServeSettings.from_config(vault.config.section("serve", SERVE_DEFAULTS), host=host, port=port,
                                         token=token)
    require_extra("memvault serve")
    from memvault.serve.run import ready_message, run_http
    from memvault.serve.service import Service

    def announce(url: str) -> None:
        message = ready_message(url)
        if as_json:  # one line, as `watch --json` logs: a supervisor reads it with readline
            click.echo(dumps_json({k: v for k, v in message.items() if k != "text"}))
        else:
            click.echo(message["text"], err=True)

    ctx.exit(run_http(Service(vault.root, watch=not no_watch), settings, announce))
