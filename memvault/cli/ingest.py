"""`memvault ingest`: facts from a conversation or tool log (memvault/ingest/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memvault.cli._common import (
    TIME,
    FiniteFloatRange,
    cli,
    emit,
    json_option,
    open_vault,
    parse_when,
)


@cli.command()
@click.argument("transcript", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--with", "command", metavar="CMD",
              help="Let CMD extract and score the facts: it gets JSON on stdin, prints a JSON array "
                   "of fact objects (docs/ingest.md).")
@click.option("--source", metavar="ID", help="The transcript's id in Source: lines (ID#turn-N). Default: its file name.")
@click.option("--at", "at", type=TIME, help="The time the entries get (when the conversation happened). Default: now.")
@click.option("--timeout", type=FiniteFloatRange(0, None, min_open=True), default=120.0, show_default=True, metavar="SECONDS",
              help="Seconds --with CMD may take.")
@click.option("--dry-run", is_flag=True, help="Print the entries it would write; write nothing.")
@json_option
@click.pass_context
def ingest(ctx, transcript: str, command: str | None, source: str | None, at: str | None, timeout: float,
           dry_run: bool, as_json: bool) -> None:
    """Extract facts from a conversation or tool log into the vault.

    TRANSCRIPT is plain text, USER:/AGENT: lines with [TOOL_CALL: ...] and
    [TOOL_OUTPUT: ...], or JSON messages ({role, content} list or JSON Lines);
    '-' reads stdin. Instructions, preferences, names, decisions, ids and
    corrections become entries with Importance:, Source: ID#turn-N and the
    speaker; a fact the vault already says becomes a Reconfirms: entry, a
    correction a Supersedes: one. Lines that look like secrets are withheld.
    Ingesting the same transcript again writes nothing.
    """
    from memvault.ingest.run import ingest as run
    from memvault.ingest.run import read_file

    vault = open_vault(ctx)
    if transcript == "-":
        text, name = sys.stdin.read(), "stdin"
    else:
        text, name = read_file(Path(transcript)), transcript
    report = run(vault, text, name, source=source or ("stdin" if transcript == "-" else None), command=command,
                 at=parse_when(vault, at), dry_run=dry_run, timeout=timeout)
    emit(report.to_dict(), as_json, _text)


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _text(d: dict) -> str:
    """The report; an action reads as in --json and docs/ingest.md."""
    out = [f"{d['transcript']}: {_n(d['turns'], 'turn')}, {_n(len(d['facts']), 'fact')} ({d['extractor']})"
           + (f"; {_n(d['withheld_lines'], 'line')} withheld as secrets" if d["withheld_lines"] else "")]
    for f in d["facts"]:
        what = f["content"] if f["content"] is not None else "(not shown)"
        tail = f"  [{f['why']}]" if f["why"] else ""
        out.append(f"  {f['action']:<10} turn {f['turn'] or '-':<3} {f['importance']:.2f} {f['kind']:<11} "
                   f"{what}{tail}")
    writes = sum(n for a, n in d["counts"].items() if a in ("new", "reconfirm", "supersede"))
    if d["dry_run"]:
        out += ["", "would write:", ""] + d["entries"] if d["entries"] else ["dry run: nothing to write"]
        out.append("dry run: nothing was written")
    else:
        ids = [f["id"] for f in d["facts"] if f["action"] in ("new", "reconfirm", "supersede")]
        out.append(f"wrote {_n(writes, 'entry', 'entries')}" + (f": {', '.join(ids)}" if ids else ""))
    return "\n".join(out)
