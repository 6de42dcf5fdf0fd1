"""Core commands: init, adopt, log, show, list, demo (check and hook live in check.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memvault.cli._common import (
    TIME,
    FiniteFloatRange,
    cli,
    emit,
    folded_sources,
    folded_tally,
    json_option,
    limit_option,
    open_vault,
    parse_when,
    parse_window,
    retention_lines,
    row_figures,
    say,
    short,
    status_tag,
    tally,
)

TYPE_HELP = "Observation, belief, decision, correction, procedure or a type from [vault] extra_types."


@cli.command(uses_vault=False)  # it makes one: no --vault (cli/_common.py, _SharedOptions)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--adopt", "adopt_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Adopt the memory already in DIR instead (the same as `memvault adopt DIR`).")
@click.option("--timezone", help="IANA zone for times without one. Default: this machine's zone.")
@click.option("--no-git", is_flag=True, help="Do not create a git repository.")
@click.option("--hook/--no-hook", default=True, show_default=True,
              help="Install the git pre-commit hook that runs `memvault check --staged`.")
@click.pass_context
def init(ctx, directory: str, adopt_dir: str | None, timezone: str | None, no_git: bool, hook: bool) -> None:
    """Create a new vault in DIRECTORY from the template (with git, a first commit and the hook)."""
    if adopt_dir is not None:
        if ctx.get_parameter_source("directory") != click.core.ParameterSource.DEFAULT:
            raise click.UsageError("give either DIRECTORY or --adopt DIR, not both")
        ctx.invoke(adopt, directory=adopt_dir, timezone=timezone, no_git=no_git, hook=hook)
        return
    from memvault.write.log import init_vault

    root = init_vault(Path(directory), timezone=timezone, git=not no_git)
    say(f"created vault in {root}")
    if hook and not no_git:
        from memvault.check.hook import install

        say(install(root).describe() + " (remove: memvault hook install --uninstall)")
    say(f"next: memvault --vault {root} log \"something worth remembering\"")


@cli.command(uses_vault=False)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--timezone", help="IANA zone for times without one. Default: this machine's zone.")
@click.option("--no-git", is_flag=True, help="Do not create a git repository where there is none.")
@click.option("--hook/--no-hook", default=True, show_default=True,
              help="Install the pre-commit hook (judging only the lines a commit changes).")
@click.option("--commit", is_flag=True,
              help="Commit the memory files as they are (and memvault.toml), unless the secret scan finds something.")
@json_option
@click.pass_context
def adopt(ctx, directory: str, timezone: str | None, no_git: bool, hook: bool, commit: bool = False,
          as_json: bool = False) -> None:
    """Make the memory already in DIRECTORY (memory/, MEMORY.md) a vault, changing none of its files.

    Writes memvault.toml beside them ([hook] judge = "changed-lines"), runs `git init` only
    where there is no repository, builds the search index, installs the pre-commit hook
    (never over another hook) and reports the files, entries, notes and problems it found.
    Nothing is committed without --commit (which fails, committing nothing, when the
    secret scan finds something).
    """
    from memvault.write.adopt import adopt_vault

    report = adopt_vault(Path(directory), timezone=timezone, git=not no_git, hook=hook, commit=commit)
    emit(report.to_dict(), as_json, lambda _: "\n".join(report.lines()))
    if report.refused:
        ctx.exit(1)


@cli.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--type", "etype", default="observation", show_default=True, help=TYPE_HELP)
@click.option("--at", "at", type=TIME, help="When it happened: '2026-02-21 09:15', 'yesterday 9am'. Default: now.")
@click.option("--future", is_flag=True, help="Allow an --at after now (a planned entry; check warns, MV016).")
@click.option("--supersedes", help="Id, [[link]] or description of the entry this one replaces.")
@click.option("--reconfirms", multiple=True, help="Entry this one confirms again (repeatable).")
@click.option("--confidence", type=FiniteFloatRange(0, 1), help="0-1, default 1.0.")
@click.option("--importance", help="high, medium, low or 0-1.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--source", help="user, a URL or a session id.")
@click.option("--scope", help="global, a domain, or project:<name>.")
@click.option("--expires", type=TIME, help="When it stops being true, after the entry's time: a date (expires as that day starts) or a date and time.")
@click.option("--id", "entry_id", help="Explicit id instead of the date-and-time one.")
@json_option
@click.pass_context
def log(ctx, text, etype, at, future, supersedes, reconfirms, confidence, importance, tags, source, scope, expires,
        entry_id, as_json):
    """Append an entry to today's (or --at's) daily log and print its id.

    TEXT '-' reads the text from stdin (multi-line text without shell quoting).

    \b
    Times (--at, --expires; without a zone, the vault's zone):
      2026-02-21, 2026-02-21 09:15, 2026-02-21T09:15+01:00
      now, 14:30, 9am, 9:15pm, noon, midnight (today)
      today, yesterday, tomorrow (the day's start), optionally with a
        time of day: 'yesterday 9am', 'tomorrow 14:00'
      '3 days ago', '2 hours ago', '90 min ago', '3 days ago 14:30'
    Nothing is written for a time after now (without --future) or an
    --expires at or before the entry's time.
    """
    from memvault.write.log import log_entry, log_result

    vault = open_vault(ctx)
    body = sys.stdin.read() if text == ("-",) else " ".join(text)
    event = log_entry(
        vault, body, type=etype, at=parse_when(vault, at), supersedes=supersedes,
        reconfirms=tuple(reconfirms), confidence=confidence, importance=importance,
        tags=tuple(t.strip() for t in tags.split(",") if t.strip()), source=source, scope=scope, expires=parse_when(vault, expires),
        entry_id=entry_id, future=future,
    )
    emit(log_result(vault, event), as_json, lambda d: d["id"])


@cli.command()
@click.argument("event_id")
@click.option("--no-record", is_flag=True, help="Do not count this as a recall (recency, curate's recall counts).")
@json_option
@click.pass_context
def show(ctx, event_id: str, no_record: bool, as_json: bool) -> None:
    """Show one entry with its metadata and supersession links.

    EVENT_ID is an id, the start of one, or a place as search and check print it:
    memory/2026-02-01.md#L12-L14 or memory/2026-02-01.md:12. Showing an entry counts as
    recalling it (docs/search.md, "Recalls").
    """
    emit(open_vault(ctx).show(event_id, record=not no_record), as_json, _show_text)


def _show_text(d: dict) -> str:
    lines = [f"{d['id']}  {d['type']}  {d['timestamp'] or 'undated'}  [{d['status']}]", ""]
    why = (d.get("found_by") or {}).get("why")
    if why:  # an entry standing in for what was typed (a bullet for a log's old name): say so
        lines[1:1] = [f"found by {d['found_by']['how']}: {why}"]
    if d.get("path"):  # a note: the headings it is under, its own (its title) last
        lines += ["under: " + " \u203a ".join(d["path"]), ""]
    elif d.get("title"):
        lines += [d["title"], ""]
    lines += [d["content"], ""]
    lines.append(f"confidence {d['confidence']:.2f} (from {d['confidence_0']:g})")
    lines += retention_lines(d)
    if d["importance"] is not None:
        lines.append(f"importance {d['importance']:g}")
    for key in ("supersedes", "superseded_by", "source", "scope", "expires", "category", "updated", "previous"):
        if d.get(key):
            lines.append(f"{key.replace('_', ' ')}: {d[key]}")
    lines += _reconfirm_lines(d)
    if d["tags"]:
        lines.append("tags: " + ", ".join(d["tags"]))
    if d["sources"]:
        lines.append("sources: " + ", ".join(d["sources"]))
    if d.get("cited_by"):  # the curated bullets that `list` and `search` show it under
        lines.append("cited by: " + ", ".join(d["cited_by"]))
    lines.append(f"{d['file']}:{d['line']}")
    return "\n".join(lines)


def _reconfirm_lines(d: dict) -> list[str]:
    """What this entry confirms again, and who confirmed it (each resets decay): JSON had them,
    text did not, so a confidence that had not decayed looked unexplained."""
    out = []
    refs = d.get("reconfirms_ref") or []
    if refs:
        done = d.get("reconfirms") or []
        written = "" if len(done) == len(refs) else f" (as written: {', '.join(refs)}; {len(refs) - len(done)} not found)"
        out.append("reconfirms: " + (", ".join(done) or "nothing") + written)
    if d.get("reconfirmed_by"):
        out.append("reconfirmed by: " + ", ".join(d["reconfirmed_by"]))
    return out


@cli.command("list")
@click.option("--type", "types", multiple=True, help="Only this type (repeatable).")
@click.option("--since", type=TIME, help="Entries at or after this time.")
@click.option("--until", type=TIME, help="Entries at or before this time.")
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag (repeatable).")
@click.option("--all", "include_all", is_flag=True, help="Include superseded and expired entries.")
@limit_option("At most this many entries: the newest N, still listed oldest first.")
@json_option
@click.pass_context
def list_cmd(ctx, types, since, until, tags, include_all, limit, as_json) -> None:
    """List live entries, oldest first.

    A log entry that a curated bullet cites is shown once, as the bullet's sources;
    `--all` and `--json` list both.
    """
    from memvault.entries.folding import fold_cited

    vault = open_vault(ctx)
    now = vault.now()  # live as of now, like search and `asof now`: a future-dated entry is not yet
    start, end = parse_window(vault, since, until)
    events = vault.entries(types=types, since=start, until=end, tags=tags, include_all=include_all, at=now,
                           limit=limit)
    items = vault.shapes(events, now)
    emit(items if as_json or include_all else fold_cited(items), as_json, _list_text)


def _list_text(items: list[dict]) -> str:
    rows = []
    for d in items:
        rows.append(f"{d['id']:<20} {d['type']:<11} {row_figures(d)}{short(d['content'], 58)}"
                    f"{status_tag(d)}" + folded_sources(d))
    rows.append(tally(items) + folded_tally(items))
    return "\n".join(rows)


@cli.command(uses_vault=False)
@click.argument("directory", required=False, type=click.Path(file_okay=False))
def demo(directory: str | None) -> None:
    """Build a demo vault in DIRECTORY (default: a new temporary folder) and tour it.

    The vault holds the seed's story, dated relative to today and committed day by day.
    """
    import tempfile

    from memvault.demo import build_demo, demo_dates

    root = build_demo(Path(directory) if directory else Path(tempfile.mkdtemp(prefix="memvault-demo-")))
    say(f"demo vault in {root}\n")
    for args in _tour(demo_dates()["d0"]):
        say("$ memvault " + " ".join(f"'{a}'" if " " in a else a for a in args))
        try:
            cli.main(["--vault", str(root), *args], prog_name="memvault", standalone_mode=False)
        except click.ClickException as exc:  # one failing step should not end the tour
            exc.show()
        except SystemExit:
            pass
        say("")
    say(f"try: export MEMVAULT_VAULT={root}; memvault --help")


def _tour(d0: str) -> list[list[str]]:
    """The commands the demo runs; those whose module is not installed are skipped."""
    tour = [
        ["list"],
        ["show", f"{d0}T14:30"],
        ["search", "weekly updates"],
        ["asof", f"{d0} 23:59", "weekly updates"],
        ["history", f"{d0}T14:30"],
        ["curate", "--dry-run"],
        ["check"],
    ]
    return [args for args in tour if args[0] in cli.commands]
