"""Helpers for the search tests: write daily logs, compare an index with a fresh parse."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from memvault.entries.timeline import Timeline
from memvault.vault import Vault

UTC_TOML = '[vault]\ntimezone = "UTC"\n'
BACKENDS = ["sqlite", "whoosh"]


def make_vault(root: Path, toml: str = UTC_TOML) -> Vault:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(toml)
    return Vault.open(root)


def entry(hhmm: str, etype: str, text: str, **meta: str) -> str:
    lines = [f"## {hhmm} - {etype}", text]
    lines += [f"{k.capitalize()}: {v}" for k, v in meta.items()]
    return "\n".join(lines) + "\n"


def write_log(root: Path, day: str, *entries: str) -> str:
    rel = f"memory/{day}.md"
    (root / rel).write_text(f"# {day}\n\n" + "\n".join(entries))
    return rel


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo("UTC"))


def fresh(root: Path) -> tuple[list, dict, set]:
    """Events, supersedes and reconfirm edges of a fresh parse of the files."""
    vault = Vault.open(root)
    tl: Timeline = vault.timeline
    events = sorted(tl.events, key=lambda e: (e.file, e.line))
    rec = {(src, target) for target, srcs in tl.reconfirmed_by.items() for src in srcs}
    return events, dict(tl.supersedes), rec
