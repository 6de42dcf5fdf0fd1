"""memvault: a Markdown-native memory vault for AI agents and the people who work with them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memvault.errors import MemvaultError

if TYPE_CHECKING:
    from memvault.entries.model import Event, Problem
    from memvault.vault import Vault

__version__ = "0.1.0"
__all__ = ["Vault", "Event", "Problem", "MemvaultError", "__version__"]

# Imported on first use: `import memvault` happens on every CLI start (`memvault --help`
# included), and the vault/events/parse chain is most of that start-up time.
_LAZY = {"Vault": "vault", "Event": "model", "Problem": "model"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
