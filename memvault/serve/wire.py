"""The server's one memorywire `MemoryStore` (the /v0 routes and the MCP `forget` tool use it).

The store is made on the first call that needs it, from the address the server is bound to
(`scope["server"]`, never the client's `Host` header): its `approval_url` is
`http://HOST:PORT/v0/review-queue/<id>`, which shows the staged item; approving or rejecting
it is a person's act, through `memvault review-queue approve|reject` (an agent must not be
able to approve its own staged operation over the same API it staged it with).
After a write the index is brought up to date (stat of the files), so the next recall or
`search` sees it without waiting for the watcher's debounce.
"""

from __future__ import annotations

import threading
from typing import Any

from memvault.errors import NotFoundError
from memvault.memorywire import MemoryStore, call, review_queue
from memvault.serve.service import Service
from memvault.vault import Vault

REVIEW_PATH = "/v0/review-queue/"
WRITES = ("remember", "forget", "merge", "expire")


def review_command(item_id: str) -> str:
    """How a person decides a staged operation (never over the API that staged it)."""
    return f"memvault review-queue approve {item_id} --reviewer NAME (or reject)"


class Wire:
    """memorywire over a served vault: one store, made once, shared by every request thread
    (a `MemoryStore` keeps no state between calls: each operation opens the vault afresh)."""

    def __init__(self, service: Service):
        self.service = service
        self._stores: dict[str | None, MemoryStore] = {}
        self._lock = threading.Lock()

    def store(self, base_url: str | None = None) -> MemoryStore:
        """The store whose `approval_url` points at `base_url` (None, under stdio: `[memorywire]
        approval_url`); one per address, which for a server is one."""
        with self._lock:
            if base_url not in self._stores:
                url = None if base_url is None else base_url.rstrip("/") + REVIEW_PATH
                # the server's watcher keeps the index current: a recall need not stat every file
                self._stores[base_url] = MemoryStore(Vault.open(self.service.root), approval_url=url,
                                                     refresh=self.service.refresh)
            return self._stores[base_url]

    def call(self, op: str, request: Any, base_url: str | None = None) -> dict[str, Any]:
        """`memorywire.call`, then the index brought up to date after a write that wrote."""
        answer = call(self.store(base_url), op, request)
        if op in WRITES and not answer.get("pending_approval"):
            where = answer.get("location")  # remember says which file it appended to
            self._reindex([where.split("#")[0]] if isinstance(where, str) else None)
        return answer

    def remember(self, request: dict[str, Any], base_url: str | None = None) -> dict[str, Any]:
        """The MCP `remember` tool: `MemoryStore.log` (staged under `[memorywire] approval`, a
        stable `Id:` when written), answered as the tool answers: id, cite, time, supersedes; or,
        staged, the item's id with its `approval_url` and how a person reviews it."""
        answer = self.store(base_url).log(request)
        if answer["pending_approval"]:
            return {"id": answer["id"], "pending_approval": True, "approval_url": answer["approval_url"],
                    "review": review_command(answer["id"])}
        self._reindex([answer["location"].split("#")[0]])
        return {"id": answer["id"], "cite": answer["location"], "timestamp": answer["timestamp"],
                "supersedes": answer["supersedes"], "pending_approval": False}

    def health(self, base_url: str | None = None) -> dict[str, Any]:
        return self.service.health() | {k: v for k, v in self.store(base_url).health().items() if k != "status"}

    def staged(self, item_id: str, base_url: str | None = None) -> dict[str, Any]:
        """One staged operation (pending or decided), for its `approval_url`."""
        for item in review_queue(self.store(base_url), everything=True):
            if item["id"] == item_id:
                return item | ({"review": review_command(item_id)} if item["status"] == "pending" else {})
        raise NotFoundError(f"no staged operation {item_id!r} (memvault review-queue lists them)")

    def _reindex(self, files: list[str] | None) -> None:
        from memvault.search.index import open_index

        with self.service.vault() as vault, open_index(vault, self.service.backend) as index:
            index.update(files)
