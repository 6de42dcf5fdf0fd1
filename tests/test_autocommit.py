"""Commit messages in entries, and commits that touch only vault Markdown (real git repos)."""

from __future__ import annotations

import os
import stat

import pytest

from memvault.errors import GitError
from memvault.sync.commit import commit_message, commit_vault, diff_events, parse_porcelain
from memvault.vault import Vault
from memvault.write.log import init_vault

from .conftest import git

DAY = "memory/2026-02-21.md"


def entry(hhmm: str, text: str, kind: str = "Observation") -> str:
    return f"## {hhmm} - {kind}\n{text}\n\n"


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def subjects(root) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def committed_files(root, rev="HEAD") -> set[str]:
    return set(git(root, "show", "--name-only", "--format=", rev).split())


@pytest.fixture
def vault(vault_dir):
    init_vault(vault_dir, timezone="UTC")
    return Vault.open(vault_dir)


def test_message_counts_entries_in_one_file(vault):
    write(vault.root, DAY, "# 2026-02-21\n\n" + entry("09:15", "Atlas") + entry("10:00", "B") + entry("11:00", "C"))
    done = commit_vault(vault.root, vault.config)
    assert done.message.splitlines()[0] == f"memvault: +3 entries in {DAY}"
    assert "+ 2026-02-21 09:15 observation: Atlas" in done.message
    assert committed_files(vault.root) == {DAY}
    assert subjects(vault.root)[0] == f"memvault: +3 entries in {DAY}"


def test_message_counts_notes_apart_from_entries(vault):
    write(vault.root, DAY, "# 2026-02-21 - Umzug\n\n" + entry("09:15", "Atlas")
          + "## Was passiert ist\n- Kartons bestellt\n\n## Log\n- 14:30 Anruf beim Vermieter\n")
    done = commit_vault(vault.root, vault.config)
    assert done.message.splitlines()[0] == f"memvault: +1 entry, +3 notes in {DAY}"  # the title says more than a date
    assert "+ 2026-02-21 14:30 note: - 14:30 Anruf beim Vermieter" in done.message


def test_edits_removals_and_several_files(vault):
    write(vault.root, DAY, "# 2026-02-21\n\n" + entry("09:15", "Atlas") + entry("10:00", "B"))
    commit_vault(vault.root, vault.config)
    write(vault.root, DAY, "# 2026-02-21\n\n" + entry("09:15", "Atlas v2"))
    done = commit_vault(vault.root, vault.config)
    assert done.message.splitlines()[0] == f"memvault: 1 edited, -1 entry in {DAY}"
    write(vault.root, "memory/2026-02-22.md", "# 2026-02-22\n\n" + entry("08:00", "D"))
    (vault.root / DAY).unlink()
    done = commit_vault(vault.root, vault.config)
    subject, _, body = done.message.partition("\n\n")
    assert subject == "memvault: +1 entry, -1 entry in 2 files"
    assert f"deleted {DAY} (-1 entry)" in body and "+1 entry in memory/2026-02-22.md" in body
    assert committed_files(vault.root) == {DAY, "memory/2026-02-22.md"}


def test_only_vault_markdown_is_committed_and_other_staged_work_stays_staged(vault):
    write(vault.root, DAY, "# 2026-02-21\n\n" + entry("09:15", "Atlas"))
    write(vault.root, "notes.txt", "not memory")
    write(vault.root, ".memvault/index.db", "derived")
    write(vault.root, "memory/.2026-02-21.md.swp", "swap")
    (vault.root / "memvault.toml").write_text((vault.root / "memvault.toml").read_text() + "\n# edited\n")
    git(vault.root, "add", "memvault.toml")
    done = commit_vault(vault.root, vault.config)
    assert done.paths == (DAY,)
    assert committed_files(vault.root) == {DAY}
    assert "M  memvault.toml" in git(vault.root, "status", "--porcelain")  # still staged, not committed
    assert commit_vault(vault.root, vault.config) is None  # nothing left to commit


def test_ignored_markdown_is_respected(vault):
    (vault.root / ".gitignore").write_text("memory/private/\n")
    git(vault.root, "add", ".gitignore")
    git(vault.root, "commit", "-qm", "ignore private")
    write(vault.root, "memory/private/2026-02-21.md", "# 2026-02-21\n\n" + entry("09:00", "secret"))
    assert commit_vault(vault.root, vault.config) is None


