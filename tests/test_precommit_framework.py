"""memvault as a hook of the pre-commit framework: manifest and example config are valid.

`pre-commit try-repo` builds a Python environment for the hook (about 15 s, offline when pip
has a local index), so the end-to-end run is marked slow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .helpers_check import git, git_repo

ROOT = Path(__file__).parent.parent
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
EXAMPLE = ROOT / "docs" / "pre-commit-config.example.yaml"


def pre_commit(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, capture_output=True, text=True,
                          env=env)


def test_manifest_is_valid_by_pre_commits_own_schema():
    result = pre_commit("validate-manifest", str(MANIFEST))
    assert result.returncode == 0, result.stdout + result.stderr
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    assert hook["id"] == "memvault-check" and hook["entry"] == "memvault check --staged"
    assert hook["pass_filenames"] is False


def test_example_config_is_valid_and_uses_the_hook():
    result = pre_commit("validate-config", str(EXAMPLE))
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(EXAMPLE.read_text())
    assert config["repos"][0]["hooks"] == [{"id": "memvault-check"}]


def test_manifest_runs_on_every_commit():
    # every staged file under the vault is scanned for secrets, whatever its name (issue 10, point 13)
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    assert hook["always_run"] is True and "files" not in hook


@pytest.mark.slow
def test_try_repo_refuses_a_bad_entry_and_passes_a_good_one(tmp_path: Path):
    if not (ROOT / ".git").exists():
        pytest.skip("needs the memvault repository checkout")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc-home"))
    env.pop("MEMVAULT_VAULT", None)
    vault = git_repo(tmp_path / "v")
    (vault / "memory").mkdir(exist_ok=True)
    (vault / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 25:00 - Observation\nbad time\n")
    git(vault, "add", "-A")
    bad = pre_commit("try-repo", str(ROOT), "memvault-check", cwd=vault, env=env)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "memory/2026-02-21.md:3:1: MV004 error" in bad.stdout
    (vault / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Observation\ngood\n")
    git(vault, "add", "-A")
    good = pre_commit("try-repo", str(ROOT), "memvault-check", cwd=vault, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
