"""memvault: a Markdown-native memory vault for AI agents and the people who work with them."""

from __future__ import annotations

from .errors import MemvaultError
from .model import Event, Problem
from .vault import Vault

__version__ = "0.1.0"
__all__ = ["Vault", "Event", "Problem", "MemvaultError", "__version__"]
