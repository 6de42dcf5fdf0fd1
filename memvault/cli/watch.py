"""`memvault watch`: keep the index (and optionally git and its remote) current while files change."""

from __future__ import annotations

import click

from memvault.cli._common import FiniteFloatRange, cli, emit, json_option, open_vault


@cli.command()
@click.option("--commit", is_flag=True, help="Commit changed Markdown to the vault's git repo after a quiet period.")
@click.option("--debounce", "debounce_ms", type=FiniteFloatRange(0, 10_000),
              help="Wait this many ms after a file's last event before indexing it. Default: 50.")
@click.option("--quiet-period", "quiet", type=FiniteFloatRange(0, 86_400),
              help="With --commit: seconds without changes before committing. Default: 10.")
@click.option("--reconcile", type=FiniteFloatRange(0.1, 86_400),
              help="Seconds between light reconciles (sizes, mtimes, some hashes) that catch missed events. "
                   "Default: 15 (at most 2 with --polling).")
@click.option("--sync", "sync_every", type=FiniteFloatRange(0, 86_400), is_flag=False, flag_value=0.0,
              metavar="[SECONDS]",
              help="Also share the vault through its git remote (`memvault sync`): after each commit and every "
                   "SECONDS. Implies --commit. Without a value: [sync] interval_seconds, else 60.")
@click.option("--polling", is_flag=True, help="Poll the files instead of using the OS's file events.")
@click.option("--backend", help="Index backend (default: [index] backend in memvault.toml).")
@json_option
@click.pass_context
def watch(ctx, commit, debounce_ms, quiet, reconcile, sync_every, polling, backend, as_json) -> None:
    """Watch the vault and update the index on every change, until Ctrl-C or SIGTERM.

    On start it catches up on whatever changed while nobody watched. Logs one line per
    update (--json: one JSON object per line, for supervisors). One watcher per vault.
    With --sync a failed sync is logged and tried again at the next interval; a sync
    stopped for you (MEMORY.md prose changed on two machines) waits until you resolve it.
    """
    from memvault.watch.logsink import LogSink
    from memvault.watch.watcher import Watcher, WatchOptions

    vault = open_vault(ctx)
    options = WatchOptions.from_config(
        vault, debounce=None if debounce_ms is None else debounce_ms / 1000, commit=commit or None,
        commit_quiet=quiet, reconcile=reconcile, sync_every=sync_every, observer="polling" if polling else None, backend=backend,
    )
    ctx.exit(Watcher(vault, options, LogSink(as_json=as_json)).run())


def index_wait(ctx, *, backend: str | None, timeout: float, rebuild: bool, as_json: bool) -> None:
    """`memvault index --wait`: one call to wait_until_indexed, then print what it did."""
    from memvault.errors import InputError
    from memvault.watch import wait_until_indexed

    if rebuild:
        raise InputError("--wait and --rebuild do not go together: a rebuild already returns when done")
    report = wait_until_indexed(open_vault(ctx), timeout, backend=backend)
    emit(report.to_dict(), as_json, _wait_text)


def _wait_text(d: dict) -> str:
    n = len(d["updated"])
    lines = [f"index reflects the files ({n} file{'s' * (n != 1)} updated in {d['seconds']:.2f}s; "
             f"watcher {d['watcher']})"]
    lines += [f"  kept last good entries: {why}" for why in d["broken"].values()]
    return "\n".join(lines)
