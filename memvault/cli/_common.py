"""Shared pieces of the CLI: the group, vault lookup, error mapping and output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from ..errors import InputError, MemvaultError


class MemvaultGroup(click.Group):
    """Turns library errors into click errors: bad input exits 2, other failures exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            raise click.UsageError(str(exc), ctx) from None
        except MemvaultError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=MemvaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault", "vault_path", envvar="MEMVAULT_VAULT", type=click.Path(file_okay=False),
    help="Vault directory. Default: $MEMVAULT_VAULT, else the nearest memvault.toml above here.",
)
@click.version_option(package_name="memvault")
@click.pass_context
def cli(ctx: click.Context, vault_path: str | None) -> None:
    """memvault: a Markdown-native memory vault for AI agents and people."""
    ctx.obj = {"vault_path": vault_path}


def open_vault(ctx: click.Context):  # -> Vault, imported lazily to keep start-up fast
    from ..vault import Vault

    return Vault.open(ctx.find_root().obj.get("vault_path"))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


def emit(data: Any, as_json: bool, text: Callable[[Any], str] | None = None) -> None:
    """Print `data` as JSON, or as text through `text`."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=_default))
    elif text is not None:
        out = text(data)
        if out:
            click.echo(out)


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def parse_when(vault, text: str | None, *, day_end: bool = False) -> datetime | None:
    if text is None:
        return None
    from ..timeparse import parse_time

    return parse_time(text, vault.config.tz, day_end=day_end)


def short(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def is_tty() -> bool:
    return sys.stdout.isatty()
