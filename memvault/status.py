"""`memvault status`: sections contributed by the areas that keep derived state.

Each entry of `SECTIONS` names a function `section(vault) -> (name, data, lines)`; they are
imported only when status runs. The watcher adds its own entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

SECTIONS: list[str] = ["memvault.index:status_section", "memvault.watch:status_section"]


def collect(vault) -> tuple[dict[str, Any], list[str]]:
    """All sections as ({name: data}, text lines)."""
    data: dict[str, Any] = {}
    lines: list[str] = []
    for spec in SECTIONS:
        module, _, func = spec.partition(":")
        name, part, text = getattr(importlib.import_module(module), func)(vault)
        data[name] = part
        lines += text
    return data, lines
