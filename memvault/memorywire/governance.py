"""Governance (memorywire spec §6): operations that wait for a reviewer, and the demoted entries.

A `remember`, `forget`, `merge` or `expire` whose request says `approval_required`, or that `[memorywire]
approval` names, is staged instead of written: kept in `.memvault/memorywire-queue.json` (written
atomically under its own lock) until `memvault review-queue approve ID --reviewer NAME` runs it
or `reject` drops it. Both decisions stay in the queue file with the spec's governance response
(`approved`, `reviewer`, `reviewed_at`, `reason`). The queue is derived state: deleting
`.memvault/` drops what waits, never a memory already written.

`expire` with `action: demote` keeps a recall multiplier per entry (`demoted.json` beside it),
never by editing the text.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.config.core import Config
from memvault.errors import InputError, NotFoundError, Refused
from memvault.fsio import DERIVED_DIR, atomic_write, locked

MEMORYWIRE_DEFAULTS: dict[str, Any] = {
    "approval": "none",                        # "all", or a list among remember, forget, merge, expire
    "approval_url": "memvault://review-queue/",  # where a staged operation is reviewed: + its id
    "demote": 0.25,                            # expire's demote: the recall score multiplier
}
GOVERNED = ("remember", "forget", "merge", "expire")
QUEUE_FILE = "memorywire-queue.json"
DEMOTED_FILE = "memorywire-demoted.json"


def settings(config: Config) -> dict[str, Any]:
    return config.section("memorywire", MEMORYWIRE_DEFAULTS)


def needs_approval(config: Config, op: str, request: dict[str, Any]) -> bool:
    """Whether `op` waits for a reviewer: the request asks, or the vault's policy says so (pure)."""
    op = "remember" if op == "log" else op  # the MCP remember tool's write is a remember
    if op not in GOVERNED:
        return False
    policy = settings(config)["approval"]
    return bool(request.get("approval_required")) or policy == "all" or (isinstance(policy, list) and op in policy)


def now_ms() -> int:
    return int(time.time() * 1000)


class Queue:
    """The staged operations of one vault."""

    def __init__(self, root: Path, config: Config, base: str | None = None):
        self.path = Path(root) / DERIVED_DIR / QUEUE_FILE
        self.lock = self.path.with_suffix(".lock")
        self.base = base or str(settings(config)["approval_url"])

    def url(self, item_id: str) -> str:
        return self.base + item_id

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as exc:
            raise Refused(f"{self.path} does not hold JSON ({exc}); move it away to start an empty queue") from exc
        return list(data.get("items", []))

    def _write(self, items: list[dict[str, Any]]) -> None:
        atomic_write(self.path, json.dumps({"items": items}, ensure_ascii=False, indent=1) + "\n")

    @contextmanager
    def _held(self) -> Iterator[list[dict[str, Any]]]:
        """The items, under the queue's lock; written back when the block ends without error."""
        with locked(self.lock, what="the memorywire review queue"):
            items = self._read()
            yield items
            self._write(items)

    def stage(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        """Keep `request` for review; the staged item (its `id`, `approval_url`)."""
        item_id = f"q-{now_ms():x}-{secrets.token_hex(3)}"
        item: dict[str, Any] = {
            "id": item_id, "operation": op, "agent_id": request.get("agent_id"),
            "request": request, "staged_at": now_ms(), "status": "pending", "decision": None, "result": None,
        }
        with self._held() as items:
            items.append(item)
        return item | {"approval_url": self.url(item_id)}

    def items(self, *, everything: bool = False) -> list[dict[str, Any]]:
        """Pending items, oldest first (with decided ones too when `everything`)."""
        with locked(self.lock, what="the memorywire review queue"):
            items = self._read()
        return [i | {"approval_url": self.url(i["id"])} for i in items if everything or i["status"] == "pending"]

    @contextmanager
    def deciding(self, item_id: str) -> Iterator[dict[str, Any]]:
        """The pending item `item_id`, held under the lock while it is decided (the caller sets
        `status`, `decision` and `result`); written back only when the block succeeds."""
        with self._held() as items:
            item = next((i for i in items if i["id"] == item_id), None)
            if item is None:
                raise NotFoundError(f"no staged operation {item_id!r} (memvault review-queue lists them)")
            if item["status"] != "pending":
                raise Refused(f"{item_id} was already {item['status']} by {item['decision']['reviewer']}")
            yield item


def decision(approved: bool, reviewer: str, reason: str | None) -> dict[str, Any]:
    """The spec's governance response."""
    if not reviewer.strip():
        raise InputError("--reviewer: name who decides (an e-mail address or a name)")
    return {"approved": approved, "reviewer": reviewer.strip(), "reviewed_at": now_ms(), "reason": reason}


class Demoted:
    """Recall multipliers by entry id (expire's `demote`), kept as derived state."""

    def __init__(self, root: Path):
        self.path = Path(root) / DERIVED_DIR / DEMOTED_FILE

    def read(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):  # derived: losing it only forgets the demotions
            return {}
        return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float)}

    def add(self, ids: list[str], factor: float) -> None:
        with locked(self.path.with_suffix(".lock"), what="the demoted entries"):
            current = self.read()
            current.update(dict.fromkeys(ids, factor))
            atomic_write(self.path, json.dumps(current, sort_keys=True) + "\n")
