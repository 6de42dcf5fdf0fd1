"""`memvault curate`: review and apply promotions from the daily logs into MEMORY.md."""

from __future__ import annotations

import sys

import click

from memvault.cli._common import cli, emit, json_option, open_vault, parse_when, say, short

HELP_KEYS = "y = apply, n = skip, e = edit in $EDITOR, q = stop here (keep what was accepted), ? = help"


@cli.command()
@click.option("--dry-run", is_flag=True, help="Print the unified diff of MEMORY.md; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Apply every proposal without asking.")
@click.option("--interactive", "-i", is_flag=True,
              help="Review one proposal at a time even when stdin is not a terminal.")
@click.option("--explain", is_flag=False, flag_value="", default=None, metavar="[ID]",
              help="Say why each entry since the last curation (or entry ID) was or was not chosen.")
@click.option("--with", "with_cmd", metavar="CMD",
              help="Pipe the candidates (JSON) to CMD, which answers with rewritten or merged bullets (JSON).")
@click.option("--at", "at", help="Curate as of this time. Default: now.")
@click.option("--since", help="Consider entries after this time instead of the last curation point.")
@click.option("--all", "everything", is_flag=True, help="Reconsider every live entry, ignoring the last curation point.")
@json_option
@click.pass_context
def curate(ctx, dry_run, yes, interactive, explain, with_cmd, at, since, everything, as_json) -> None:
    """Propose promotions from the daily logs into MEMORY.md, and apply the ones you accept.

    On a terminal each proposal is shown with its reason and the budget; answer y (apply),
    n (skip), e (edit in $EDITOR) or q (stop). Text curate does not touch stays byte for byte.
    --json without --yes prints the plan (with its diff) and changes nothing.
    """
    from memvault.curate.promote import apply, plan_curation, plan_dict
    from memvault.errors import InputError

    exclusive = [name for name, on in (("--dry-run", dry_run), ("--yes", yes), ("--explain", explain is not None),
                                       ("--interactive", interactive)) if on]
    if len(exclusive) > 1:
        raise InputError(f"{' and '.join(exclusive)} cannot be used together")
    if since and everything:
        raise InputError("--since and --all cannot be used together")
    reviewing = not (dry_run or yes or as_json or explain is not None)
    if reviewing and not interactive and not sys.stdin.isatty():
        raise InputError("curate reviews proposals on a terminal; use --dry-run to see them, --yes to apply "
                         "them all, --json for programs, or --interactive to answer from stdin")
    vault = open_vault(ctx)
    # "as of 2026-02-22" is the end of that day, like every other "as of" in memvault.
    plan = plan_curation(vault, at=parse_when(vault, at, day_end=True), since=parse_when(vault, since),
                         everything=everything)
    if with_cmd and explain is None:  # explaining the selection needs no rewording
        from memvault.curate.with_command import rewrite_with

        plan = rewrite_with(plan, vault, with_cmd)
    if explain is not None:
        from memvault.curate.promote import explain as explain_plan

        emit(explain_plan(plan, vault, explain or None), as_json, _explain_text)
        return
    if dry_run or (as_json and not yes):
        emit(plan_dict(plan), as_json, lambda d: _plan_text(plan, d))
        return
    if yes:
        if not plan.proposals and not plan.archives:
            emit(_nothing(plan), as_json, lambda d: d["message"])
            return
        result = apply(vault, plan)
        emit(_result_dict(plan, result), as_json, _result_text)
        return
    _review(vault, plan)


# ----------------------------------------------------------------------------- output


def _budget_line(b: dict) -> str:
    parts = []
    if b["chars"]:
        parts.append(f"{b['before']['chars']:,} \u2192 {b['after']['chars']:,} / {b['chars']:,} chars")
    if b["lines"]:
        parts.append(f"{b['before']['lines']:,} \u2192 {b['after']['lines']:,} / {b['lines']:,} lines")
    if not parts:
        parts.append(f"{b['after']['chars']:,} chars, no budget set")
    return "budget: " + "; ".join(parts) + ("  OVER BUDGET" if b["over"] else "")


def _window(plan) -> str:
    if plan.since is None:
        return "every live entry" + (" (--all)" if plan.since_from == "all" else " (no earlier curation)")
    where = "last curation, from MEMORY.md" if plan.since_from == "marker" else "--since"
    return f"entries since {plan.since.isoformat()} ({where})"


def _nothing(plan) -> dict:
    from memvault.curate.promote import budget

    b = budget(plan)
    return {"applied": False, "message": f"nothing to curate: {_window(plan)}; {_budget_line(b)}", "budget": b}


def _plan_text(plan, d: dict) -> str:
    from memvault.curate.promote import describe

    if not plan.proposals and not plan.archives:
        return _nothing(plan)["message"]
    out = [f"curate as of {plan.at.isoformat()}: {_window(plan)}"]
    for p in plan.proposals + plan.archives:
        out.append(f"  {describe(p)}{'  [rewritten by --with]' if p.origin == 'with' else ''}")
        if p.text:
            out.append(f"      \u201c{short(p.text, 90)}\u201d")
        out.append(f"      why: {short(p.reason, 100)}")
    out.append(_budget_line(d["budget"]))
    out += [f"warning: {w}" for w in d["warnings"]]
    out.append("")
    out.append(d["diff"].rstrip("\n") or "(no change)")
    return "\n".join(out)


