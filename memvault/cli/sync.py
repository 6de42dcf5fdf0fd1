"""`memvault sync` and the merge driver git runs (`memvault merge-driver`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memvault.cli._common import cli, emit, json_option, open_vault

SHOWN = 10  # conflict lines in the text output; --json has every one


@cli.command()
@click.option("--remote", help="The git remote to sync with. Default: [sync] remote, the branch's upstream, or origin.")
@click.option("--no-push", is_flag=True, help="Commit, fetch and merge, but do not push.")
@json_option
@click.pass_context
def sync(ctx, remote, no_push, as_json) -> None:
    """Share the vault through its git remote: commit, fetch, merge entry by entry, push.

    Two machines appending to the same day both keep their entries, in time order; an entry
    edited on both machines is kept in both versions with a `Conflict:` line that `check`
    reports. Only MEMORY.md prose changed on both machines stops the sync for you
    (docs/sync.md).
    """
    from memvault.sync.run import sync as run_sync

    report = run_sync(open_vault(ctx), remote=remote, push=not no_push)
    emit(report.as_dict(), as_json, _text)


def _text(d: dict) -> str:
    where = f"{d['remote']}/{d['branch']}"
    lines = [f"sync with {where}: {d['result']}"]
    if d["recovered"]:
        lines.append(f"  {d['recovered']}")
    lines += [f"  committed: {c}" for c in d["committed"]]
    if d["merged_from"]:
        lines.append(f"  brought in {d['merged_from']} commit(s)")
    if d["pushed"]:
        lines.append(f"  pushed {d['pushed']} commit(s)")
    lines += [f"  review: {i} (a MEMORY.md bullet changed on two machines; `memvault curate` proposes it)"
              for i in d["reviews"]]
    shown = d["conflicts"][:SHOWN]
    lines += [f"  conflict: {c}" for c in shown]
    if len(d["conflicts"]) > len(shown):
        lines.append(f"  ... and {len(d['conflicts']) - len(shown)} more (--json lists them all)")
    if d["conflicts"]:
        lines.append("  `memvault check` lists them until they are resolved (MV023)")
    return "\n".join(lines)


@cli.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("ours", type=click.Path(path_type=Path))
@click.argument("theirs", type=click.Path(path_type=Path))
@click.argument("path")
def merge_driver(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """Merge one memory file for git (.git/info/attributes routes the vault's Markdown here)."""
    from memvault.sync.driver import run_for_git

    sys.exit(run_for_git(base, ours, theirs, path))
