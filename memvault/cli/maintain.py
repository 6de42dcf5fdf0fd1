"""`memvault maintain`: the `[retention]` policies (memvault/maintain/run.py)."""

from __future__ import annotations

import click

from memvault.cli._common import TIME, cli, emit, json_option, open_vault, parse_when


@cli.command()
@click.option("--dry-run", is_flag=True, help="Print exactly what would change; write nothing.")
@click.option("--archive/--no-archive", "archive", default=None,
              help="Move forgotten entries out of the daily logs into the archive ([retention] archive_dir, "
                   "`forgotten/YYYY.md`). Default: [retention] archive in memvault.toml (false).")
@click.option("--at", "at", type=TIME, help="Judge retention as of this time. Default: now.")
@json_option
@click.pass_context
def maintain(ctx, dry_run: bool, archive: bool | None, at: str | None, as_json: bool) -> None:
    """Forget what has faded: apply the [retention] policies to the live entries.

    Each live, dated log entry's retention under [decay] model is computed; an entry below
    [retention] forget_below (0.1) is forgotten, and with [retention] max_live N only the N
    highest stay (the lowest retention goes first, ties by the oldest); an entry of importance
    [retention] keep_importance (0.7, high) or more is never forgotten. A recorded entry these
    policies would no longer forget is brought back. A forgotten entry leaves
    list, search, asof and curate (--all shows it) until a later entry reconfirms it or says
    it again. Forgetting is recorded in .memvault/forgotten.sqlite, never in the Markdown:
    deleting .memvault/ brings everything back until maintain runs again. With --archive the
    forgotten entries move, whole, to the archive files, except one that supersedes, reconfirms or
    is named by another entry (it stays in its log); nothing is ever deleted. Running it
    twice changes nothing the second time (docs/retention.md, "Maintenance").
    """
    from memvault.maintain.run import maintain as run

    vault = open_vault(ctx)
    report = run(vault, dry_run=dry_run, archive_flag=archive, at=parse_when(vault, at))
    emit(report.to_dict(), as_json, _text)


def _text(d: dict) -> str:
    would = "would " if d["dry_run"] else ""
    out = [f"{d['considered']} live entries judged under {d['model']} at {d['at'][:16]}"]
    for f in d["forgotten"]:
        out.append(f"  {would}forget {f['id']}  retention {f['retention']:.3f}  ({f['policy']})")
    for m in d["archived"]:
        out.append(f"  {would}archive {m['id']}  {m['from']} -> {m['to']}")
    for b in d["brought_back"]:
        out.append(f"  {'would bring' if d['dry_run'] else 'brings'} back {b['id']}: {b['why']}")
    for k in d["kept_in_log"]:
        out.append(f"  {k['id']} kept in its log: {k['why']}")
    if not d["forgotten"] and not d["archived"] and not d["brought_back"]:
        out.append("nothing to forget")
    elif d["dry_run"]:
        out.append("dry run: nothing was written")
    else:
        out.append(f"forgot {len(d['forgotten'])}, archived {len(d['archived'])}, brought back "
                   f"{len(d['brought_back'])}; recorded in {d['record']}")
    return "\n".join(out)
