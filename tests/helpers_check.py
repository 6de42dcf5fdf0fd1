"""Shared helpers for the check/hook tests: tiny vaults, git repos, running the CLI for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from memvault.check.report import CheckReport
from memvault.check.runner import check_vault
from memvault.vault import Vault

DATA = Path(__file__).parent / "data"
CHECKS = DATA / "checks"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TOML = '[vault]\ntimezone = "UTC"\n'


def write_vault(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write files (vault-relative path -> text or bytes) under root, with a default memvault.toml."""
    root.mkdir(parents=True, exist_ok=True)
    if "memvault.toml" not in files and not (root / "memvault.toml").exists():
        (root / "memvault.toml").write_text(TOML, encoding="utf-8")
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    return root


def copy_fixture(code: str, kind: str, dest: Path) -> Path:
    shutil.copytree(CHECKS / code / kind, dest, dirs_exist_ok=True)
    return write_vault(dest, {})


def run_check(root: Path, *paths: str, staged: bool = False) -> CheckReport:
    return check_vault(Vault.open(root), paths, staged=staged, now=NOW)


def codes(report: CheckReport) -> list[str]:
    return [p.code for p in report.problems]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc


def git_repo(root: Path, files: dict[str, str | bytes] | None = None, *, commit: bool = True) -> Path:
    """A real git repository holding a vault (or anything) at root."""
    write_vault(root, files or {})
    git(root, "init", "-q")
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", "initial")
    return root


def memvault_cmd() -> list[str]:
    """The memvault of this checkout, run as a real process."""
    return [sys.executable, "-m", "memvault"]


def run_memvault(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("MEMVAULT_VAULT", None)
    return subprocess.run([*memvault_cmd(), *args], cwd=cwd, capture_output=True, text=True, env=env)


def hook_env() -> dict[str, str]:
    """Environment for `git commit` running the hook: this interpreter's memvault first on PATH."""
    env = dict(os.environ)
    env.pop("MEMVAULT_VAULT", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def commit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-m", "test", *args], cwd=cwd, capture_output=True, text=True,
                          env=hook_env())
