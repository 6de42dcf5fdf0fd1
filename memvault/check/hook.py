"""Install and remove the git pre-commit hook that runs `memvault check --staged`.

The hook goes where git looks for hooks (`git rev-parse --git-path hooks`, which honours
`core.hooksPath`). A pre-commit hook already there is not clobbered: it is renamed to
`pre-commit.before-memvault`, which memvault's hook runs first, and `--uninstall` puts it
back. The script itself is `hooks/pre-commit` in the repository, shipped in the package as
`memvault/hook_scripts/pre-commit`; installing fills in its settings block (the vault's
place in the repository and the Python that has memvault).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.errors import MemvaultError, Refused
from memvault.fsio import atomic_write
from memvault.gitio import merge_setup, not_in_repository, run_git

SCRIPT = Path(__file__).resolve().parents[1] / "hook_scripts" / "pre-commit"
MARKER = "memvault-hook v1"
MARKER_RE = re.compile(r"memvault-hook v\d+")
CHAINED = "pre-commit.before-memvault"


@dataclass
class HookResult:
    action: str  # installed | updated | uninstalled | absent
    path: Path
    chained: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "path": str(self.path), "chained": str(self.chained) if self.chained else None}

    def describe(self) -> str:
        if self.action == "absent":
            return f"no memvault pre-commit hook at {self.path}; nothing to remove"
        if self.action == "uninstalled":
            back = f"; restored the previous hook from {self.chained.name}" if self.chained else ""
            return f"removed the memvault pre-commit hook from {self.path}{back}"
        kept = f" (the previous hook is kept as {self.chained.name} and runs first)" if self.chained else ""
        return f"{self.action} the memvault pre-commit hook at {self.path}{kept}"


def _rev_parse(root: Path, *args: str) -> str:
    """`git rev-parse ARGS` in `root`; a failure means there is no repository to hook into."""
    found = run_git(["rev-parse", *args], root, check=False)
    if not found.ok:
        raise not_in_repository(found, "`git init` it first")
    return found.text.removesuffix("\n")  # a folder name may end in a space


def hooks_dir(root: Path) -> Path:
    """Where git runs hooks from for the repository holding `root`."""
    return (root / _rev_parse(root, "--git-path", "hooks")).resolve()


def is_ours(path: Path) -> bool:
    try:
        return bool(MARKER_RE.search(path.read_text(encoding="utf-8", errors="replace")[:400]))
    except OSError:
        return False


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def script_text(vault_rel: str, python: str) -> str:
    """The hook script with its settings block filled in."""
    try:
        text = SCRIPT.read_text(encoding="utf-8")
    except OSError:
        raise MemvaultError(f"hook script missing at {SCRIPT}; reinstall memvault") from None
    text = re.sub(r"^MEMVAULT_HOOK_VAULT=.*$", lambda _: f"MEMVAULT_HOOK_VAULT={_quote(vault_rel)}", text, count=1, flags=re.M)
    return re.sub(r"^MEMVAULT_HOOK_PYTHON=.*$", lambda _: f"MEMVAULT_HOOK_PYTHON={_quote(python)}", text, count=1, flags=re.M)


def install(root: Path, *, python: str | None = None) -> HookResult:
    """Install (or update) the hook for the vault at `root`, chaining an existing one."""
    root = Path(root).resolve()
    top = Path(_rev_parse(root, "--show-toplevel")).resolve()
    vault_rel = root.relative_to(top).as_posix() if root != top else "."
    folder = hooks_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    target, chained = folder / "pre-commit", folder / CHAINED
    action = "installed"
    if target.is_symlink() or target.exists():
        if is_ours(target) and not target.is_symlink():
            action = "updated"
        elif chained.exists() or chained.is_symlink():
            raise Refused(
                f"{target} is not memvault's hook and {chained} already exists; "
                "move one of them away, then install again"
            )
        else:
            os.replace(target, chained)
    atomic_write(target, script_text(vault_rel, python or sys.executable), mode=0o755)
    merge_setup.install(root, python=python, shared=False)  # the merge driver is this clone's too
    return HookResult(action, target, chained if chained.exists() or chained.is_symlink() else None)


def uninstall(root: Path) -> HookResult:
    """Remove memvault's hook and put back the hook it had chained, if any."""
    folder = hooks_dir(Path(root).resolve())
    target, chained = folder / "pre-commit", folder / CHAINED
    if not is_ours(target) or target.is_symlink():
        return HookResult("absent", target)
    target.unlink()
    if chained.exists() or chained.is_symlink():
        os.replace(chained, target)
        return HookResult("uninstalled", target, chained)
    return HookResult("uninstalled", target)


def status(root: Path) -> dict[str, Any]:
    folder = hooks_dir(Path(root).resolve())
    target, chained = folder / "pre-commit", folder / CHAINED
    return {
        "path": str(target),
        "installed": is_ours(target) and not target.is_symlink(),
        "chained": str(chained) if chained.exists() else None,
    }
