"""`memvault status`: sections contributed by the areas that keep derived state.

Each entry of `SECTIONS` names a function `section(vault) -> (name, data, lines)`; they are
imported only when status runs. The watcher adds its own entry here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.parsed import ParsedVault

SECTIONS: list[str] = ["memvault.search.index:status_section", "memvault.search.index.semantic_status:status_section",
                       "memvault.watch:status_section", "memvault.sync.status:status_section"]


def collect(vault: ParsedVault) -> tuple[dict[str, Any], list[str]]:
    """All sections as ({name: data}, text lines)."""
    data: dict[str, Any] = {}
    lines: list[str] = []
    for spec in SECTIONS:
        module, _, func = spec.partition(":")
        try:
            name, part, text = getattr(importlib.import_module(module), func)(vault)
        except Exception as exc:  # status is how a person finds out what is wrong: one part
            name = module.rsplit(".", 1)[-1]  # that cannot tell must not hide the others
            why = f"{type(exc).__name__}: {exc}"
            part, text = {"error": why}, [f"{name}: cannot tell ({why})"]
        data[name] = part
        lines += text
    return data, lines
