"""Time-travel commands: asof, changes, history, diff (library: memvault/history/)."""

from __future__ import annotations

from datetime import datetime, tzinfo

import click

from memvault.cli._common import (
    TIME_OR_REVISION,
    cli,
    emit,
    folded_sources,
    folded_tally,
    json_option,
    limit_option,
    mode_option,
    open_vault,
    row_figures,
    say,
    short,
    tally,
)

T_FORMS = (
    "ISO date or time (vault zone unless given), a plain date, 'yesterday', '3 days ago', "
    "'3 days ago 14:30', or a git revision (HEAD~3, a commit, a tag)"
)
T_HELP = f"T: {T_FORMS}. A plain date means the end of that day."


@cli.command(help="The entries live as of T; with QUERY, those matching it, ranked as of T.\n\n"
             "A log entry that a curated bullet among them cites is shown once, as the bullet's sources; "
             "--all and --json list both.\n\n" + T_HELP)
@click.argument("when", metavar="T", type=TIME_OR_REVISION)
@click.argument("query", nargs=-1)
@click.option("--recorded", is_flag=True, help="What the vault's files held at T (git), not what its entries say.")
@limit_option("At most this many entries (default with QUERY: 10).")
@mode_option(" With QUERY, event time only: --recorded ranks by words.")
@click.option("--all", "include_all", is_flag=True,
              help="List a log entry a curated bullet cites beside the bullet, not under it (--json does).")
@json_option
@click.pass_context
def asof(ctx, when: str, query: tuple[str, ...], recorded: bool, limit: int | None, mode: str | None,
         include_all: bool, as_json: bool) -> None:
    from memvault.entries.folding import fold_cited

    items = open_vault(ctx).as_of(when, " ".join(query) or None, recorded=recorded, limit=limit, mode=mode)
    emit(items if as_json or include_all else fold_cited(items), as_json, _asof_text)


def _asof_text(items: list[dict]) -> str:
    rows = [f"{d['id']:<20} {d['type']:<11} {row_figures(d)}{short(d['content'], 58)}"
            + ("" if d.get("matched", True) else "  (found through nearby entries)") + folded_sources(d)
            for d in items]
    rows.append(tally(items) + folded_tally(items))
    return "\n".join(rows)


@cli.command()
@click.option("--since", "since", required=True, metavar="T", type=TIME_OR_REVISION,
              help=f"Changes after this time: {T_FORMS}. A plain date means its start.")
@click.option("--until", "until", metavar="T2", type=TIME_OR_REVISION,
              help="Up to this time (same forms; a plain date means its end). Default: now and the working tree.")
@limit_option("At most this many entries of each kind (new, superseded, edited, ...); the rest are counted.")
@click.option("--all", "include_all", is_flag=True,
              help="List a new log entry a new curated bullet cites beside the bullet (--json does).")
@json_option
@click.pass_context
def changes(ctx, since: str, until: str | None, limit: int | None, include_all: bool, as_json: bool) -> None:
    """What changed since T: new entries, newly superseded ones, and (from git) edits, deletions
    and revived entries (live again: what superseded them was deleted or no longer supersedes them).

    A new log entry that a new curated bullet cites is shown once, as the bullet's sources.
    """
    from memvault.entries.folding import fold_cited

    data = open_vault(ctx).changes(since, until, limit=limit)
    emit(data if as_json or include_all else data | {"new": fold_cited(data["new"])}, as_json, _changes_text)
    for warning in data.get("warnings", []) if not as_json else []:
        say(f"note: {warning}", err=True)


def _line(d: dict) -> str:
    when = (d.get("timestamp") or "undated")[:16]
    return f"{when}  {d['type']:<11} {short(d['content'], 58)}  ({d['id']})"


def _changes_text(data: dict) -> str:
    until = data["until"]["given"] if data.get("until") else "now"
    out = [f"Changes since {data['since']['given']} (until {until})", ""]
    sections = [
        ("New", "new", lambda d: "+ " + _line(d) + folded_sources(d)),
        ("Superseded", "superseded", lambda d: "~ " + _line(d) + f" -> {d['superseded_by']}"),
        ("Edited", "edited", lambda d: "* " + _line(d) + "\n" + _was(d["old"], d["new"])),
        ("Deleted", "deleted", lambda d: "- " + _line(d)),
        ("Revived (live again: what superseded them went away)", "revived", lambda d: "^ " + _line(d) + _revived(d)),
        ("Backfilled (written later into earlier days)", "backfilled", lambda d: "< " + _line(d)),
    ]
    for title, key, fmt in sections:
        items = data.get(key) or []
        if not items:
            continue
        more = (data.get("more") or {}).get(key, 0)  # what -n left out
        out.append(f"{title} ({len(items)}{f' of {len(items) + more}' if more else ''})")
        out += ["  " + fmt(d) for d in items]
        out.append("")
    if len(out) == 2:
        out.append("nothing changed")
    return "\n".join(out).rstrip("\n")


