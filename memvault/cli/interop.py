"""`memvault import` and `memvault export`: other memory formats in and out (memvault/interop/)."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli._common import cli, emit, json_option, open_vault
from memvault.write.adopt_report import plural

IMPORT_FORMATS = ("agent-memory", "memory-jsonl")


@cli.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(IMPORT_FORMATS),
              help="The file's format; default: read from its first line.")
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
@json_option
@click.pass_context
def import_(ctx, file: Path, fmt: str | None, dry_run: bool, as_json: bool) -> None:
    """Import FILE: an agent-memory/0.1 file or the forgetting-curve skill's memory.jsonl.

    Each entry becomes a daily-log entry on its own day, with the file's id as its Id: (a
    memory.jsonl line gets one derived from its tick, time, type and summary), so importing
    the same file again adds nothing. Tombstones become Forgotten: lines, supersedes a
    Supersedes: line. A bad line or a secret refuses the whole import, naming the line,
    before anything is written (docs/interop.md).
    """
    from memvault.interop.formats import import_file

    emit(import_file(open_vault(ctx), file, fmt, dry_run=dry_run), as_json, _import_text)


@cli.command()
# Not a click.Choice: the library's EXPORTERS table is the one list (a format is one line there).
@click.option("--format", "fmt", required=True, metavar="FORMAT",
              help="The format to write: agent-memory (docs/interop.md) or memoryblock (docs/memoryblock.md).")
@click.option("--scope", help="Only the entries of this scope and the global ones (no scope, or global); "
                             "case-insensitive.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (atomically; not inside the vault's memory/); default or -: standard output.")
@json_option
@click.pass_context
def export(ctx, fmt: str, scope: str | None, output: Path | None, as_json: bool) -> None:
    """Write the vault's log entries in another format.

    agent-memory: every typed log entry, superseded and forgotten ones included (a tombstone
    after each forgotten one), so the file's current view is the vault's (docs/interop.md).
    memoryblock: the live entries, notes and MEMORY.md bullets as the fact-extraction protocol's
    MemoryBlocks, one JSON object a line (docs/memoryblock.md).
    """
    from memvault.interop.formats import export as run

    result = run(open_vault(ctx), fmt, scope, output)
    if as_json or result["text"] is None:
        emit(result, as_json, _export_text)
    else:
        click.echo(result["text"], nl=False)


def _import_text(d: dict) -> str:
    verb, forgot = ("would write", "would forget") if d["dry_run"] else ("wrote", "forgot")
    n = len(d["written"])
    lines = [f"{d['file']} ({d['format']}): {verb} {n} {'entry' if n == 1 else 'entries'}, "
             f"skipped {len(d['skipped'])}, {forgot} {len(d['forgotten'])}"]
    lines += [f"  + {w['id']}  {w['type']}  {w['at'][:16]}  {w['file']}" for w in d["written"]]
    lines += [f"  = {s['id']}  {s['reason']}" for s in d["skipped"]]
    lines += [f"  - {i}  forgotten" for i in d["forgotten"]]
    lines += [f"  ! {w}" for w in d["warnings"]]
    return "\n".join(lines)


def _export_text(d: dict) -> str:
    if d["format"] == "memoryblock":
        return f"{d['file']}: {plural(d['blocks'], 'block')} ({d['format']})"
    return f"{d['file']}: {plural(d['entries'], 'entry')}, {plural(d['tombstones'], 'tombstone')} ({d['format']})"
