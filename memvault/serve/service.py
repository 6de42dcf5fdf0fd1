"""The operations the MCP tools and the HTTP API offer, over the library's calls.

One `Service` per served vault: it owns the watcher that runs inside the server (so what a
person saves in an editor is searchable) and updates the index itself for every file it
writes (so what an agent writes is searchable by its next call, without waiting for the
watcher's debounce). Every call opens the vault afresh (cheap: it is parsed lazily) so it sees
the files as they are; no state is shared between threads but the watcher's.

Results are compact dicts (`compact.py`) that cite `file#Lx-Ly` and the entry id. Errors are
the library's (`MemvaultError`), which the transports turn into tool errors or JSON errors.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.context import DEFAULT_BUDGET
from memvault.errors import InputError, NotFoundError, Refused
from memvault.layout import read_file
from memvault.serve import compact
from memvault.vault import Vault
from memvault.watch.logsink import LogSink

if TYPE_CHECKING:
    from memvault.watch.watcher import Watcher

MAX_LINES = 400  # `get` by file: at most this many lines in one answer
MAX_LIMIT = 100


class Service:
    """A served vault. `start()` runs the watcher (unless another one already watches the
    vault: then every search checks the files itself); `stop()` flushes and lets go."""

    def __init__(self, root: str | Path, *, watch: bool = True, backend: str | None = None):
        with Vault.open(root) as vault:
            self.root = vault.root
        self.backend = backend
        self.watch = watch
        self.watcher: Watcher | None = None
        self.watcher_note = "not started"
        self._stop_lock = threading.Lock()

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        if not self.watch:
            self.watcher_note = "off"
            return
        from memvault.watch.state import WatcherRunning
        from memvault.watch.watcher import Watcher, WatchOptions

        vault = Vault.open(self.root)  # the watcher's own, for as long as it runs
        # stderr: under `memvault mcp`, stdout carries the protocol
        watcher = Watcher(vault, WatchOptions.from_config(vault, backend=self.backend), LogSink(sys.stderr))
        try:
            watcher.start()
        except WatcherRunning as exc:  # `memvault watch` or another server keeps the index current already
            self.watcher_note = shared_watcher_note(str(exc))
            return
        self.watcher, self.watcher_note = watcher, "running"

    def stop(self) -> None:
        with self._stop_lock:
            watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    @contextlib.contextmanager
    def vault(self) -> Iterator[Vault]:
        with Vault.open(self.root) as vault:
            yield vault

    @property
    def refresh(self) -> bool:
        """Whether a search must check the files first: not while our own watcher runs."""
        return self.watcher is None

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "vault": str(self.root), "watcher": self.watcher_note}

    # -- reading ----------------------------------------------------------------------------

    def search(self, query: str, limit: int = 10, types: list[str] | None = None, tags: list[str] | None = None,
               include_all: bool = False, mode: str | None = None) -> dict[str, Any]:
        from memvault.search.index import search_mode, search_vault

        with self.vault() as vault:
            used = search_mode(vault, mode)
            hits = search_vault(vault, query, backend=self.backend, refresh=self.refresh, limit=_limit(limit),
                                types=tuple(types or ()), tags=tuple(tags or ()), include_all=include_all,
                                retention=False, mode=used)  # retention: not in a compact answer; ~1-2 s after a write
            return {"query": query, "mode": used, "results": [compact.hit(h.to_dict()) for h in hits]}

    def get(self, ref: str | None = None, file: str | None = None, start_line: int | None = None,
            end_line: int | None = None) -> dict[str, Any]:
        if (ref is None) == (file is None):
            raise InputError("give either `ref` (an id, or a place such as memory/2026-02-21.md#L3-L5) or `file`")
        with self.vault() as vault:
            if ref is not None:
                entry = vault.fetch(ref, backend=self.backend, refresh=self.refresh, retention=False)
                return compact.entry(entry, width=None)  # the whole entry: what `get` is for
            return self._lines(vault, _vault_relpath(vault, file or ""), start_line, end_line)

    def _lines(self, vault: Vault, rel: str, start: int | None, end: int | None) -> dict[str, Any]:
        from memvault.parsed import parse_text

        text = self.read_text(rel)
        lines = text.split("\n")
        first = max(1, start or 1)
        last = min(len(lines), end or len(lines), first + MAX_LINES - 1)
        if first > len(lines):
            raise InputError(f"{rel} has {len(lines)} lines; line {first} is past its end")
        ids = [e.id for e in parse_text(text, rel, vault.config).events if e.line <= last and e.end_line >= first]
        return {"cite": f"{rel}#L{first}-L{last}", "text": "\n".join(lines[first - 1:last]), "entries": ids,
                "lines_in_file": len(lines)}

    def as_of(self, at: str, query: str | None = None, limit: int = 20) -> dict[str, Any]:
        with self.vault() as vault:
            items = vault.as_of(at, query or None, limit=_limit(limit))
            return {"at": at, "query": query, "results": [compact.entry(d) for d in items]}

    def changes(self, since: str, until: str | None = None, limit: int = 20) -> dict[str, Any]:
        with self.vault() as vault:
            return compact.changes(vault.changes(since, until, limit=_limit(limit)))

    def history(self, ref: str) -> dict[str, Any]:
        with self.vault() as vault:
            return compact.history(vault.history(ref))

    def curate_preview(self) -> dict[str, Any]:
        """What `memvault curate --dry-run` would propose; writes nothing."""
        from memvault.curate.promote import plan_curation, plan_dict

        with self.vault() as vault:
            return compact.plan(plan_dict(plan_curation(vault)))

    def context(self, query: str | None = None, scope: str | None = None, budget: int = DEFAULT_BUDGET,
                record: bool = True, mode: str | None = None) -> dict[str, Any]:
        """`memvault context`: the prompt block (MEMORY.md's live bullets and the entries most
        relevant to `query`, by kind, citing ids) within `budget` tokens; docs/context.md."""
        from memvault.context import context

        with self.vault() as vault:
            return context(vault, query, scope=scope, budget=budget, record=record, backend=self.backend,
                           refresh=self.refresh, mode=mode)

    def read_text(self, rel: str, *, missing: str | None = None) -> str:
        """A vault file's text by the layout rule (no links); `missing` stands in for none."""
        try:
            return read_file(self.root, rel).decode("utf-8", errors="replace")
        except FileNotFoundError:
            if missing is None:
                raise NotFoundError(f"{rel}: no such file in the vault") from None
            return missing

    def today_log(self) -> str:
        with self.vault() as vault:
            path = vault.log_path_for(vault.now().date().isoformat())
        return self.read_text(path.relative_to(self.root).as_posix(), missing="(nothing logged today yet)\n")

    # -- writing ----------------------------------------------------------------------------

    def remember(self, text: str, type: str = "observation", tags: list[str] | None = None,
                 importance: str | float | None = None, confidence: float | None = None, source: str | None = None,
                 scope: str | None = None, supersedes: str | None = None) -> dict[str, Any]:
        """`memvault log`: one entry appended to today's log, refused as `log` refuses (secrets,
        control characters, headings); the index updated for that file before returning."""
        from memvault.memorywire.store import new_id
        from memvault.search.index import open_index
        from memvault.write.log import log_entry, log_result

        with self.vault() as vault:
            event = log_entry(vault, text, type=type, tags=tuple(tags or ()), importance=importance,
                              confidence=confidence, source=source, scope=scope, supersedes=supersedes,
                              entry_id=new_id(), fresh_id=True)  # a stable id, as memorywire's remember writes
            with open_index(vault, self.backend) as index:
                index.update([event.file])
            result = log_result(vault, event)
        return {"id": result["id"], "cite": f"{event.file}#L{event.line}-L{event.end_line}",
                "timestamp": result["timestamp"], "supersedes": result["supersedes"]}


def shared_watcher_note(refusal: str) -> str:
    """Health's word when another watcher holds the vault: a supported setup, said as one (not
    the watcher's own refusal, which tells a person to stop the other one)."""
    pid = re.search(r"\(pid (\d+)\)", refusal)
    who = f" (pid {pid.group(1)})" if pid else ""
    return f"shared: another memvault watcher{who} watches this vault; this server checks the files before each search"


def _limit(n: int) -> int:
    if not 1 <= n <= MAX_LIMIT:
        raise InputError(f"limit must be between 1 and {MAX_LIMIT}, got {n}")
    return n


def _vault_relpath(vault: Vault, given: str) -> str:
    """`given` as a vault file's relative path, or a refusal: nothing outside the vault, nothing
    it does not read (`[vault] include`/`exclude`), no `..`; links are refused when read."""
    rel = given.strip().replace("\\", "/")
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or ":" in parts[0]:
        raise Refused(f"{given!r} is not a path inside the vault: give a vault-relative path such as "
                      "MEMORY.md or memory/2026-02-21.md")
    if not vault.selection.selects(rel):
        raise Refused(f"{rel} is not one of the vault's memory files ([vault] include/exclude)")
    return rel
