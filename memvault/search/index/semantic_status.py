"""The semantic part of `memvault status`: which model, how many vectors, how many entries
still wait for one, their size on disk and the search mode in force.

It reads only files (state.json, the index's row count): no model is loaded and, when the
extra is not installed, numpy is never imported (`runtime_missing` asks importlib only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memvault.search.index import semantic
from memvault.semantic import settings
from memvault.semantic.models import EXTRA_HINT, SemanticUnavailable, runtime_missing

if TYPE_CHECKING:
    from memvault.parsed import ParsedVault


def semantic_status(vault: ParsedVault) -> dict[str, Any]:
    """The section's data: `mode` is what a search without --mode uses; `off` why there are no
    vectors (None when there are or will be)."""
    data: dict[str, Any] = {"mode": "lexical", "setting": str(settings(vault.config).get("mode", "auto")),
                            "model": None, "key": None, "vectors": 0, "pending": None, "size_bytes": 0,
                            "off": None}
    missing = runtime_missing()
    if missing:
        return data | {"off": f"{EXTRA_HINT} ({', '.join(missing)} not installed)"}
    try:
        spec = semantic.model_spec(vault.config, vault.root)
    except SemanticUnavailable as exc:
        return data | {"off": str(exc)}
    data |= {"mode": semantic.choose_mode(vault.config, None, vault.root), "model": spec.name, "key": spec.key}
    if data["mode"] == "lexical":
        data["off"] = "[semantic] mode = \"lexical\" in memvault.toml"
    from memvault.search.index.core import Index

    with Index(vault) as index:
        sem = semantic.Semantic.open(index)
        data["vectors"] = sem.store.state().live
        data["size_bytes"] = sem.store.size_bytes()
        if index.db_path.exists():
            data["pending"] = sem.pending()
    return data


def status_lines(data: dict[str, Any]) -> list[str]:
    if data["model"] is None:
        return [f"semantic: off: {data['off']}"]
    head = f"semantic: {data['mode']} search" + (f" (off: {data['off']})" if data["off"] else "")
    pending = "no index yet" if data["pending"] is None else f"{data['pending']} entries pending"
    return [
        head,
        f"  model:   {data['model']} (key {data['key']})",
        f"  vectors: {data['vectors']} held, {pending}"
        + ("; `memvault index` embeds them" if data["pending"] else ""),
        f"  size:    {data['size_bytes'] / 1048576:.1f} MB",
    ]


def status_section(vault: ParsedVault) -> tuple[str, dict[str, Any], list[str]]:
    """`memvault status`'s semantic section: (name, data for --json, lines for people)."""
    data = semantic_status(vault)
    return "semantic", data, status_lines(data)
