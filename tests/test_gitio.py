"""The git layer (memvault/gitio): errors, environment, decoding, with real git in tmp repos."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memvault.errors import GitError
from memvault.gitio import (
    FALLBACK_IDENTITY,
    GitProcess,
    decode,
    fallback_identity,
    git_env,
    read_batch,
    run_git,
)
from memvault.gitio.run import words
from memvault.history.gitrepo import GitRepo
from memvault.write.log import init_vault

from .conftest import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.md").write_text("alpha\n")
    git(root, "add", "a.md")
    git(root, "commit", "-qm", "first")
    return root


def test_the_error_names_the_command_the_folder_and_gits_own_words(repo: Path):
    said = subprocess.run(["git", "rev-parse", "--verify", "no-such-rev"], cwd=repo, capture_output=True, text=True)
    with pytest.raises(GitError) as caught:
        run_git(["rev-parse", "--verify", "no-such-rev"], repo)
    message = str(caught.value)
    assert message.startswith(f"git rev-parse --verify no-such-rev failed in {repo}: ")
    assert said.stderr.strip() and said.stderr.strip() in message


def test_a_failure_allowed_by_the_caller_is_a_result(repo: Path):
    found = run_git(["grep", "-q", "nowhere"], repo, ok=(0, 1))
    assert found.returncode == 1 and not found.ok
    assert run_git(["rev-parse", "--verify", "-q", "nope"], repo, check=False).returncode != 0


def test_gits_words_keep_the_first_and_last_lines_without_hints():
    said = b"hint: try this\n" + b"".join(b"line %d\n" % i for i in range(20)) + b"fatal: the reason\n"
    text = words(said)
    assert "hint" not in text
    assert text.startswith("line 0 | line 1") and text.endswith("line 19 | fatal: the reason")
    assert text.count(" | ") == 8  # 8 lines and the ellipsis between them
    assert words(b"", b"nothing to commit, working tree clean\n") == "nothing to commit, working tree clean"


def test_missing_git_is_a_clear_error(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(GitError, match=r"^git is not installed or not on PATH .*git status"):
        run_git(["status"], repo)
    with pytest.raises(GitError, match="git is not installed"):
        GitProcess(["cat-file", "--batch"], repo)
    with pytest.raises(GitError, match="git is not installed"):
        init_vault(tmp_path / "new")
    assert GitRepo.find(repo) is None  # event-time queries go on without git


def test_a_missing_folder_is_not_taken_for_missing_git(tmp_path: Path):
    with pytest.raises(GitError, match=r"^cannot run git status in .*gone"):
        run_git(["status"], tmp_path / "gone")


def test_a_command_that_hangs_is_stopped_at_the_timeout(repo: Path):
    with pytest.raises(GitError, match=r"git nap did not finish within 0.5s"):
        run_git(["-c", "alias.nap=!sleep 30", "nap"], repo, timeout=0.5)


def test_git_never_reads_memvaults_stdin(repo: Path):
    # `hash-object --stdin` would wait for a terminal's stdin; it gets /dev/null instead.
    empty = run_git(["hash-object", "--stdin"], repo).text.strip()
    assert empty == run_git(["hash-object", "--stdin"], repo, input=b"").text.strip()


def test_non_utf8_file_names_round_trip(repo: Path):
    raw = b"caf\xe9 \xff.md"  # Latin-1, not UTF-8
    (repo / os.fsdecode(raw)).write_bytes(b"latin\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "latin-1 name")
    names = [n for n in run_git(["ls-files", "-z"], repo).text.split("\0") if n]
    odd = next(n for n in names if n != "a.md")
    assert os.fsencode(odd) == raw and (repo / odd).read_bytes() == b"latin\n"
    assert run_git(["ls-files", "-z", "--", odd], repo).text == odd + "\0"  # the name goes back to git
    assert read_batch(repo, [f":{odd}", "HEAD:a.md", ":missing.md"]) == [b"latin\n", b"alpha\n", None]
    assert decode(raw) == odd


def test_a_hooks_relative_git_variables_are_made_absolute(repo: Path, monkeypatch: pytest.MonkeyPatch):
    vault = repo / "vault"
    vault.mkdir()
    (vault / "b.md").write_text("beta\n")
    # What git gives a hook: variables relative to the top, where the hook runs.
    git(repo, "add", "vault/b.md", env={"GIT_INDEX_FILE": str(repo / ".git" / "next-index")})
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GIT_DIR", ".git")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/next-index")
    env = git_env()
    assert env["GIT_DIR"] == str(repo / ".git") and env["GIT_INDEX_FILE"] == str(repo / ".git" / "next-index")
    # Run from the vault's folder, below the top: git still finds that index.
    staged = run_git(["ls-files", "-z"], vault).text.split("\0")
    assert "vault/b.md" in staged
    assert run_git(["rev-parse", "--git-dir"], vault).text.strip() == str(repo / ".git")


def test_absolute_variables_and_extra_ones(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "x.git"))
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
    env = git_env({"GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00"})
    assert env["GIT_DIR"] == str(tmp_path / "x.git") and "GIT_INDEX_FILE" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_AUTHOR_DATE"].startswith("2026")


def test_a_commit_without_a_configured_identity_is_made_as_memvault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(key, raising=False)
    root = init_vault(tmp_path / "v", timezone="UTC")
    assert git(root, "log", "-1", "--format=%an <%ae> %cn").strip() == "memvault <memvault@localhost> memvault"
    assert fallback_identity(root) == FALLBACK_IDENTITY
    git(root, "config", "user.email", "me@example.com")
    assert fallback_identity(root) == ()


def test_a_long_lived_process_answers_and_closes(repo: Path):
    proc = GitProcess(["cat-file", "--batch"], repo)
    proc.stdin.write(b"HEAD:a.md\n")
    proc.stdin.flush()
    assert proc.stdout.readline().split()[1:] == [b"blob", b"6"]
    assert proc.stdout.read(7) == b"alpha\n\n"
    proc.close()
    assert not proc.alive()
    assert "exited with status 0" in str(proc.stopped())
