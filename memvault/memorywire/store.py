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

LOG_ARGS = ("text", "type", "tags", "importance", "confidence", "source", "scope", "supersedes")  # the MCP tool's
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

    def log(self, request: dict[str, Any]) -> dict[str, Any]:
        """memvault's own write (the MCP `remember` tool): `memvault log`'s entry types and
        `supersedes`, which the spec's remember has not, under the same governance as remember
        (`[memorywire] approval`) and with a stable `Id:` as remember writes. `request`:
        `agent_id`, `text`, and optionally `type`, `tags`, `importance`, `confidence`, `source`,
        `scope`, `supersedes`, `approval_required`."""
        return self.run("log", request)

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "store": mw.STORE, "vault": str(self.root), "capabilities": sorted(CAPABILITIES),
                "pending_approvals": len(self.queue.items())}

    @property
    def capabilities(self) -> set[str]:
        return set(CAPABILITIES)

    def run(self, op: str, request: dict[str, Any], *, approved: bool = False) -> dict[str, Any]:
        """Check `request`, stage it when governance says so (unless `approved`), else carry it
        out; the response, checked against its schema."""
        if op in schemas.schema_names():  # `log` is memvault's own: its caller checked the arguments
            schemas.check_request(op, request)
        try:
            if not approved and needs_approval(self.config, op, request):
                response = self._stage(op, request)
            else:
                response = getattr(self, f"_{op}")(request)
        except InputError as exc:  # the write path speaks of `memvault log`'s flags; say the request's fields
            words = mw.REMEMBER_WORDS if op == "remember" else mw.tool_words(LOG_ARGS) if op == "log" else {}
            said = mw.api_words(str(exc), words)
            if said == str(exc):
                raise
            raise type(exc)(said, file=exc.file, line=exc.line) from exc
        schemas.check_response(op, response)
        return response

    def _stage(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        PRECHECK[op](self, request)  # what would be refused anyway is refused now, not at review
        item = self.queue.stage(op, request)
        pending = {"pending_approval": True, "approval_url": item["approval_url"]}
        if op in ("remember", "log"):
            return {"id": item["id"], "stored_at": item["staged_at"], "stores": [], **pending}
        if op == "forget":
            return {"forgotten_ids": [], "hard_delete": bool(request.get("hard_delete")), "stores": [], **pending}
        if op == "expire":
            return {"matched_count": 0, "action_taken": request.get("action", "forget"), "stores": [], **pending}
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

    def _log_args(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"type": request.get("type") or "observation", "tags": tuple(request.get("tags") or ()),
                "importance": request.get("importance"), "confidence": request.get("confidence"),
                "source": request.get("source"), "scope": request.get("scope"),
                "supersedes": request.get("supersedes")}

    def _log(self, request: dict[str, Any]) -> dict[str, Any]:
        from memvault.write.log import log_result

        vault = self._fresh()
        event = log_entry(vault, request["text"], **self._log_args(request), entry_id=new_id(), fresh_id=True)
        said = log_result(self._fresh(), event) if event.supersedes else {"supersedes": None}
        return {"id": event.id, "stored_at": mw.epoch_ms(event.timestamp), "stores": [mw.STORE],
                "pending_approval": False, "approval_url": None, "location": event.location,
                "timestamp": event.timestamp.isoformat() if event.timestamp else None,
                "supersedes": said["supersedes"]}

    def _precheck_log(self, request: dict[str, Any]) -> None:
        vault = self._fresh()
        args = self._log_args(request)
        check_written(check_entry_text(request["text"]), where="the new entry")
        if str(args["type"]).lower() not in vault.config.types:
            raise InputError(f"unknown type {args['type']!r}; known: {', '.join(vault.config.types)}")
        if args["supersedes"]:
            _named(vault, args["supersedes"], "$.supersedes", "remember")

    # -- recall ------------------------------------------------------------------------------

    def _recall(self, request: dict[str, Any]) -> dict[str, Any]:
        from memvault.search import access
        from memvault.search.index import search_mode, search_vault

        began = time.perf_counter()
        vault = self._fresh()
        flt = mw.check_filter(request.get("filter") or {}, "recall request")
        types = request.get("types") or []
        k, fusion = request.get("k", 5), request.get("fusion", "rrf")
        days = request.get("fresher_than_days")
        since = None if days is None else vault.now() - timedelta(days=days)
        n = max(4 * k, 20) if flt or types else k  # without filters every hit is kept
        mode = search_mode(vault)  # the vault's: the request names no mode, only how to fuse
        stores = mw.stores_for(mode)
        while True:  # filters the index does not know take some hits: ask for more
            hits = search_vault(vault, request["query"], limit=n, since=since, record_access=False,
                                refresh=self.refresh, retention=False,  # not in the response; ~1-2 s after a write
                                mode=mode, fusion=fusion if mode == "hybrid" else None)
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
            "metadata": mw.metadata_of(h.event, h.status, h.confidence, matched=h.matched),
            "created_at": mw.epoch_ms(h.timestamp), "supporting": [], "source_store": "+".join(stores),
        } for s, h in ranked if h.event is not None]
        access.record(self.root, [h.id for _, h in ranked])  # an agent's recall is a recall (retention)
        return {"results": results, "fusion_used": fusion, "stores_queried": stores,
                "latency_ms": int((time.perf_counter() - began) * 1000)}

    # -- forget ------------------------------------------------------------------------------

    def _scope(self, request: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
        ids = list(dict.fromkeys(request.get("ids") or []))
        flt = mw.check_filter(request.get("filter") or {}, "forget request")  # vacuous keys dropped
        if not ids and not flt:
            raise InputError("forget request $: give ids or a filter that narrows (an empty filter or empty "
                             "tags/types list matches everything); without either it would forget every memory "
                             "(mass-delete protection)")
        return ids, flt

    def _precheck_forget(self, request: dict[str, Any]) -> None:
        vault = self._fresh()
        self._chosen(vault, request)  # an unknown id or a bullet is refused now, not at review
        if request.get("reason"):
            tombstone(vault.now(), request["reason"])

    def _chosen(self, vault: Vault, request: dict[str, Any]) -> list[Event]:
        """The entries a forget request names: by id (an id, its unique start, or a cite as `get`
        takes them; all or nothing) or by filter."""
        ids, flt = self._scope(request)
        tl = vault.timeline
        if ids:
            named = [_named(vault, ref, f"$.ids[{n}]", "forget") for n, ref in enumerate(ids)]
            chosen = list({e.id: e for e in named if not flt or mw.matches(e, flt)}.values())
            refused = [why for e in chosen if (why := forgettable(e)) is not None]
            if refused:
                raise Refused(f"forget request: {refused[0]}; nothing was forgotten")
            return chosen
        return [e for e in tl.events if tl.by_id.get(e.id) is e and forgettable(e) is None and mw.matches(e, flt)]

    def _forget(self, request: dict[str, Any]) -> dict[str, Any]:
        vault = self._fresh()
        chosen = self._chosen(vault, request)
        tl, now = vault.timeline, vault.now()
        hard = bool(request.get("hard_delete"))
        if hard:
            for ev in chosen:  # a reference to a removed entry breaks `check` (MV011) and so every commit
                named_by = [*tl.superseded_by.get(ev.id, ()), *tl.reconfirmed_by.get(ev.id, ()), *tl.cited_by(ev),
                            *merged_into(tl.events, ev.id)]
                if named_by:
                    raise Refused(f"forget request: {ev.id} is named by {', '.join(named_by)}; removing it would "
                                  "leave that reference dangling: forget it softly (hard_delete false); nothing was "
                                  "forgotten")
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

    def _precheck_expire(self, request: dict[str, Any]) -> None:
        _policy(request)

    def _expire(self, request: dict[str, Any]) -> dict[str, Any]:
        from memvault.search import access

        policy, action = _policy(request), request.get("action", "forget")
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
    "remember": MemoryStore._precheck_remember, "log": MemoryStore._precheck_log, "forget": MemoryStore._precheck_forget,
    "merge": MemoryStore._precheck_merge, "expire": MemoryStore._precheck_expire,
}