def _revived(d: dict) -> str:
    gone = "deleted" if d["superseder"] == "deleted" else "no longer superseding it"
    return f" <- was superseded by {d['was_superseded_by']} ({gone})"


def _was(old: str, new: str, width: int = 70) -> str:
    """Both versions on one line each, shifted so that where they first differ is visible."""
    a, b = " ".join(old.split()), " ".join(new.split())
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = same - width // 3 if same > width - 20 else 0
    start = a.rfind(" ", 0, start) + 1 if start > 0 else 0  # at a word boundary

    def cut(text: str) -> str:
        return short(("\u2026" + text[start:]) if start else text, width)

    return f"      was: {cut(a)}\n      now: {cut(b)}"


@cli.command("history")
@click.argument("event_id", metavar="ID")
@json_option
@click.pass_context
def history_cmd(ctx, event_id: str, as_json: bool) -> None:
    """The supersession chain ID belongs to (what superseded what), and the commits that changed it.

    ID is what show takes: an id, the start of one, or a place as search and check print it
    (memory/2026-02-01.md#L12-L14, memory/2026-02-01.md:12); an id no entry has now is looked
    for in git (a deleted entry)."""
    vault = open_vault(ctx)
    data = vault.history(event_id)
    emit(data, as_json, lambda d: _history_text(d, vault.config.tz))


def _local(iso: str, tz: tzinfo) -> str:
    """A commit date (JSON keeps it as git gives it) in the vault's zone, like entry times."""
    return datetime.fromisoformat(iso).astimezone(tz).isoformat()[:16]


def _history_text(data: dict, tz: tzinfo) -> str:
    out = [f"{data['id']}  [{data['status']}]" + (f" superseded by {data['superseded_by']}" if data["superseded_by"] else "")]
    found = data.get("found_by") or {}
    if found.get("why"):
        out.append(f"found by {found['how']}: {found['why']}")
    out.append("")
    out.append("Chain (oldest first):")
    for d in data["chain"]:
        mark = "*" if d["id"] == data["id"] else " "
        sup = f" -> superseded by {d['superseded_by']}" if d["superseded_by"] else ""
        out.append(f" {mark} {_line(d)}{sup}")
    commits = data["commits"]
    if commits:
        out += ["", "Commits that changed it:"]
        for c in commits:
            where = f"{_local(c['date'], tz)} {c['commit'][:10]}" if c["commit"] else "working tree    (uncommitted)"
            out.append(f"  {where}  {c['change']:<8} {c['file']}")
            out += _revision_detail(c)
    for w in data.get("warnings", []):
        out.append(f"note: {w}")
    return "\n".join(out)


def _place(file: str | None, line: int | None) -> str:
    return f"{file}:{line}" if line else str(file)


def _revision_detail(c: dict) -> list[str]:
    """Under a commit: where the entry moved from (the same text twice said nothing), and the
    text before and after when it changed."""
    out = []
    if c.get("old_file") and c["old_file"] != c["file"]:  # lines shift with every edit above: not a move
        out.append(f"      moved from {_place(c['old_file'], c.get('old_line'))} to {_place(c['file'], c.get('line'))}")
    if c["old"] is not None and c["new"] is not None and c["old"] != c["new"]:
        out.append(_was(c["old"], c["new"]))
    return out


@cli.command("diff", help="Entries that appeared, changed or went away between T1 and T2 (recorded time), "
             f"per MEMORY.md section and per daily log.\n\nT1, T2: {T_FORMS}. A plain date means the end of that day.")
@click.argument("first", metavar="T1", type=TIME_OR_REVISION)
@click.argument("second", metavar="T2", type=TIME_OR_REVISION)
@json_option
@click.pass_context
def diff_cmd(ctx, first: str, second: str, as_json: bool) -> None:
    data = open_vault(ctx).diff(first, second)
    emit(data, as_json, _diff_text)


def _diff_text(data: dict) -> str:
    def where(p: dict) -> str:
        return f"{p['given']} ({p['commit'][:10] if p['commit'] else 'before the first commit'})"

    out = [f"From {where(data['from'])} to {where(data['to'])}"]
    for g in data["groups"]:
        out.append("")
        out.append(f"{g['file']} \u203a {g['section'] or '(no section)'}" if g["section"] is not None else g["file"])
        out += ["  + " + _line(d) for d in g["appeared"]]
        out += ["  ~ " + _line(d) + "\n" + _was(d["old"], d["new"]) for d in g["changed"]]
        out += ["  - " + _line(d) + f"  [{d['reason']}" + (f" by {d['superseded_by']}]" if d["superseded_by"] else "]")
                for d in g["gone"]]
    c = data["counts"]
    out += ["", f"{c['appeared']} appeared, {c['changed']} changed, {c['gone']} went away"]
    return "\n".join(out)
