"""Helpers for the sync tests of the watcher and of `status`: a bare remote with two clones."""

from __future__ import annotations

from pathlib import Path

from memvault.sync.run import sync
from memvault.vault import Vault
from memvault.write.log import init_vault

from .conftest import git


def two_clones(tmp_path: Path, a: Path) -> tuple[Path, Path, Path]:
    """(clone A, clone B, the bare remote): A made the vault in `a` and pushed it, B cloned it."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    init_vault(a, timezone="UTC")
    git(a, "remote", "add", "origin", str(remote))
    sync(Vault.open(a))
    git(tmp_path, "clone", "-q", str(remote), "b")
    return a, tmp_path / "b", remote


def prefers(root: Path, what: str) -> None:
    """Write `what` as the prose of MEMORY.md's "User Preferences" section."""
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    head, _, rest = text.partition("## User Preferences\n")
    rest = rest.split("## Active Projects", 1)[1]
    (root / "MEMORY.md").write_text(f"{head}## User Preferences\n\n{what}\n\n## Active Projects{rest}",
                                    encoding="utf-8")


def stop_for_prose(a: Path, b: Path) -> None:
    """MEMORY.md prose changed on A (pushed) and on B (not yet committed): B's next sync stops."""
    prefers(a, "Trinkt morgens Tee.")
    git(a, "commit", "-qam", "tea", "--no-verify")  # (A's check hook has nothing to say: faster without)
    sync(Vault.open(a))
    git(b, "pull", "-q")
    prefers(a, "Trinkt morgens grünen Tee, nie Kaffee.")
    git(a, "commit", "-qam", "green tea", "--no-verify")
    sync(Vault.open(a))
    prefers(b, "Drinks black tea in the morning (changed on the laptop).")
