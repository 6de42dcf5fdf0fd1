"""Shared pieces of the CLI: the group, the shared options, vault lookup and output (errors: _errors.py).

Everything the CLI prints as text goes through `printable` (here, in `emit`, `say` and the
error mapping): entry text, snippets, paths and problem messages come from files, and a
control character in them must not reach the terminal (docs/security.md).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import click

from memvault.cli._errors import JSON_KEY, json_errors, json_notice, mapped_errors, wants_json
from memvault.errors import InputError
from memvault.textsafety import dumps_json, printable

VAULT_HELP = "Vault directory. Default: $MEMVAULT_VAULT, else the nearest memvault.toml above here."
VAULT_KEY = "memvault.vault"  # ctx.meta: the --vault given after the subcommand, if any
JSON_FIRST = "memvault.json_first"  # ctx.meta: --json given before the subcommand


def vault_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--vault's value, refused when it looks like an option: `list --vault --json` took
    `--json` as the vault's path (a directory named so is still `--vault ./--json`)."""
    if value is not None and value.startswith("-") and \
            ctx.get_parameter_source(param.name or "") == click.core.ParameterSource.COMMANDLINE:
        raise click.BadParameter(f"needs a directory, got the option-like {value!r} (for a directory named "
                                 f"so, write ./{value})", ctx, param)
    return value


