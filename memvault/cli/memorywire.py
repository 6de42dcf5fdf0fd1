"""`memvault review-queue`: memorywire operations staged for a reviewer (memvault/memorywire/)."""

from __future__ import annotations

import click

from memvault.cli._common import cli, emit, json_option, open_vault, short


@cli.command("review-queue")
@click.argument("action", type=click.Choice(["approve", "reject"]), required=False)
@click.argument("item_id", metavar="[ID]", required=False)
@click.option("--reviewer", metavar="NAME", help="Who decides (an e-mail address or a name); needed to approve or reject.")
@click.option("--reason", help="Why, kept with the decision.")
@click.option("--all", "everything", is_flag=True, help="List decided operations too, with who decided when.")
@json_option
@click.pass_context
def review_queue(ctx, action: str | None, item_id: str | None, reviewer: str | None, reason: str | None,
                 everything: bool, as_json: bool) -> None:
    """memorywire operations waiting for approval, or approve/reject one.

    An agent's remember, forget, merge or expire with `approval_required` (or one that
    `[memorywire] approval` in memvault.toml names; the MCP remember tool's write shows as `log`)
    is staged, not written. Without ACTION: the staged
    operations, oldest first. `approve ID --reviewer NAME` carries it out (the memory lands in
    the Markdown); `reject ID --reviewer NAME` drops it. Both decisions are kept with the
    reviewer and the time (docs/memorywire.md, "Governance").
    """
    from memvault import memorywire

    if action and not item_id:
        raise click.UsageError(f"{action} needs the ID of a staged operation (memvault review-queue lists them)")
    if action and not reviewer:
        raise click.UsageError(f"{action} needs --reviewer NAME: every decision names who made it")
    if not action and (item_id or reviewer or reason):
        raise click.UsageError("give approve or reject before the ID")
    if action and everything:
        raise click.UsageError("--all goes with the list, not with approve or reject")
    store = memorywire.MemoryStore(open_vault(ctx))
    if action is None:
        emit(memorywire.review_queue(store, everything=everything), as_json, _list_text)
        return
    decide = memorywire.approve if action == "approve" else memorywire.reject
    emit(decide(store, str(item_id), reviewer or "", reason), as_json, _decided_text)


def _list_text(items: list[dict]) -> str:
    if not items:
        return "no operations waiting for approval"
    lines = []
    for item in items:
        state = item["status"] if item["decision"] is None else (
            f"{item['status']} by {item['decision']['reviewer']}")
        lines += [f"{item['id']}  {item['operation']}  by {item['agent_id']}  {state}",
                  f"  {short(_what(item['request']))}"]
    return "\n".join(lines)


def _what(request: dict) -> str:
    """What a staged request would write or forget, as a person reads it (not a Python list)."""
    text = request.get("content") or request.get("text")
    if text:
        return str(text)
    if request.get("duplicates"):
        return f"{', '.join(map(str, request['duplicates']))} into {request.get('canonical')}"
    if request.get("ids"):
        return ", ".join(map(str, request["ids"]))
    scope = request.get("filter") or request.get("policy") or {}
    return ", ".join(f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in scope.items())


def _decided_text(d: dict) -> str:
    verdict = "approved" if d["governance"]["approved"] else "rejected"
    out = f"{d['id']}: {d['operation']} {verdict} by {d['governance']['reviewer']}"
    result = d["result"] or {}
    written = result.get("id") or result.get("canonical") or ", ".join(result.get("forgotten_ids", []))
    return out + (f"; written: {written}" if written else "")
