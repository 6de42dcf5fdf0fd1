"""Which format a file is, and the one entry point per direction (`memvault import`/`export`):
a format is one line in `IMPORTERS` or `EXPORTERS`."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.errors import InputError, NotFoundError, Refused
from memvault.fsio import atomic_write
from memvault.interop import agent_memory, amfile, memory_jsonl, memoryblock
from memvault.interop.amfile import BadFile
from memvault.layout import LOG_DIR, MEMORY_FILE
from memvault.parsed import ParsedVault

Importer = Callable[..., agent_memory.Result]  # (vault, path, *, dry_run, name) -> Result
Exporter = Callable[[ParsedVault, str | None, Path | None], dict[str, Any]]  # (vault, scope, out) -> summary

IMPORTERS: dict[str, Importer] = {
    "agent-memory": agent_memory.import_file,
    "memory-jsonl": memory_jsonl.import_file,
}


def memoryblock_file(vault: ParsedVault, scope: str | None, out: Path | None) -> dict[str, Any]:
    """The MemoryBlock export (JSON Lines, live entries) as text (`out` None) or a file written atomically."""
    buf = io.StringIO()
    count = memoryblock.export(vault, buf, scope=scope)
    if out is not None:
        atomic_write(out, buf.getvalue())
    return {"format": "memoryblock", "file": str(out) if out else None, "text": None if out else buf.getvalue(),
            "blocks": count}


EXPORTERS: dict[str, Exporter] = {
    "agent-memory": agent_memory.export_file,
    "memoryblock": memoryblock_file,
}


def sniff(path: Path, name: str) -> str:
    """The format a file's first line says: the agent-memory header, or a forgetting-curve memory."""
    text = agent_memory.read_text(path, name)
    lines = text.lstrip("\ufeff").split("\n")
    n, first = next(((i, line) for i, line in enumerate(lines, 1) if line.strip()), (1, ""))
    if amfile.sniff(first):
        return "agent-memory"
    if memory_jsonl.sniff(first):
        return "memory-jsonl"
    raise BadFile(name, n, f"neither an {amfile.FORMAT} header nor a forgetting-curve memory line "
                           f"(with a \"summary\"); give --format ({', '.join(IMPORTERS)})")


def import_file(vault: ParsedVault, path: Path, fmt: str | None = None, *, dry_run: bool = False) -> dict[str, Any]:
    """Import `path` (its format sniffed when `fmt` is None); what was written, skipped, forgotten."""
    name = str(path)
    if fmt is not None and fmt not in IMPORTERS:
        raise InputError(f"--format {fmt!r}: import reads {', '.join(IMPORTERS)}")
    if not Path(path).is_file():
        raise NotFoundError(f"{name}: no such file", file=name)
    fmt = fmt or sniff(path, name)
    return IMPORTERS[fmt](vault, path, dry_run=dry_run, name=name).to_dict()


def export(vault: ParsedVault, fmt: str, scope: str | None = None, out: Path | None = None) -> dict[str, Any]:
    """The export as text (`out` None or `-`: standard output) or written to `out`, which must not be
    a file the vault reads (an export in `memory/` would be read back as memory)."""
    if fmt not in EXPORTERS:
        raise InputError(f"--format {fmt!r}: export writes {', '.join(EXPORTERS)}")
    out = None if out is None or str(out) == "-" else out
    if out is not None:
        refuse_vault_file(vault, out)
    return EXPORTERS[fmt](vault, scope, out)


def refuse_vault_file(vault: ParsedVault, out: Path) -> None:
    """Refuse an output path inside the vault's `memory/` folder, or one its selection reads."""
    root = vault.root.resolve()
    full = (Path.cwd() / out).resolve()
    if not full.is_relative_to(root):
        return
    rel = full.relative_to(root).as_posix()
    if rel in (LOG_DIR, MEMORY_FILE) or rel.startswith(f"{LOG_DIR}/") or vault.selection.selects(rel):
        raise Refused(f"{out}: inside the vault's memory (it would be read back as memory); "
                      "write the export outside memory/", file=str(out))