def _remember_vault(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    value = vault_value(ctx, param, value)
    if value is not None:
        ctx.meta[VAULT_KEY] = value
    return value


def JSON_GROUP_OPTION() -> click.Option:  # noqa: N802 (a fresh option per group, named like the constant it is)
    """--json before a subcommand, on the top group and on sub-groups (`hook`): the same as after it."""
    return click.Option(["--json"], is_flag=True, expose_value=False, callback=lambda ctx, _, on: _remember_json(ctx, on),
                        help="Print JSON for programs: the same as --json after the subcommand.")


class _SharedOptions:
    """What every command and sub-group gets without declaring it: `--vault` after the
    subcommand (and after arguments), which wins over one before it and over $MEMVAULT_VAULT.

    `uses_vault=False` (init, adopt, demo: they take a DIRECTORY) leaves it out. The option is
    not passed to the command's function; `open_vault` reads it.
    """

    params: list[click.Parameter]

    def __init__(self, *args: Any, uses_vault: bool = True, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.uses_vault = uses_vault
        if uses_vault and not any("--vault" in getattr(p, "opts", ()) for p in self.params):
            self.params.append(click.Option(
                ["--vault"], type=click.Path(file_okay=False), expose_value=False, callback=_remember_vault,
                help=VAULT_HELP))
        if isinstance(self, click.Group) and not any("--json" in getattr(p, "opts", ()) for p in self.params):
            self.params.append(JSON_GROUP_OPTION())  # `memvault hook --json status`, as `memvault --json list`


    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]  # a mixin: click.Command's
        except click.UsageError as exc:
            if exc.ctx is None:  # click's parser leaves it out of "Option '--vault' requires an argument"
                exc.ctx = ctx    # and the usage line with it
                setattr(exc, "cmd", ctx.command)  # noqa: B010 (Final in click's types, set in its __init__)
            raise


class MemvaultCommand(_SharedOptions, click.Command):
    """A command whose usage errors show its own usage line (`memvault log ...`)."""

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.meta.get(JSON_FIRST) and not any("--json" in getattr(p, "opts", ()) for p in self.params):
            raise click.UsageError(f"{ctx.command_path} has no --json (it was given before the subcommand)", ctx)
        with mapped_errors(ctx):
            return super().invoke(ctx)


class MemvaultGroup(_SharedOptions, click.Group):
    """The group; its commands and sub-groups map errors like `MemvaultCommand`.

    The top group also decides, from the raw command line, whether errors are JSON (`--json`
    anywhere, see cli/_errors.py): parse errors included.
    """

    command_class = MemvaultCommand
    group_class = type  # sub-groups (`hook`) are MemvaultGroups too

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        if parent is not None:
            return super().make_context(info_name, args, parent, **extra)
        wanted = wants_json(args)
        with json_errors(wanted):
            ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[JSON_KEY] = wanted
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        with json_errors(ctx.meta.get(JSON_KEY, False)), mapped_errors(ctx):
            return super().invoke(ctx)


@click.group(cls=MemvaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--vault", "vault_path", envvar="MEMVAULT_VAULT", type=click.Path(file_okay=False), help=VAULT_HELP,
              callback=vault_value)
@click.version_option(package_name="memvault")
@click.pass_context
def cli(ctx: click.Context, vault_path: str | None) -> None:
    """memvault: a Markdown-native memory vault for AI agents and people."""
    ctx.obj = {"vault_path": vault_path}
    _show_notices()


class _Notices(logging.Handler):
    """What the library says it did on its own (a damaged index rebuilt, a stale git lock
    removed), on stderr; looked up at each line so a redirected stderr is honoured."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        click.echo(json_notice(message) or printable(f"memvault: {message}"), err=True)  # paths come from the vault


def _show_notices() -> None:
    logger = logging.getLogger("memvault")
    if not any(isinstance(h, _Notices) for h in logger.handlers):
        logger.addHandler(_Notices(logging.WARNING))


MAX_COUNT = 1_000_000


def count(min: int = 1) -> click.IntRange:
    """Every -n/--limit-like option: a bounded int, so that a huge one is a usage error naming the
    option rather than an OverflowError where it meets SQLite or C code."""
    return click.IntRange(min, MAX_COUNT)


def limit_option(help: str = "At most this many entries.", default: int | None = None) -> Callable[[Any], Any]:
    """-n/--limit, the one spelling of "at most this many" (search, asof, list, changes)."""
    return click.option("--limit", "-n", type=count(), default=default, show_default=default is not None, help=help)


def mode_option(extra: str = "") -> Callable[[Any], Any]:
    """--mode, how a query is matched (search, asof, context): one spelling and one help."""
    return click.option("--mode", type=click.Choice(["lexical", "semantic", "hybrid"]),
                        help="Match words (lexical), meaning (semantic: needs memvault[semantic]) or both, fused "
                             "(hybrid). Default: [semantic] mode in memvault.toml; hybrid when the extra and a "
                             "model are installed." + extra)


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses nan and infinity, which pass its comparisons."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class TimeText(click.ParamType):
    """A time as people type it (see timeparse), checked as the command line is read so that an
    unreadable or out-of-range one is a usage error naming its option. The command parses it again
    in the vault's zone. With `revisions`, text that is not a time passes (asof, changes, diff also
    take git revisions; the library says when it is neither), but a time out of range does not."""

    name = "text"

    def __init__(self, *, revisions: bool = False):
        self.revisions = revisions

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from memvault.entries.timeparse import TimeOutOfRange, parse_time

        try:
            parse_time(value, UTC)
        except TimeOutOfRange as exc:
            self.fail(str(exc), param, ctx)
        except InputError as exc:
            if not self.revisions:
                self.fail(str(exc), param, ctx)
        return value


TIME = TimeText()
TIME_OR_REVISION = TimeText(revisions=True)


def open_vault(ctx: click.Context):  # -> Vault, imported lazily to keep start-up fast
    """The vault --vault names, closed (its caches and git processes released) when the
    command's context ends, however it ends."""
    from memvault.vault import Vault

    path = ctx.meta.get(VAULT_KEY) or (ctx.find_root().obj or {}).get("vault_path")
    return ctx.with_resource(Vault.open(path))


def _remember_json(ctx: click.Context, on: bool) -> None:
    if on:
        ctx.meta[JSON_FIRST] = True


def _json_first() -> bool:
    """--json's default: whether it came before the subcommand (`memvault --json list`)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(JSON_FIRST))


json_option = click.option("--json", "as_json", is_flag=True, default=_json_first, help="Print JSON for programs.")


def emit(data: Any, as_json: bool, text: Callable[[Any], str] | None = None,
         *, style: Callable[[str], str] | None = None) -> None:
    """Print `data` as JSON (exact text, JSON-escaped), or as text through `text`, with
    control characters escaped; `style` adds memvault's own colours after that."""
    if as_json:
        click.echo(dumps_json(data, indent=2, default=_default))
    elif text is not None:
        out = text(data)
        if out:
            out = printable(out)
            click.echo(style(out) if style else out)