def _result_dict(plan, result, accepted=None, archived=None) -> dict:
    from memvault.curate.promote import budget_warnings

    chosen = [p for p in plan.proposals if accepted is None or p.key in accepted]
    return {
        "applied": result.written, "memory": str(plan.path), "counts": result.counts, "budget": result.budget,
        "proposals": [p.to_dict() for p in chosen],
        "archives": [a.to_dict() for a in (plan.archives if archived is None else archived)],
        "archived_to": result.archived_to, "curation_point_recorded": result.marker,
        "warnings": list(plan.warnings) + budget_warnings(plan, result.budget),
    }


def _result_text(d: dict) -> str:
    c = d["counts"]
    line = (f"MEMORY.md: {c['add']} added, {c['update']} updated, {c['reconfirm']} reconfirmed, "
            f"{c['archive']} archived" + (f" (to {d['archived_to']})" if d["archived_to"] else ""))
    if not d["applied"]:
        line = "MEMORY.md unchanged"
    out = [line, _budget_line(d["budget"])]
    out += [f"warning: {w}" for w in d["warnings"]]
    return "\n".join(out)


def _explain_text(items: list[dict]) -> str:
    if not items:
        return "no entries since the last curation"
    out = []
    for d in items:
        mark = "chosen " if d["chosen"] else "left   "
        out.append(f"{d['id']:<20} {mark} {d['reason']}")
    return "\n".join(out)


# ----------------------------------------------------------------------------- review


def _show(plan, p, n: int, total: int, budget_text: str) -> None:
    from memvault.curate.promote import describe

    say("")
    say(f"({n}/{total}) {describe(p)}" + ("  [rewritten by --with]" if p.origin == "with" else ""), bold=True)
    for line in p.old:
        say(f"  - {line}", fg="red")
    for line in p.lines:
        say(f"  + {line}", fg="green")
    say(f"  why: {p.reason}")
    say(f"  {budget_text}")


def _ask(allow_edit: bool) -> str:
    choices = "y/n/e/q/?" if allow_edit else "y/n/q/?"
    while True:
        answer = click.prompt(f"Apply? [{choices}]", default="y", show_default=False).strip().lower()[:1]
        if answer in ("y", "n", "q") or (answer == "e" and allow_edit):
            return answer
        if answer == "s":
            return "n"
        say(HELP_KEYS if allow_edit else HELP_KEYS.replace("e = edit in $EDITOR, ", ""))


def _edit(p, current: tuple[str, ...]) -> tuple[str, ...] | None:
    """The edited bullet, () to skip it (emptied), or None when the edit cannot be used."""
    from memvault.curate.document import check_edit
    from memvault.errors import InputError

    try:
        text = click.edit("\n".join(current) + "\n", extension=".md", require_save=False)
    except click.ClickException as exc:  # no such editor, or it failed: keep reviewing, lose nothing
        say(f"  not used: {exc.format_message()} (check $EDITOR)")
        return None
    if text is None:
        return None
    try:
        return check_edit(text, p.block_id)
    except InputError as exc:
        say(f"  not used: {exc}")
        return None


def _review(vault, plan) -> None:
    from memvault.curate.promote import apply, budget

    if not plan.proposals and not plan.archives:
        say(_nothing(plan)["message"])
        return
    accepted: dict[str, tuple[str, ...]] = {}
    stopped = False
    total = len(plan.proposals)
    for n, p in enumerate(plan.proposals, 1):
        current = p.lines
        while True:
            trial = dict(accepted, **{p.key: current})
            _show(plan, _with_lines(p, current), n, total, _budget_line(budget(plan, trial, [])))
            answer = _ask(allow_edit=True)
            if answer == "e":
                edited = _edit(p, current)
                if edited == ():
                    answer = "n"
                elif edited is not None:
                    current = edited
                    continue
                else:
                    continue
            break
        if answer == "q":
            stopped = True
            break
        if answer == "y":
            accepted[p.key] = current
    archived: list = []
    if not stopped:
        archived, stopped = _review_archives(plan, accepted)
    if not accepted and not archived and stopped:
        say("stopped; nothing was written")
        return
    result = apply(vault, plan, accepted, archived, complete=not stopped)
    d = _result_dict(plan, result, accepted, archived)
    say("")
    say(_result_text(d))
    if stopped:
        say("stopped early: the curation point was not moved, so skipped entries come back next time")


def _review_archives(plan, accepted: dict):
    """Ask about each archive the budget needs; a kept bullet makes room for the next one.

    Returns the accepted archives and whether the person stopped.
    """
    from dataclasses import replace

    from memvault.curate.promote import Proposal, archives_for, budget

    archived: list[Proposal] = []
    kept: set[str] = set()  # bullets the person keeps
    n = 0
    while True:
        done = {a.bullet for a in archived} | kept
        pending = [a for a in archives_for(plan, accepted, exclude=kept) if a.bullet not in done]
        if not pending:
            return archived, False
        n += 1
        a = replace(pending[0], key=f"a{n}")
        _show(plan, a, n, n + len(pending) - 1, _budget_line(budget(plan, accepted, archived + [a])))
        answer = _ask(allow_edit=False)
        if answer == "q":
            return archived, True
        if answer == "y":
            archived.append(a)
        else:
            assert a.bullet is not None  # an archive proposal always names its bullet
            kept.add(a.bullet)


def _with_lines(p, lines: tuple[str, ...]):
    from dataclasses import replace

    return replace(p, lines=lines)
