"""The pre-commit hook in real repositories: refuses bad commits, chains, uninstalls cleanly."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memvault.check import hook as githook
from memvault.errors import MemvaultError

from .helpers_check import commit, git, git_repo, hook_env, run_memvault, write_vault

REPO_HOOK = Path(__file__).parent.parent / "hooks" / "pre-commit"
GOOD = "# 2026-02-21\n\n## 09:15 - Observation\nUser mentioned a new project called Atlas\n"
BAD = "# 2026-02-21\n\n## 25:15 - Observation\nUser mentioned a new project called Atlas\n"
OLD_HOOK = "#!/bin/sh\necho ran >> \"$(git rev-parse --show-toplevel)/.old-hook-ran\"\nexit ${OLD_HOOK_STATUS:-0}\n"


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def installed_repo(tmp_path: Path) -> Path:
    repo = git_repo(tmp_path / "v")
    result = run_memvault(repo, "hook", "install")
    assert result.returncode == 0, result.stderr
    return repo


def add(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    git(repo, "add", rel)


def test_the_script_is_posix_sh_and_shipped_in_the_package():
    assert subprocess.run(["sh", "-n", str(REPO_HOOK)]).returncode == 0
    assert githook.SCRIPT.read_bytes() == REPO_HOOK.read_bytes()
    text = REPO_HOOK.read_text()
    assert text.startswith("#!/bin/sh\n") and "bash" not in text and "[[" not in text
    assert "--no-verify" in text.split("status=$?")[1]  # the bypass is explained on failure...
    assert not [line for line in text.splitlines() if line.lstrip().startswith("#") and "no-verify" in line]
    assert all("no-verify" not in line or "echo" in line for line in text.splitlines())  # ...and only there
    assert "check --staged" in text


def test_install_writes_an_executable_hook_with_its_settings(tmp_path: Path):
    repo = installed_repo(tmp_path)
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert hook.stat().st_mode & stat.S_IXUSR
    text = hook.read_text()
    assert "MEMVAULT_HOOK_VAULT='.'" in text and f"MEMVAULT_HOOK_PYTHON='{sys.executable}'" in text
    assert "installed at" in run_memvault(repo, "hook", "status").stdout


def test_bad_entry_commit_is_refused_with_the_message(tmp_path: Path):
    repo = installed_repo(tmp_path)
    before = head(repo)
    add(repo, "memory/2026-02-21.md", BAD)
    result = commit(repo)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "memory/2026-02-21.md:3:1: MV004 error: invalid time 25:15" in out
    assert "commit refused" in out and "git commit --no-verify" in out
    assert head(repo) == before


def test_good_entry_commit_passes_and_says_nothing_about_bypassing(tmp_path: Path):
    repo = installed_repo(tmp_path)
    before = head(repo)
    add(repo, "memory/2026-02-21.md", GOOD)
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--no-verify" not in result.stdout + result.stderr
    assert head(repo) != before


def test_a_timed_title_passes_and_a_slip_of_a_type_is_refused(tmp_path: Path):
    repo = installed_repo(tmp_path)
    add(repo, "memory/2026-02-21.md", "# 2026-02-21\n\n## 14:30 - Standup with the team\n- Priya \u00fcbernimmt Onboarding\n")
    assert commit(repo).returncode == 0
    add(repo, "memory/2026-02-22.md", "# 2026-02-22\n\n## 09:00 - Decison: Hetzner\nStaging zieht um\n")
    result = commit(repo)
    assert result.returncode != 0 and "MV005" in result.stdout + result.stderr


def test_commit_is_judged_by_what_is_staged(tmp_path: Path):
    repo = installed_repo(tmp_path)
    add(repo, "memory/2026-02-21.md", BAD)
    (repo / "memory" / "2026-02-21.md").write_text(GOOD)  # fixed, but not staged
    assert commit(repo).returncode != 0
    add(repo, "memory/2026-02-21.md", GOOD)
    (repo / "memory" / "2026-02-21.md").write_text(BAD)  # broken again, not staged
    assert commit(repo).returncode == 0
    assert git(repo, "show", "HEAD:memory/2026-02-21.md").stdout == GOOD


@pytest.mark.parametrize("how", [["-a"], ["memory/2026-02-21.md"]])
def test_commit_all_and_commit_path_use_git_temporary_index(how: list[str], tmp_path: Path):
    repo = installed_repo(tmp_path)
    add(repo, "memory/2026-02-21.md", GOOD)
    assert commit(repo).returncode == 0
    (repo / "memory" / "2026-02-21.md").write_text(BAD)  # modified, not added: commit -a/path stages it
    result = commit(repo, *how)
    assert result.returncode != 0 and "MV004" in result.stdout + result.stderr


def test_secret_commit_is_refused_without_echo(tmp_path: Path):
    repo = installed_repo(tmp_path)
    token = "ghp_" + "Zk3Qp9Lm2Xv8Rt5Yw7Nb4Hc6Jd1Fg0Sa2Ty3Ui"
    add(repo, "memory/2026-02-21.md", GOOD + f"token {token}\n")
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "MV503" in out and "GitHub token" in out
    assert token not in out and token[4:] not in out


def test_install_chains_an_existing_hook_and_uninstall_restores_it(tmp_path: Path):
    repo = git_repo(tmp_path / "v")
    old = repo / ".git" / "hooks" / "pre-commit"
    old.write_text(OLD_HOOK)
    old.chmod(0o750)
    result = run_memvault(repo, "hook", "install")
    assert result.returncode == 0 and "pre-commit.before-memvault" in result.stdout
    chained = repo / ".git" / "hooks" / "pre-commit.before-memvault"
    assert chained.read_text() == OLD_HOOK
    add(repo, "memory/2026-02-21.md", GOOD)
    assert commit(repo).returncode == 0
    assert (repo / ".old-hook-ran").read_text() == "ran\n"
    # the old hook's verdict still counts
    add(repo, "memory/2026-02-22.md", GOOD.replace("2026-02-21", "2026-02-22"))
    env = dict(hook_env(), OLD_HOOK_STATUS="3")
    refused = subprocess.run(["git", "commit", "-m", "x"], cwd=repo, capture_output=True, text=True, env=env)
    assert refused.returncode != 0
    # and ours runs after it: a bad entry is refused even when the old hook passes
    add(repo, "memory/2026-02-23.md", BAD.replace("2026-02-21", "2026-02-23"))
    assert "MV004" in commit(repo).stderr  # git shows a hook's output on stderr
    result = run_memvault(repo, "hook", "install", "--uninstall")
    assert result.returncode == 0 and "restored the previous hook" in result.stdout
    assert old.read_text() == OLD_HOOK and stat.S_IMODE(old.stat().st_mode) == 0o750
    assert not chained.exists()


def test_reinstall_updates_in_place_and_keeps_the_chain(tmp_path: Path):
    repo = git_repo(tmp_path / "v")
    (repo / ".git" / "hooks" / "pre-commit").write_text(OLD_HOOK)
    first = githook.install(repo)
    second = githook.install(repo)
    assert (first.action, second.action) == ("installed", "updated")
    assert second.chained is not None and second.chained.read_text() == OLD_HOOK


def test_install_refuses_to_clobber_when_both_slots_are_taken(tmp_path: Path):
    repo = git_repo(tmp_path / "v")
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(OLD_HOOK)
    (hooks / "pre-commit.before-memvault").write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(MemvaultError, match="already exists"):
        githook.install(repo)
    assert (hooks / "pre-commit").read_text() == OLD_HOOK


def test_uninstall_without_our_hook_changes_nothing(tmp_path: Path):
    repo = git_repo(tmp_path / "v")
    (repo / ".git" / "hooks" / "pre-commit").write_text(OLD_HOOK)
    result = run_memvault(repo, "hook", "install", "--uninstall")
    assert result.returncode == 0 and "nothing to remove" in result.stdout
    assert (repo / ".git" / "hooks" / "pre-commit").read_text() == OLD_HOOK


def test_core_hooks_path_is_respected(tmp_path: Path):
    repo = git_repo(tmp_path / "v")
    git(repo, "config", "core.hooksPath", ".githooks")
    result = githook.install(repo)
    assert result.path == (repo / ".githooks" / "pre-commit").resolve()
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    add(repo, "memory/2026-02-21.md", BAD)
    assert commit(repo).returncode != 0
    githook.uninstall(repo)
    assert not (repo / ".githooks" / "pre-commit").exists()


def test_vault_in_a_subdirectory(tmp_path: Path):
    repo = git_repo(tmp_path / "repo", {"README.md": "project"})
    vault = write_vault(repo / "notes", {})
    result = run_memvault(vault, "hook", "install")
    assert result.returncode == 0
    assert "MEMVAULT_HOOK_VAULT='notes'" in (repo / ".git" / "hooks" / "pre-commit").read_text()
    add(repo, "notes/memory/2026-02-21.md", BAD)
    result = commit(repo)
    assert result.returncode != 0 and "memory/2026-02-21.md:3:1: MV004" in result.stderr
    add(repo, "notes/memory/2026-02-21.md", GOOD)
    assert commit(repo).returncode == 0
    # git hands the hook a relative GIT_INDEX_FILE for a plain commit, an absolute one for -a
    (repo / "notes" / "memory" / "2026-02-21.md").write_text(BAD)
    assert "MV004" in commit(repo, "-a").stderr


def test_hook_falls_back_to_the_installing_python_and_fails_closed_without_it(tmp_path: Path):
    repo = installed_repo(tmp_path)
    add(repo, "memory/2026-02-21.md", BAD)
    bare = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
    bare["PATH"] = "/usr/bin:/bin"
    result = subprocess.run(["git", "commit", "-m", "x"], cwd=repo, capture_output=True, text=True, env=bare)
    assert result.returncode != 0 and "MV004" in result.stderr
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(hook.read_text().replace(f"MEMVAULT_HOOK_PYTHON='{sys.executable}'", "MEMVAULT_HOOK_PYTHON=''"))
    result = subprocess.run(["git", "commit", "-m", "x"], cwd=repo, capture_output=True, text=True, env=bare)
    assert result.returncode != 0
    assert "memvault command was not found" in result.stderr and "--no-verify" in result.stderr


def test_init_installs_the_hook_by_default(tmp_path: Path):
    result = run_memvault(tmp_path, "init", "with")
    assert result.returncode == 0 and "installed the memvault pre-commit hook" in result.stdout
    assert githook.is_ours(tmp_path / "with" / ".git" / "hooks" / "pre-commit")
    assert run_memvault(tmp_path, "init", "without", "--no-hook").returncode == 0
    assert not (tmp_path / "without" / ".git" / "hooks" / "pre-commit").exists()
    result = run_memvault(tmp_path, "init", "nogit", "--no-git")
    assert result.returncode == 0 and "pre-commit" not in result.stdout


def test_hook_install_outside_git_is_a_clear_error(tmp_path: Path):
    vault = write_vault(tmp_path / "v", {})
    result = run_memvault(vault, "hook", "install")
    assert result.returncode == 1 and "not in a git repository" in result.stderr


@pytest.mark.slow
def test_a_built_wheel_ships_the_hook_script(tmp_path: Path):
    import zipfile

    root = REPO_HOOK.parent.parent
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("memvault-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert zf.read("memvault/hook_scripts/pre-commit") == REPO_HOOK.read_bytes()