def say(text: str, **style: Any) -> None:
    """`click.secho` for text that may hold file content: control characters escaped first."""
    click.secho(printable(text), **style)


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def parse_when(vault, text: str | None, *, day_end: bool = False) -> datetime | None:
    if text is None:
        return None
    from memvault.entries.timeparse import parse_time

    return parse_time(text, vault.config.tz, day_end=day_end)


def parse_window(vault, since: str | None, until: str | None,
                 *, until_name: str = "--until") -> tuple[datetime | None, datetime | None]:
    """--since and --until read in the vault's zone (a plain --until date is that day's end); a
    window that ends before it starts is a usage error (timeparse.check_window, the one check)."""
    from memvault.entries.timeparse import check_window

    start, end = parse_when(vault, since), parse_when(vault, until, day_end=True)
    check_window(start, end, since_text=since, until_text=until, until_name=until_name)
    return start, end


def short(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def tally(items: list[dict]) -> str:
    """`3 entries`, or `3 entries, 2 notes` when freeform notes are among them."""
    notes = sum(d.get("type") == "note" for d in items)
    entries = len(items) - notes
    text = f"{entries} entr{'y' if entries == 1 else 'ies'}"
    return text + (f", {notes} note{'' if notes == 1 else 's'}" if notes else "")


def folded_sources(d: dict) -> str:
    """`  sources: ID, ID`: the log entries folded under a bullet (`entries/folding.py`)."""
    return f"  sources: {', '.join(d['folded'])}" if d.get("folded") else ""


def folded_tally(items: list[dict]) -> str:
    """` (+2 log entries shown as a bullet's sources; --all lists them)`, when any were folded."""
    n = sum(len(d.get("folded", ())) for d in items)
    if not n:
        return ""
    return f" (+{n} log entr{'y' if n == 1 else 'ies'} shown as a bullet's sources; --all lists them)"


def is_tty() -> bool:
    return sys.stdout.isatty()


def retention_lines(d: dict) -> list[str]:
    """`retention 0.62 (active under forgetting-curve; 3 presentations, 2 recalls)` for `show`."""
    r = d.get("retention")
    if not r:
        return []
    shown, recalls = r["presentations"], r["accesses"]
    return [f"retention {r['value']:.2f} ({r['status']} under {r['model']}; {shown} presentation{'' if shown == 1 else 's'}, "
            f"{recalls} recall{'' if recalls == 1 else 's'})"]


# ● active, ◐ fading, ○ forgotten: entries/retention.py's MARKS, spelled here so the CLI's
# start does not load the models.
RETENTION_MARKS = {"active": "\u25cf", "fading": "\u25d0", "forgotten": "\u25cb"}


def retention_mark(d: dict) -> str:
    """`● ` for an entry of `list`, `search` or `asof` by its retention status (docs/retention.md)."""
    r = d.get("retention")
    return f"{RETENTION_MARKS[r['status']]} " if r else ""


def row_figures(d: dict) -> str:
    """`conf 0.95  ● 0.62  ` for a row of `list`, `asof` or `changes`: confidence labelled, then the
    retention status's mark followed by the retention it marks (docs/retention.md)."""
    r = d.get("retention")
    return f"conf {d['confidence']:.2f}  " + (f"{RETENTION_MARKS[r['status']]} {r['value']:.2f}  " if r else "")


def status_tag(d: dict) -> str:
    """` [superseded by ID]`, ` [forgotten 2026-12-01]` (since when: a `Forgotten:` line or
    `memvault maintain`), ` [expired]`; empty for a live entry."""
    if d["status"] == "live":
        return ""
    if d.get("superseded_by"):
        return f" [{d['status']} by {d['superseded_by']}]"
    if d["status"] == "forgotten" and d.get("forgotten"):
        return f" [forgotten {d['forgotten'][:10]}]"
    return f" [{d['status']}]"

