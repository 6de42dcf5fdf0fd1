"""`memvault curate`: review and apply promotions from the daily logs into MEMORY.md."""

from __future__ import annotations

import sys

import click

from memvault.cli._common import TIME, cli, emit, json_option, open_vault, parse_window, say, short

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
@click.option("--at", "--until", "at", type=TIME,
              help="Curate as of this time, the end of the entries considered. Default: now.")
@click.option("--since", type=TIME, help="Consider entries after this time instead of the last curation point.")
@click.option("--all", "everything", is_flag=True, help="Reconsider every live entry, ignoring the last curation point.")
@json_option
@click.pass_context
def curate(ctx, dry_run, yes, interactive, explain, with_cmd, at, since, everything, as_json) -> None:
    """Propose promotions from the daily logs into MEMORY.md, and apply the ones you accept.

    On a terminal each proposal is shown with its reason and the budget; answer y (apply),
    n (skip), e (edit in $EDITOR) or q (stop). Text curate does not touch stays byte for byte.
    --json without --yes prints the plan (with its diff) and changes nothing.
    """
    from memvault.curate.promote import plan_curation, plan_dict
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
    start, end = parse_window(vault, since, at, until_name="--at/--until")
    plan = plan_curation(vault, at=end, since=start, everything=everything)
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
        from memvault.curate.review import apply_all

        emit(apply_all(vault, plan), as_json, _outcome_text)
        return
    from memvault.curate.review import Review

    _review(Review(vault, plan))


# ----------------------------------------------------------------------------- output


def _plan_text(plan, d: dict) -> str:
    from memvault.curate.proposals import describe
    from memvault.curate.review import budget_line, nothing, window

    if not plan.proposals and not plan.archives:
        return nothing(plan)["message"]
    out = [f"curate as of {plan.at.isoformat()}: {window(plan)}"]
    for p in plan.proposals + plan.archives:
        out.append(f"  {describe(p)}{'  [rewritten by --with]' if p.origin == 'with' else ''}")
        if p.text:
            out.append(f"      \u201c{short(p.text, 90)}\u201d")
        out.append(f"      why: {short(p.reason, 100)}")
    out.append(budget_line(d["budget"]))
    out += [f"warning: {w}" for w in d["warnings"]]
    out.append("")
    out.append(d["diff"].rstrip("\n") or "(no change)")
    return "\n".join(out)


def _outcome_text(d: dict) -> str:
    return d["message"] if "message" in d else _result_text(d)


def _result_text(d: dict) -> str:
    from memvault.curate.review import budget_line

    c = d["counts"]
    line = (f"MEMORY.md: {c['add']} added, {c['update']} updated, {c['reconfirm']} reconfirmed, "
            f"{c['archive']} archived" + (f" (to {d['archived_to']})" if d["archived_to"] else ""))
    if not d["applied"]:
        line = "MEMORY.md unchanged"
    out = [line, budget_line(d["budget"])]
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


def _review(review) -> None:
    """Ask about each step of the library's review; it re-plans and writes."""
    while (step := review.step) is not None:
        _show(step)
        answer = _ask(allow_edit=step.editable)
        if answer == "e":
            _edit(review, step)
        else:
            {"y": review.accept, "n": review.skip, "q": review.quit}[answer]()
    outcome = review.finish()
    if outcome is None:
        say("stopped; nothing was written")
    elif "message" in outcome:
        say(outcome["message"])
    else:
        say("")
        say(_result_text(outcome))
        if review.stopped:
            say("stopped early: the curation point was not moved, so skipped entries come back next time")


def _show(step) -> None:
    from memvault.curate.proposals import describe
    from memvault.curate.review import budget_line

    p = step.proposal
    say("")
    say(f"({step.number}/{step.total}) {describe(p)}" + ("  [rewritten by --with]" if p.origin == "with" else ""),
        bold=True)
    for line in p.old:
        say(f"  - {line}", fg="red")
    for line in p.lines:
        say(f"  + {line}", fg="green")
    say(f"  why: {p.reason}")
    say(f"  {budget_line(step.budget)}")


def _ask(allow_edit: bool) -> str:
    choices = "y/n/e/q/?" if allow_edit else "y/n/q/?"
    while True:
        answer = click.prompt(f"Apply? [{choices}]", default="y", show_default=False).strip().lower()[:1]
        if answer in ("y", "n", "q") or (answer == "e" and allow_edit):
            return answer
        if answer == "s":
            return "n"
        say(HELP_KEYS if allow_edit else HELP_KEYS.replace("e = edit in $EDITOR, ", ""))


def _edit(review, step) -> None:
    """Edit the bullet in $EDITOR; an edit that cannot be used is said, and the step asked again."""
    from memvault.errors import InputError, Refused

    try:
        text = click.edit(step.draft(), extension=".md", require_save=False)
    except click.ClickException as exc:  # no such editor, or it failed: keep reviewing, lose nothing
        say(f"  not used: {exc.format_message()} (check $EDITOR)")
        return
    if text is None:
        return
    try:
        review.edit(text)
    except (InputError, Refused) as exc:  # not one bullet, or a secret in it
        say(f"  not used: {exc}")