POLICY_KEYS = ("older_than_days", "type", "confidence_below", "no_recall_in_days")


def _policy(request: dict[str, Any]) -> dict[str, Any]:
    """An expire request's policy, refused when it holds no criterion (it would match every
    memory) or a key it does not know (a typo must not match everything: the schema refuses it
    too, this holds for a caller that skips the schema)."""
    policy = request.get("policy") or {}
    unknown = [k for k in policy if k not in POLICY_KEYS]
    if unknown:
        raise InputError(f"expire request $.policy.{unknown[0]}: unknown key; known: {', '.join(POLICY_KEYS)}")
    if not policy:
        raise InputError(f"expire request $.policy: give at least one of {', '.join(POLICY_KEYS)}; a policy without "
                         "one would match every memory (mass-delete protection)")
    return dict(policy)


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


def _named(vault: Vault, ref: str, where: str, op: str = "merge") -> Event:
    try:
        return vault.timeline.by_id.get(ref) or vault.find(ref)
    except NotFoundError as exc:
        tail = "; nothing was forgotten" if op == "forget" else ""
        raise type(exc)(f"{op} request {where}: {exc}{tail}") from exc


def merged_into(events: list[Event], target: str) -> list[str]:
    """The ids of the entries whose tombstone says `merged into <target>` (merge writes it)."""
    said = f"merged into {target}"
    return [e.id for e in events if e.forgotten is not None and said in (e.meta.get("forgotten") or "")]


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
