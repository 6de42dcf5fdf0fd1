"""`MemoryStore`: the memorywire operations over a vault, everything landing in its Markdown.

Each operation takes the spec's request (a dict), checks it against its shipped schema, and
answers the spec's response (a dict), checked too. A write goes through memvault's own write
path (`write/log.py`: the lock, the atomic write, the secret refusal of `memvault log`); a
governed one is staged instead (governance.py). Every operation opens the vault afresh, so it
sees what the previous one wrote, whoever wrote it. docs/memorywire.md describes the mapping.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from memvault.entries.model import Event
from memvault.errors import InputError, NotFoundError, Refused
from memvault.memorywire import mapping as mw
from memvault.memorywire import schemas
from memvault.memorywire.governance import Demoted, Queue, needs_approval, now_ms, settings
from memvault.parsed import ParsedVault
from memvault.vault import Vault
from memvault.write.forget import forget_hard, forget_soft, forgettable, tombstone
from memvault.write.guard import check_entry_text, check_written
from memvault.write.log import log_entry

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CAPABILITIES = frozenset({"semantic", "episodic", "procedural", "emotional", "fts", "recall_tracking",
                          "governance", "soft_delete", "hard_delete"})


def new_id() -> str:
    """A ULID (48 bits of epoch ms, 80 random bits, Crockford base 32): new by construction, so
    `remember` need not parse the vault to know no entry has it, and sorted by time."""
    n = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in reversed(range(26)))


class MemoryStore:
    """The memorywire `MemoryStore` over one vault (synchronous: a server runs it in a thread)."""

    def __init__(self, vault: ParsedVault, *, approval_url: str | None = None, refresh: bool = True):
        """`approval_url`: where a staged operation is reviewed (its id is appended); default
        `[memorywire] approval_url` (a server passes its own address). `refresh`: whether a
        recall first brings the index up to date with the files (a stat of each); a server
        whose watcher keeps it current says False."""
        self.root = vault.root
        self.config = vault.config
        self.queue = Queue(self.root, self.config, approval_url)
        self.refresh = refresh

    def _fresh(self) -> Vault:
        return Vault(self.root, self.config)

    # -- the operations ----------------------------------------------------------------------

    def remember(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.run("remember", request)

    def recall(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.run("recall", request)

    def forget(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.run("forget", request)

    def merge(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.run("merge", request)

    def expire(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.run("expire", request)

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "store": mw.STORE, "vault": str(self.root), "capabilities": sorted(CAPABILITIES),
                "pending_approvals": len(self.queue.items())}

    @property
    def capabilities(self) -> set[str]:
        return set(CAPABILITIES)

    def run(self, op: str, request: dict[str, Any], *, approved: bool = False) -> dict[str, Any]:
        """Check `request`, stage it when governance says so (unless `approved`), else carry it
        out; the response, checked against its schema."""
        schemas.check_request(op, request)
        if not approved and needs_approval(self.config, op, request):
            response = self._stage(op, request)
        else:
            response = getattr(self, f"_{op}")(request)
        schemas.check_response(op, response)
        return response

    def _stage(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        PRECHECK[op](self, request)  # what would be refused anyway is refused now, not at review
        item = self.queue.stage(op, request)
        pending = {"pending_approval": True, "approval_url": item["approval_url"]}
        if op == "remember":
            return {"id": item["id"], "stored_at": item["staged_at"], "stores": [], **pending}
        if op == "forget":
            return {"forgotten_ids": [], "hard_delete": bool(request.get("hard_delete")), "stores": [], **pending}
        return {"canonical": request["canonical"], "merged_count": 0,
                "strategy_used": request.get("strategy", "keep_canonical"), "stores": [], **pending}

    # -- remember ----------------------------------------------------------------------------

    def _draft(self, request: dict[str, Any]) -> dict[str, Any]:
        """`log_entry`'s arguments for a remember request (pure but for the vault's zone)."""
        kind, content = request["type"], request["content"]
        body = _procedure(content) if kind == "procedural" else content
        meta = dict(request.get("metadata") or {})
        tags = _strings(meta.pop("tags", []), "$.metadata.tags") + ([mw.EMOTIONAL_TAG] if kind == "emotional" else [])
        scope = meta.pop("scope", None)
        if scope is not None and not isinstance(scope, str):
            raise InputError("remember request $.metadata.scope: a string")
        importance = meta.pop("importance", None)
        if importance is not None and (isinstance(importance, bool) or not isinstance(importance, int | float | str)):
            raise InputError("remember request $.metadata.importance: a number 0-1 or high, medium, low")
        expires = request.get("expires_at")
        if expires is not None and expires <= now_ms():
            raise InputError(f"remember request $.expires_at: {expires} is not in the future")
        _scan(meta, "$.metadata")  # JSON escapes quotes, which hides a `key = "..."` secret from the line's scan
        lines = {"agent-id": request["agent_id"], "user-id": request.get("user_id", ""),
                 "metadata": json.dumps(meta, ensure_ascii=False, separators=(", ", ": ")) if meta else ""}
        return {"text": body, "type": mw.ENTRY_TYPE[kind], "confidence": request.get("confidence"),
                "importance": importance, "tags": tuple(tags), "source": request.get("source"), "scope": scope,
                "expires": None if expires is None else mw.from_epoch_ms(expires, self.config.tz), "meta": lines}

    def _remember(self, request: dict[str, Any]) -> dict[str, Any]:
        args = self._draft(request)
        text = args.pop("text")
        event = log_entry(self._fresh(), text, **args, entry_id=new_id(), fresh_id=True, check_refs=False)
        return {"id": event.id, "stored_at": mw.epoch_ms(event.timestamp), "stores": [mw.STORE],
                "pending_approval": False, "approval_url": None, "location": event.location}

    def _precheck_remember(self, request: dict[str, Any]) -> None:
        args = self._draft(request)
        check_written(check_entry_text(args["text"]), where="the new entry")
        for value in args["meta"].values():
            check_written(value, where="the new entry's metadata")

    # -- recall ------------------------------------------------------------------------------

    def _recall(self, request: dict[str, Any]) -> dict[str, Any]:
        from memvault.search import access
        from memvault.search.index import search_vault

        began = time.perf_counter()
        vault = self._fresh()
        flt = mw.check_filter(request.get("filter") or {}, "recall request")
        types = request.get("types") or []
        k, fusion = request.get("k", 5), request.get("fusion", "rrf")
        days = request.get("fresher_than_days")
        since = None if days is None else vault.now() - timedelta(days=days)
        n = max(4 * k, 20) if flt or types else k  # without filters every hit is kept
        while True:  # filters the index does not know take some hits: ask for more
            hits = search_vault(vault, request["query"], limit=n, since=since, record_access=False,
                                refresh=self.refresh, retention=False)  # not in the response; it would cost ~1-2 s after each write
            kept = [h for h in hits if h.event is not None and mw.matches(h.event, flt)
                    and (not types or mw.memory_type(h.event) in types)]
            if len(kept) >= k or len(hits) < n:
                break
            n *= 4
        demoted = Demoted(self.root).read()
        scores = mw.fused([h.score for h in kept], fusion)
        ranked = sorted(((s * demoted.get(h.id, 1.0), h) for s, h in zip(scores, kept, strict=True)),
                        key=lambda pair: -pair[0])[:k]
        results: list[dict[str, Any]] = [{
            "id": h.id, "type": mw.memory_type(h.event), "content": mw.content_of(h.event), "score": round(s, 6),
            "metadata": mw.metadata_of(h.event, h.status, h.confidence), "created_at": mw.epoch_ms(h.timestamp),
            "supporting": [], "source_store": mw.RETRIEVERS[0],
        } for s, h in ranked if h.event is not None]
        access.record(self.root, [h.id for _, h in ranked])  # an agent's recall is a recall (retention)
        return {"results": results, "fusion_used": fusion, "stores_queried": list(mw.RETRIEVERS),
                "latency_ms": int((time.perf_counter() - began) * 1000)}

    # -- forget ------------------------------------------------------------------------------

    def _scope(self, request: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
        ids, flt = list(dict.fromkeys(request.get("ids") or [])), request.get("filter") or {}
        if not ids and not flt:
            raise InputError("forget request $: give ids or a filter; without either it would forget every memory "
                             "(mass-delete protection)")
        return ids, mw.check_filter(flt, "forget request")

    def _precheck_forget(self, request: dict[str, Any]) -> None:
        self._scope(request)
        if request.get("reason"):
            tombstone(self._fresh().now(), request["reason"])

    def _forget(self, request: dict[str, Any]) -> dict[str, Any]:
        ids, flt = self._scope(request)
        vault = self._fresh()
        tl, now = vault.timeline, vault.now()
        unknown = [i for i in ids if i not in tl.by_id]
        if unknown:
            raise NotFoundError(f"forget request $.ids: no entry {', '.join(map(repr, unknown))}; nothing was forgotten")
        if ids:
            chosen = [tl.by_id[i] for i in ids if not flt or mw.matches(tl.by_id[i], flt)]
            refused = [why for e in chosen if (why := forgettable(e)) is not None]
            if refused:
                raise Refused(f"{refused[0]}; nothing was forgotten")
        else:
            chosen = [e for e in tl.events if tl.by_id.get(e.id) is e and forgettable(e) is None and mw.matches(e, flt)]
        hard = bool(request.get("hard_delete"))
        if hard:
            for ev in chosen:  # a reference to a removed entry breaks `check` (MV011) and so every commit
                named_by = [*tl.superseded_by.get(ev.id, ()), *tl.reconfirmed_by.get(ev.id, ()), *tl.cited_by(ev)]
                if named_by:
                    raise Refused(f"{ev.id} is named by {', '.join(named_by)}; removing it would leave that reference "
                                  "dangling: forget it softly (hard_delete false); nothing was forgotten")
            done = forget_hard(vault, chosen)
        else:
            chosen = [e for e in chosen if tl.status(e, now) != "forgotten"]
            done = forget_soft(vault, chosen, tombstone(now, request.get("reason"))) if chosen else []
        return {"forgotten_ids": done, "hard_delete": hard, "stores": [{"store": mw.STORE, "count": len(done),
                "error": None}], "pending_approval": False, "approval_url": None}

    # -- merge -------------------------------------------------------------------------------

    def _precheck_merge(self, request: dict[str, Any]) -> None:
        self._merge_parts(self._fresh(), request)

    def _merge_parts(self, vault: Vault, request: dict[str, Any]) -> tuple[Event, list[Event]]:
        canonical = _named(vault, request["canonical"], "$.canonical")
        dups = [_named(vault, ref, f"$.duplicates[{i}]") for i, ref in enumerate(request["duplicates"])]
        now = vault.now()
        if vault.timeline.status(canonical, now) == "forgotten":
            raise Refused(f"merge request $.canonical: {canonical.id} is forgotten; merge into a live entry")
        for i, dup in enumerate(dups):
            why = forgettable(dup)
            if dup.id == canonical.id or why or vault.timeline.status(dup, now) == "forgotten":
                raise Refused(f"merge request $.duplicates[{i}]: " + (
                    f"{dup.id} is the canonical entry itself" if dup.id == canonical.id else
                    why or f"{dup.id} is already forgotten"))
        if len({d.id for d in dups}) < len(dups):
            raise InputError("merge request $.duplicates: an entry is named twice")
        return canonical, dups

    def _merge(self, request: dict[str, Any]) -> dict[str, Any]:
        vault = self._fresh()
        canonical, dups = self._merge_parts(vault, request)
        strategy = request.get("strategy", "keep_canonical")
        rows = sorted([canonical, *dups], key=lambda e: (e.timestamp is None, e.timestamp or now_ms(), e.line))
        target, write = canonical.id, None
        if strategy == "merge_content":
            write = _merged(canonical, rows, request["agent_id"])
        elif strategy == "keep_highest_confidence":
            best = max(rows, key=lambda e: (e.confidence0, -rows.index(e)))  # ties: the older one
            if best is not canonical:
                write = _merged(best, [best], request["agent_id"], rows)
        if write is not None:
            target = new_id()
            log_entry(vault, write.pop("text"), **write, supersedes=canonical.id, entry_id=target, fresh_id=True)
            vault = self._fresh()
        forget_soft(vault, dups, tombstone(vault.now(), f"merged into {target}"))
        return {"canonical": target, "merged_count": len(dups), "strategy_used": strategy, "stores": [mw.STORE],
                "pending_approval": False, "approval_url": None}

    # -- expire ------------------------------------------------------------------------------

    def _expire(self, request: dict[str, Any]) -> dict[str, Any]:
        from memvault.search import access

        policy, action = request.get("policy") or {}, request.get("action", "forget")
        if not policy:
            raise InputError("expire request $.policy: give at least one of older_than_days, type, confidence_below, "
                             "no_recall_in_days; an empty policy would match every memory")
        vault = self._fresh()
        tl, now = vault.timeline, vault.now()
        recalls = access.stats(self.root) if "no_recall_in_days" in policy else {}
        matched = [e for e in tl.events if tl.by_id.get(e.id) is e and forgettable(e) is None
                   and tl.status(e, now) == "live"
                   and expired_by(policy, e, lambda ev: tl.confidence(ev, now), recalls.get(e.id), now)]
        said = ", ".join(f"{k} {v}" for k, v in sorted(policy.items()))
        if matched and action == "demote":
            Demoted(self.root).add([e.id for e in matched], float(settings(self.config)["demote"]))
        elif matched:
            forget_soft(vault, matched, tombstone(now, f"{'archived' if action == 'archive' else 'expired'} ({said})"))
        return {"matched_count": len(matched), "action_taken": action, "stores": [mw.STORE]}


PRECHECK: dict[str, Callable[[MemoryStore, dict[str, Any]], None]] = {
    "remember": MemoryStore._precheck_remember, "forget": MemoryStore._precheck_forget,
    "merge": MemoryStore._precheck_merge,
}


def expired_by(policy: dict[str, Any], event: Event, confidence: Callable[[Event], float], last_recall: Any,
               now: Any) -> bool:
    """Whether an entry falls under every key of an expire policy (pure; ANDed as the spec says).
    `no_recall_in_days`: written before that window and not recalled within it (a newer entry
    has had no chance to be recalled)."""
    ts = event.timestamp
    for key, value in policy.items():
        if key == "older_than_days" and (ts is None or ts > now - timedelta(days=value)):
            return False
        if key == "type" and mw.memory_type(event) != value:
            return False
        if key == "confidence_below" and not confidence(event) < value:
            return False
        if key == "no_recall_in_days":
            cutoff = now - timedelta(days=value)
            if ts is None or ts > cutoff or (last_recall is not None and last_recall.last_accessed > cutoff):
                return False
    return True


def _procedure(content: str) -> str:
    try:
        fsm = json.loads(content)
    except ValueError as exc:
        raise InputError(f"remember request $.content: a procedural memory is FSM JSON (spec §7): {exc}") from exc
    found = schemas.problem("procedure", fsm)
    if found is not None:
        raise InputError(f"remember request $.content{found[0][1:]}: {found[1]} (the procedure schema)")
    return mw.procedure_body(content)


def _scan(value: Any, where: str) -> None:
    """Every string in a request's metadata, scanned for secrets as it is, before JSON escapes it."""
    if isinstance(value, str):
        check_written(value, where=f"remember request {where}")
    elif isinstance(value, dict):
        for key, item in value.items():
            _scan(str(key), where)
            _scan(item, f"{where}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _scan(item, f"{where}[{n}]")


def _strings(value: Any, where: str) -> list[str]:
    items = [t.strip() for t in value.split(",")] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(t, str) for t in items):
        raise InputError(f"remember request {where}: a list of strings")
    return [t for t in items if t.strip()]


