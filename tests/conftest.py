"""Test isolation: every test gets its own vault directory, named by --vault and $MEMVAULT_VAULT."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point MEMVAULT_VAULT at an empty per-test directory; pin zone and git identity."""
    vault = tmp_path / "vault"
    vault.mkdir()
    monkeypatch.setenv("MEMVAULT_VAULT", str(vault))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    # `[semantic] model = "auto"` finds no installed model package: a developer's venv with the
    # semantic extra must not turn the suite's default searches hybrid (tests name their model)
    from memvault.semantic import models

    monkeypatch.setattr(models, "KNOWN", ())
    yield vault
    # The sample vaults are read, never written: a test that derives state in one (an index, the
    # said-again pairs) would change what the next test reads.
    stray = sorted(str(p.relative_to(DATA)) for p in DATA.glob("*/.memvault"))
    for p in DATA.glob("*/.memvault"):
        shutil.rmtree(p)
    assert not stray, f"this test wrote derived state into tests/data: {stray}"


@pytest.fixture
def vault_dir(isolated: Path) -> Path:
    return isolated


def copy_vault(name: str, dest: Path) -> Path:
    """Copy tests/data/<name> into dest (the test's vault directory)."""
    src = DATA / name
    for item in src.iterdir():
        target = dest / item.name
        if item.is_dir():
            shutil.copytree(item, target, dirs_exist_ok=True)
        else:
            shutil.copy2(item, target)
    return dest


@pytest.fixture
def sample_vault(isolated: Path) -> Path:
    return copy_vault("seed", isolated)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=full_env)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def plain_vault(root: Path, zone: str = "UTC") -> Path:
    """A vault of one entry: memory/2026-02-21.md, a 09:00 belief "User likes tea"."""
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "{zone}"\n')
    (root / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n")
    return root


@pytest.fixture
def week(vault_dir: Path) -> Path:
    """A week of daily logs written for curate (tests/data/curate_week)."""
    return copy_vault("curate_week", vault_dir)


@pytest.fixture
def over(vault_dir: Path) -> Path:
    """A vault whose MEMORY.md is over its budget (tests/data/curate_budget)."""
    return copy_vault("curate_budget", vault_dir)
