"""Finding the vault from the current folder: memvault.toml first, then memory not yet adopted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.errors import VaultNotFound
from memvault.parsed import ENV_VAR, discover, looks_like_memory

from .conftest import git

DAY = "# 2026-02-01 - Setup\n\n## Was passiert ist\n- Gateway neu gestartet\n\n## 09:15 - Decision\nKeep the nightly build\n"


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def workspace(root: Path, *, memory_md: bool = True, day: str = "memory/2026-02-01.md") -> Path:
    """An agent workspace as found: dated logs (one in the archive) and MEMORY.md, no memvault.toml."""
    (root / day).parent.mkdir(parents=True, exist_ok=True)
    (root / day).write_text(DAY)
    (root / "memory" / "archive").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "archive" / "2026-01-15.md").write_text("# 2026-01-15\n\n- old notes\n")
    if memory_md:
        (root / "MEMORY.md").write_text("# Long-Term Memory\n\n## Projects\n- Atlas\n")
    return root


def test_inside_an_unadopted_workspace_any_subfolder_finds_it(tmp_path: Path):
    ws = workspace(tmp_path / "ws")
    for here in (ws, ws / "memory", ws / "memory" / "archive"):
        assert discover(cwd=here) == ws.resolve()


def test_the_cli_from_the_archive_folder_lists_the_workspace(tmp_path: Path, runner, monkeypatch):
    ws = workspace(tmp_path / "ws")
    monkeypatch.chdir(ws / "memory" / "archive")
    result = runner.invoke(cli, ["list", "--json"])
    assert result.exit_code == 0, result.output
    assert "Keep the nightly build" in result.output


def test_a_git_top_with_dated_logs_counts_without_memory_md(tmp_path: Path):
    ws = workspace(tmp_path / "ws", memory_md=False, day="memory/2026/2026-02-01.md")
    (ws / "memory" / "archive" / "2026-01-15.md").unlink()
    assert not looks_like_memory(ws)  # no MEMORY.md, no repository: not enough evidence
    git(ws, "init", "-q")
    assert discover(cwd=ws / "memory" / "2026") == ws.resolve()  # a log one folder down counts


def test_a_stray_memory_folder_of_other_notes_does_not_capture_the_home_folder(tmp_path: Path):
    home = tmp_path / "home2"
    (home / "memory").mkdir(parents=True)
    (home / "memory" / "grocery list.md").write_text("- milk\n")
    (home / "MEMORY.md").write_text("# things\n")
    git(home, "init", "-q")
    (home / "code" / "project").mkdir(parents=True)
    with pytest.raises(VaultNotFound, match="memvault adopt"):
        discover(cwd=home / "code" / "project")


def test_a_dated_log_must_be_a_file_in_a_real_folder(tmp_path: Path):
    real = workspace(tmp_path / "real")
    other = tmp_path / "other"
    other.mkdir()
    (other / "MEMORY.md").write_text("# x\n")
    os.symlink(real / "memory", other / "memory")
    assert not looks_like_memory(other)
    odd = tmp_path / "odd"
    (odd / "memory" / "2026-02-01.md").mkdir(parents=True)  # a folder with a log's name
    (odd / "MEMORY.md").write_text("# x\n")
    assert not looks_like_memory(odd)


def test_memvault_toml_above_wins_over_a_nearer_unadopted_workspace(tmp_path: Path):
    (tmp_path / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    ws = workspace(tmp_path / "agents" / "ws")
    assert discover(cwd=ws / "memory") == tmp_path.resolve()


def test_the_nearest_workspace_wins(tmp_path: Path):
    outer = workspace(tmp_path / "outer")
    inner = workspace(outer / "projects" / "inner")
    assert discover(cwd=inner / "memory" / "archive") == inner.resolve()
    assert discover(cwd=outer / "projects") == outer.resolve()