def _named(vault: Vault, ref: str, where: str) -> Event:
    try:
        return vault.timeline.by_id.get(ref) or vault.find(ref)
    except NotFoundError as exc:
        raise type(exc)(f"merge request {where}: {exc}") from exc


def _merged(lead: Event, rows: list[Event], agent_id: str, everyone: list[Event] | None = None) -> dict[str, Any]:
    """`log_entry`'s arguments for the entry a merge writes: `lead`'s type, source and scope; the
    content of `rows` (one each, a procedure's own only); the metadata of all, later winning;
    the highest confidence; every tag."""
    pool = everyone or rows
    texts = [lead.content] if lead.type == "procedure" else list(dict.fromkeys(e.content for e in rows))
    meta: dict[str, Any] = {}
    for row in pool:
        meta.update(mw.user_metadata(row))
    inline = {t for e in pool for t in e.tags}
    return {"text": "\n\n".join(texts), "type": lead.type if lead.kind == "log" and not lead.is_note else
            mw.ENTRY_TYPE[mw.memory_type(lead)], "confidence": max(e.confidence0 for e in pool),
            "tags": tuple(sorted(inline)), "source": lead.source, "scope": lead.scope,
            "meta": {"agent-id": agent_id, "user-id": lead.meta.get("user-id", ""),
                     "metadata": json.dumps(meta, ensure_ascii=False, separators=(", ", ": ")) if meta else ""}}