def test_hooks_run_and_a_refused_commit_is_reported_and_kept(vault):
    hook = vault.root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    write(vault.root, DAY, "# 2026-02-21\n\n" + entry("09:15", "Atlas"))
    with pytest.raises(GitError, match="hook says no"):
        commit_vault(vault.root, vault.config)
    assert subjects(vault.root) == ["memvault: new vault"]
    os.unlink(hook)
    done = commit_vault(vault.root, vault.config)  # the retry still has the change
    assert done.message.startswith(f"memvault: +1 entry in {DAY}")


def test_not_a_repository_fails_clearly(vault_dir):
    init_vault(vault_dir, timezone="UTC", git=False)
    v = Vault.open(vault_dir)
    with pytest.raises(GitError, match="not in a git repository"):
        commit_vault(v.root, v.config)


def test_vault_in_a_subfolder_of_a_repository(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    init_vault(repo / "vault", timezone="UTC", git=False)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    v = Vault.open(repo / "vault")
    write(v.root, DAY, "# 2026-02-21\n\n" + entry("09:15", "Atlas"))
    done = commit_vault(v.root, v.config)
    assert done.paths == (DAY,)
    assert committed_files(repo) == {f"vault/{DAY}"}


def test_message_without_entry_changes_and_pure_helpers():
    assert commit_message([diff_events("MEMORY.md", "modified", [], [])]) == "memvault: edited MEMORY.md"
    assert commit_message([diff_events("memory/x.md", "added", [], [])]) == "memvault: new file memory/x.md"
    with pytest.raises(ValueError):
        commit_message([])
    out = "R  memory/new.md\0memory/old.md\0?? memory/n.md\0 D memory/d.md\0 M MEMORY.md\0"
    assert parse_porcelain(out) == [("A", "memory/new.md"), ("D", "memory/old.md"), ("A", "memory/n.md"),
                                    ("D", "memory/d.md"), ("M", "MEMORY.md")]


def test_commits_what_the_vault_selects_and_nothing_else(vault):
    """Issue 12: `[vault]` settings decide what `watch --commit` commits, as they decide what is read."""
    write(vault.root, "memvault.toml", '[vault]\ntimezone = "UTC"\nworkspace_files = true\nexclude = ["memory/drafts"]\n')
    git(vault.root, "add", "memvault.toml")
    git(vault.root, "commit", "-q", "-m", "settings")
    vault = Vault.open(vault.root)
    write(vault.root, "AGENTS.md", "# AGENTS.md\n\n" + entry("09:00", "Answer in German", "Decision"))
    write(vault.root, "README.md", "# readme\n")
    write(vault.root, "memory/drafts/halb.md", "# halb fertig\n")
    write(vault.root, "memory/projects/ideen.md", "# Ideen\n\n" + entry("10:00", "Regal bauen"))
    done = commit_vault(vault.root, vault.config)
    assert committed_files(vault.root) == {"AGENTS.md", "memory/projects/ideen.md"}
    assert "+ " in done.message and "Answer in German" in done.message and "Regal bauen" in done.message
    left = git(vault.root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(left) == [" M README.md", "?? memory/drafts/halb.md"]  # the template's README, an excluded draft


def test_a_file_removed_or_moved_with_git_itself_is_committed(vault_dir):
    root = init_vault(vault_dir, timezone="UTC")
    (root / "memory" / "2026-11-01.md").write_text("# 2026-11-01\n\n## 09:00 - Observation\nAlt\n", encoding="utf-8")
    (root / "memory" / "2026-11-02.md").write_text("# 2026-11-02\n\n## 09:00 - Observation\nZwei\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two days")
    git(root, "rm", "-q", "memory/2026-11-01.md")
    git(root, "mv", "memory/2026-11-02.md", "memory/2026-11-03.md")
    done = commit_vault(root, Vault.open(root).config)
    assert done is not None
    assert git(root, "status", "--porcelain") == ""
    assert [p for p in git(root, "ls-files", "memory").split() if p.endswith(".md")] == ["memory/2026-11-03.md"]
