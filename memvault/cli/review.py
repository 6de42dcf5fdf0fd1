"""`memvault review`: spaced review of entries (memvault/write/review.py)."""

from __future__ import annotations

import click

from memvault.cli._common import cli, emit, json_option, open_vault, short


@cli.command()
@click.argument("event_id", required=False)
@click.option("--ok", is_flag=True, help="Record that recalling EVENT_ID succeeded: the next gap grows.")
@click.option("--failed", is_flag=True,
              help="Record that recalling EVENT_ID failed: the next gap shrinks, it comes back soon.")
@click.option("--start", is_flag=True, help="Put EVENT_ID on the review schedule (adds a Review: line).")
@click.option("--target", metavar="DURATION", help="With --start: how long it should stay useful (30d, 12h). Default 30d.")
@click.option("--ratio", type=click.FloatRange(0, 1, min_open=True), metavar="R",
              help="With --start: the first review gap as a fraction of the target. Default 0.2.")
@click.option("--all", "everything", is_flag=True, help="List every scheduled entry, due or not.")
@json_option
@click.pass_context
def review(ctx, event_id: str | None, ok: bool, failed: bool, start: bool, target: str | None, ratio: float | None,
           everything: bool, as_json: bool) -> None:
    """Entries due for spaced review, or record how reviewing one went.

    Without EVENT_ID: the entries whose next review is due (with --all, every scheduled one),
    with their interval history. With EVENT_ID: its schedule; with --ok or --failed, record
    the outcome (a `Reviewed:` line in its log); with --start, schedule it. Only entries with a
    `Review:` line take part (docs/format.md, "Spaced review").
    """
    from memvault.write import review as lib

    if ok and failed:  # one flag each: click would keep the last of two sharing a destination
        raise click.UsageError("give --ok or --failed, not both")
    outcome = "ok" if ok else "failed" if failed else None
    if (outcome or start) and event_id is None:
        raise click.UsageError("--ok, --failed and --start need an EVENT_ID")
    if outcome and start:
        raise click.UsageError("give --start or --ok/--failed, not both")
    if (target is not None or ratio is not None) and not start:
        raise click.UsageError("--target and --ratio go with --start")
    if everything and event_id is not None:
        raise click.UsageError("--all lists every scheduled entry; leave out EVENT_ID")
    vault = open_vault(ctx)
    if event_id is None:
        emit(lib.due_reviews(vault, everything=everything), as_json, _list_text)
    elif start:
        emit(lib.start_review(vault, event_id, target or "30d", 0.2 if ratio is None else ratio), as_json, _done_text)
    elif outcome:
        emit(lib.record_review(vault, event_id, outcome), as_json, _done_text)  # type: ignore[arg-type]
    else:
        emit(lib.review_of(vault, event_id), as_json, _one_text)


def _head(d: dict) -> str:
    last = {True: "last ok", False: "last failed", None: "never reviewed"}[d["last_success"]]
    when = "due since" if d["due"] else "next review"
    return (f"{d['id']}  {d['type']}  {when} {d['next_review']}  "
            f"(interval {d['interval']}, target {d['target']}, {last})")


def _list_text(items: list[dict]) -> str:
    if not items:
        return "nothing due for review"
    lines = []
    for d in items:
        lines += [_head(d), f"  {short(d['title'] or d['content'])}"]
        if d["history"]:
            lines.append("  history: " + ", ".join(f"{h['at'][:16]} {h['outcome']} → {h['interval']}" for h in d["history"]))
    return "\n".join(lines)


def _one_text(d: dict) -> str:
    lines = [_head(d), f"  {short(d['title'] or d['content'])}", f"  {d['file']}:{d['line']}"]
    lines += [f"  {h['at']}  {h['outcome']:<6}  next in {h['interval']}" for h in d["history"]]
    return "\n".join(lines)


def _done_text(d: dict) -> str:
    return f"{d['file']}:{d['line_written']}: {d['written']}\n{_head(d)}"
