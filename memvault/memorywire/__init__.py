"""memorywire (the vendor-neutral agent memory API, spec v0.1) over a memvault vault.

    from memvault import Vault
    from memvault.memorywire import MemoryStore, call

    store = MemoryStore(Vault.open("~/memory"))
    call(store, "remember", {"agent_id": "bot", "type": "semantic", "content": "Mia mag Erdbeeren"})
    call(store, "recall", {"agent_id": "bot", "query": "Erdbeeren"})

`call(store, op, request)` is the one entry point the HTTP server (POST /v0/{op}) uses: the
request and the response are checked against the JSON Schemas shipped in `schemas/`
(`schema(name)`, `schema_names()`; GET /v0/schemas/{name}). A bad request is an `InputError`
naming the JSON path. docs/memorywire.md describes the operations and how they land in Markdown.
"""

from __future__ import annotations

from typing import Any

from memvault.errors import InputError, NotFoundError
from memvault.memorywire.governance import Queue, decision
from memvault.memorywire.schemas import check_response, json_type, schema, schema_names
from memvault.memorywire.store import CAPABILITIES, MemoryStore

OPERATIONS = ("remember", "recall", "forget", "merge", "expire")

__all__ = ["CAPABILITIES", "OPERATIONS", "MemoryStore", "approve", "call", "reject", "review_queue", "schema",
           "schema_names"]


def call(store: MemoryStore, op: str, request: Any) -> dict[str, Any]:
    """Run operation `op` (`remember`, `recall`, `forget`, `merge`, `expire`, or `health`) with
    `request` (the spec's JSON object); the spec's response. An unknown `op` is NotFoundError."""
    if op == "health":
        return store.health()
    if op not in OPERATIONS:
        raise NotFoundError(f"no memorywire operation {op!r}; known: {', '.join(OPERATIONS)}, health")
    if not isinstance(request, dict):
        raise InputError(f"{op} request $: must be a JSON object (got {json_type(request)})")
    return store.run(op, request)


def review_queue(store: MemoryStore, *, everything: bool = False) -> list[dict[str, Any]]:
    """The staged operations waiting for a reviewer (all, decided ones too, when `everything`)."""
    return store.queue.items(everything=everything)


def approve(store: MemoryStore, item_id: str, reviewer: str, reason: str | None = None) -> dict[str, Any]:
    """Carry out a staged operation and record who approved it when: the spec's governance
    response (`governance`) and the operation's own response (`result`)."""
    return _decide(store, store.queue, item_id, True, reviewer, reason)


def reject(store: MemoryStore, item_id: str, reviewer: str, reason: str | None = None) -> dict[str, Any]:
    """Drop a staged operation, recording who rejected it when."""
    return _decide(store, store.queue, item_id, False, reviewer, reason)


def _decide(store: MemoryStore, queue: Queue, item_id: str, approved: bool, reviewer: str,
            reason: str | None) -> dict[str, Any]:
    said = decision(approved, reviewer, reason)
    check_response("governance", said)
    with queue.deciding(item_id) as item:
        result = store.run(item["operation"], item["request"], approved=True) if approved else None
        item.update(status="approved" if approved else "rejected", decision=said, result=result)
        decided = dict(item)
    return {"id": item_id, "operation": decided["operation"], "governance": said, "result": result}
