"""This clone's machine name, and the ids memvault writes in a vault shared through a remote.

A default id counts the entries at a minute (`…T10:15`, `…T10:15-2`); two machines writing the same
minute would both write `…T10:15`, and after a merge one of them would name the other's entry. So
in a vault whose repository has a remote, what memvault writes gets `Id: <minute>-<machine>`
(`2026-12-02T10:15-laptop`), unique by construction (docs/sync.md, `[sync] ids`).
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from pathlib import Path

from memvault.errors import GitError
from memvault.gitio.run import run_git

# `[sync]` in memvault.toml (docs/sync.md): the remote and branch (None: the branch's upstream, else
# origin and the current branch), when ids get the machine, the watcher's interval (`watch --sync`).
SYNC_DEFAULTS: dict[str, object] = {"remote": None, "branch": None, "ids": "auto", "interval_seconds": 60.0}
SUFFIX = "abcdefghijkmnpqrstuvwxyz23456789"  # no 0/o, 1/l: read aloud and typed again
MACHINE_RE = re.compile(r"[^a-z0-9-]+")


def machine_name(raw: str) -> str:
    """A machine's name as an id part: lower case letters, digits and dashes, starting with a letter."""
    name = MACHINE_RE.sub("-", raw.strip().lower().split(".")[0]).strip("-")[:24].strip("-")
    if not name:
        return "m"
    return name if name[0].isalpha() else "m" + name


def machine_id(minute_id: str, machine: str, taken: set[str] | frozenset[str]) -> str:
    """`<minute>-<machine>`, or `-2`, `-3`… after it when this machine wrote that minute already."""
    first = f"{minute_id}-{machine}"
    if first not in taken:
        return first
    n = 2
    while f"{first}-{n}" in taken:
        n += 1
    return f"{first}-{n}"


def machine(root: Path) -> str:
    """This clone's machine name: MEMVAULT_MACHINE, else `git config memvault.machine`, else a new
    one, kept in that config: the host's name and three random letters or digits (`laptop-k3f`),
    because two clones on one host, or containers that all call themselves `localhost`, must not
    write the same ids."""
    env = os.environ.get("MEMVAULT_MACHINE", "").strip()
    if env:
        return machine_name(env)
    found = run_git(["config", "--get", "memvault.machine"], root, check=False)
    if found.ok and found.text.strip():
        return machine_name(found.text)
    name = f"{machine_name(socket.gethostname())}-{''.join(secrets.choice(SUFFIX) for _ in range(3))}"
    run_git(["config", "memvault.machine", name], root, check=False)
    return name


def has_remote(root: Path) -> bool:
    """Whether the vault's repository has a remote (so other clones may write the same minute)."""
    try:
        found = run_git(["remote"], root, check=False)
    except GitError:  # git not installed: no remote either
        return False
    return found.ok and bool(found.text.split())
