"""The search index: a derived, rebuildable full-text index over the vault's events.

    from memvault.search.index import open_index
    with open_index(vault) as index:        # backend: argument, [index] backend, "sqlite"
        index.update()                      # reconcile with the files (incremental)
        hits = index.search("weekly updates", limit=5)

Backends: `sqlite` (FTS5, default; `memvault/index/sqlite.py`) and `whoosh` (optional extra
`memvault[whoosh]`; `memvault/index/whoosh_backend.py`). See docs/search.md.
"""

from __future__ import annotations

from typing import Any

from memvault.errors import InputError
from memvault.parsed import ParsedVault
from memvault.search.hits import Hit
from memvault.search.index.core import BACKENDS, Index, resolve_backend
from memvault.search.index.engine import FileState, IndexStatus, Progress, UpdateReport
from memvault.search.textproc import nothing_to_search, parse_query


def open_index(vault: ParsedVault, backend: str | None = None, *, for_search: bool = False) -> Index:
    """The vault's index with `backend` (else `[index] backend` in memvault.toml, else sqlite).
    `for_search`: its updates embed only a few new entries (search/index/semantic.py)."""
    return Index(vault, backend, for_search=for_search)


def search_vault(vault: ParsedVault, query: str, *, backend: str | None = None, refresh: bool = True,
                 **options: Any) -> list[Hit]:
    """Search with an index brought up to date first (what `memvault search` does).

    An unknown type, in `types` or as `type:X` in the query, is an `InputError`, by the rule
    `memvault list` uses (`ParsedVault.check_types`), and so is a query with nothing to search
    for (empty, or only punctuation: `textproc.nothing_to_search`)."""
    empty = nothing_to_search(query)
    if empty is not None:
        raise InputError(empty)
    vault.check_types(options.get("types", ()))
    vault.check_types(parse_query(query).types, "type:")
    with open_index(vault, backend, for_search=True) as index:
        if refresh:
            index.refresh()
        return index.search(query, **options)


def search_mode(vault: ParsedVault, asked: str | None = None) -> str:
    """The mode a search asking for `asked` uses (None: `[semantic] mode`, auto: hybrid when the
    extra and a model are there): what a face reports. Raises SemanticUnavailable when a mode
    asked for cannot be had (search/index/semantic.py `choose_mode`)."""
    from memvault.semantic.choice import choose_mode

    return choose_mode(vault.config, asked, vault.root)


def update_index(vault: ParsedVault, backend: str | None = None, *, rebuild: bool = False,
                 progress: Progress | None = None) -> UpdateReport:
    """Bring the index up to date with the files (only changed ones are re-read), or rebuild
    it from scratch (what `memvault index` does); `progress(done, total)` hears how far it is."""
    with open_index(vault, backend) as index:
        return index.rebuild(progress=progress) if rebuild else index.update(progress=progress)


def index_status(vault: ParsedVault, backend: str | None = None) -> IndexStatus:
    with open_index(vault, backend) as index:
        return index.status()


def status_section(vault: ParsedVault) -> tuple[str, dict[str, Any], list[str]]:
    """The index part of `memvault status`: (name, data for --json, lines for people)."""
    st = index_status(vault)
    return "index", st.to_dict(), st.lines()


__all__ = [
    "BACKENDS", "FileState", "Hit", "Index", "IndexStatus", "UpdateReport", "index_status",
    "open_index", "resolve_backend", "search_mode", "search_vault", "status_section", "update_index",
]
