"""The `memvault` command: a thin shell over the library.

Each command parses its options, makes one call into the library and prints the result,
as text for people or as JSON (`--json`) for agents. Commands live in modules beside this
one, grouped by area, and are registered in `COMMAND_MODULES`.
"""

from __future__ import annotations

import importlib

from memvault.cli._common import MemvaultGroup, cli

COMMAND_MODULES = ("core", "curate", "search", "history", "check", "watch", "review", "memorywire", "maintain",
                   "serve", "ingest", "interop", "sync")

for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}")


def main() -> None:
    cli(prog_name="memvault")


__all__ = ["cli", "main", "MemvaultGroup"]
