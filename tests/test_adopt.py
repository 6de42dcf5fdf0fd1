"""`memvault adopt` / `init --adopt`: memory that exists becomes a vault, and no file of it changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memvault.check import hook as githook
from memvault.check.changed import judge_mode
from memvault.check.runner import check_vault
from memvault.cli import cli
from memvault.config.core import Config
from memvault.search.index import search_vault
from memvault.vault import Vault
from memvault.write.adopt_report import entry_counts, files_by_kind

from .helpers_check import commit, git

TOKEN = "ghp_" + "Zk3Qp9Lm2Xv8Rt5Yw7Nb4Hc6Jd1Fg0Sa2Ty3Ui"
OLD = 1_600_000_000  # 2020-09-13: any write would move a file's mtime off it
FOREIGN_HOOK = "#!/bin/sh\n# the team's own checks\nexit 0\n"
WORKSPACE = {
    "MEMORY.md": "# Long-Term Memory\n\n## Projects\n- Atlas ships in March\n\n## Präferenzen\n- Kaffee schwarz\n",
    "memory/2026-02-01.md": (
        "# 2026-02-01 - Config & Setup Session\n\n## Was passiert ist\n- **Setup:** Gateway neu gestartet\n"
        "- 14:30 Token-Rotation besprochen\n\n## 25:99 - Belief\nThe nightly build is flaky\n\n"
        "## 10:00 - Feeling\nTired of the flaky build\n\n## 11:00 - Decision\nMove the nightly build to 02:00\n"),
    "memory/2026-02-02.md": (
        "# 2026-02-02\n\n### Build Action ✅\n1. Tests grün\n2. Release vorbereitet\n\n"
        "## 09:15 - Observation\nThe user prefers terse status updates\n\n```bash\nmake release\n```\n"),
    "memory/2026-02-05-memory-leak-incident.md": "# Memory leak incident\n\n- heap grew 2 GB overnight\n",
    "memory/archive/2026-01-15.md": "# 2026-01-15\n\n## 08:00 - Observation\nOld compacted notes\n",
    "memory/projects/ideas.md": "# Ideas\n\n- a kettle that tweets\n",
    "notes.txt": "not memory\n",
}


def make_workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    """An agent's workspace as it is found: files written over weeks, all dated long ago."""
    for rel, text in (files or WORKSPACE).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "memory" / "attachments").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "attachments" / "screen.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0binary")
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            os.utime(path, (OLD, OLD))
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside .git and .memvault: its bytes and its mtime in nanoseconds."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in root.rglob("*") if p.is_file() and not {".git", ".memvault"} & set(p.relative_to(root).parts)
    }


def adopt(runner, *args: str):
    result = runner.invoke(cli, ["adopt", *args])
    return result, (json.loads(result.output) if "--json" in args and result.output.startswith("{") else None)


def has_head(root: Path) -> bool:
    return git_ok(root, "rev-parse", "-q", "--verify", "HEAD")


def git_ok(root: Path, *args: str) -> bool:
    return git(root, *args, check=False).returncode == 0


def test_adopt_changes_no_existing_file_and_makes_the_vault(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    before = snapshot(ws)
    result, data = adopt(runner, str(ws), "--json", "--timezone", "Europe/Berlin")
    assert result.exit_code == 0, result.output
    after = snapshot(ws)
    assert {k: after[k] for k in before} == before  # bytes and mtimes, every file
    assert set(after) - set(before) == {"memvault.toml"}
    config = Config.load(ws / "memvault.toml")
    assert judge_mode(config) == "changed-lines" and config.timezone == "Europe/Berlin"
    assert (ws / ".git").is_dir() and not has_head(ws)  # a repository, nothing committed
    assert githook.status(ws)["installed"]
    assert git(ws, "status", "--porcelain", "--ignored", "--", ".memvault").stdout.startswith("!!")
    assert data["git"] == "initialized" and data["hook"]["action"] == "installed"


def test_the_report_counts_what_the_parsed_vault_holds(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    _, data = adopt(runner, str(ws), "--json")
    vault = Vault.open(ws)
    kinds = files_by_kind(vault.files)
    assert data["files"] == {kind: len(paths) for kind, paths in kinds.items()}
    assert data["files"]["memory"] == 1 and data["files"]["day"] == 2
    assert "memory/attachments/screen.png" not in sum(data["file_paths"].values(), [])
    counts = entry_counts(vault.events)
    assert (data["entries"], data["notes"], data["curated"]) == (counts["entries"], counts["notes"], counts["curated"])
    assert data["entries"] >= 3 and data["curated"] == 2
    found = check_vault(vault).problems
    by_code = {row["code"]: row for row in data["problems"]}
    assert {code: row["count"] for code, row in by_code.items()} == {
        code: sum(p.code == code for p in found) for code in {p.code for p in found}}
    assert by_code["MV004"]["examples"][0] == {"path": "memory/2026-02-01.md", "line": 7, "col": 1,
                                               "message": "invalid time 25:99 in '## 25:99 - Belief'; its text is read as a note"}
    assert all(len(row["examples"]) <= 3 for row in data["problems"])
    assert data["errors"] == sum(p.severity == "error" for p in found)
    assert data["indexed"] == len(vault.events)
    hits = search_vault(vault, "terse status updates", refresh=False)  # the index adopt built
    assert hits and hits[0].event.file == "memory/2026-02-02.md"


def test_the_text_report_names_files_entries_problems_and_next_steps(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    result, _ = adopt(runner, str(ws))
    out = result.output
    assert result.exit_code == 0, out
    assert f"adopted {ws.resolve()}: wrote memvault.toml; no existing file was changed" in out
    assert "2 day files" in out and "1 MEMORY.md" in out and "2 MEMORY.md bullets" in out
    assert "MV004 error" in out and "memory/2026-02-01.md:7:1: invalid time 25:99" in out
    assert "git: initialized a new repository" in out and "hook: installed" in out
    assert "memory files are not committed yet" in out and "git commit --no-verify" in out


def test_a_folder_with_memvault_toml_is_refused_untouched(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    (ws / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    before = snapshot(ws)
    result, _ = adopt(runner, str(ws))
    assert result.exit_code == 1 and "already has memvault.toml" in result.output
    assert snapshot(ws) == before and not (ws / ".git").exists()


def test_a_bad_timezone_is_refused_before_anything_is_written(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    before = snapshot(ws)
    result, _ = adopt(runner, str(ws), "--timezone", "Mars/Olympus")
    assert result.exit_code == 1 and "Mars/Olympus" in result.output
    assert snapshot(ws) == before and not (ws / ".git").exists()


def test_a_folder_without_memory_is_refused(tmp_path: Path, runner):
    empty = tmp_path / "empty"
    (empty / "docs").mkdir(parents=True)
    result, _ = adopt(runner, str(empty))
    assert result.exit_code == 1 and "nothing to adopt" in result.output
    assert not (empty / "memvault.toml").exists()
    result, _ = adopt(runner, str(tmp_path / "missing"))
    assert result.exit_code == 1 and not (tmp_path / "missing").exists()


def test_an_existing_repository_keeps_its_history_its_hook_and_the_persons_staged_work(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "agent memory")
    head = git(ws, "rev-parse", "HEAD").stdout
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(FOREIGN_HOOK)
    hook.chmod(0o755)
    (ws / "todo.md").write_text("half-done\n")
    git(ws, "add", "todo.md")
    result, data = adopt(runner, str(ws), "--json")
    assert result.exit_code == 0, result.output
    assert git(ws, "rev-parse", "HEAD").stdout == head
    assert hook.read_text() == FOREIGN_HOOK and not (hook.parent / githook.CHAINED).exists()
    assert data["hook"]["action"] == "kept" and "memvault hook install" in data["hook"]["message"]
    assert data["git"] == "existing" and data["uncommitted"] == []
    assert git(ws, "diff", "--cached", "--name-only").stdout.split() == ["todo.md"]
    assert not any("not committed yet" in step for step in data["next"])


def test_a_workspace_in_a_subfolder_uses_the_enclosing_repository(tmp_path: Path, runner):
    repo = tmp_path / "repo"
    ws = make_workspace(repo / "agent")
    git(repo, "init", "-q")
    result, data = adopt(runner, str(ws), "--json")
    assert result.exit_code == 0, result.output
    assert data["repository"] == str(repo.resolve()) and not (ws / ".git").exists()
    assert "MEMVAULT_HOOK_VAULT='agent'" in (repo / ".git" / "hooks" / "pre-commit").read_text()


def test_commit_makes_a_baseline_of_the_memory_files_only(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    result, data = adopt(runner, str(ws), "--commit", "--json")
    assert result.exit_code == 0, result.output
    tracked = git(ws, "ls-tree", "-r", "--name-only", "HEAD").stdout.split("\n")[:-1]
    assert sorted(tracked) == sorted(["memvault.toml", *Vault.open(ws).files])
    assert "notes.txt" not in tracked and data["commit"] == git(ws, "rev-parse", "HEAD").stdout.strip()
    assert data["uncommitted"] == [] and data["commit_refused"] is None


def test_after_adopting_the_real_hook_lets_an_append_through_and_refuses_a_bad_entry(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    assert adopt(runner, str(ws), "--commit")[0].exit_code == 0
    day = ws / "memory" / "2026-02-01.md"
    with day.open("a") as fh:
        fh.write("- 16:10 Build läuft wieder\n")
    git(ws, "add", "-A")
    ok = commit(ws)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    with day.open("a") as fh:
        fh.write("\n## 25:99 - Belief\nThe deploy moved\n")
    git(ws, "add", "-A")
    refused = commit(ws)
    assert refused.returncode != 0 and "MV004" in refused.stdout + refused.stderr


def test_commit_is_refused_when_the_memory_holds_a_secret(tmp_path: Path, runner):
    files = dict(WORKSPACE, **{"memory/2026-02-03.md": f"# 2026-02-03\n\n- pushed with {TOKEN}\n"})
    ws = make_workspace(tmp_path / "ws", files)
    result, data = adopt(runner, str(ws), "--commit", "--json")
    assert result.exit_code == 1
    assert data["commit"] is None and "memory/2026-02-03.md:3:15 MV503" in data["commit_refused"]
    assert data["secrets"] == [{"path": "memory/2026-02-03.md", "line": 3, "col": 15, "code": "MV503"}]
    assert not has_head(ws) and (ws / "memvault.toml").is_file() and data["hook"]["action"] == "installed"
    assert TOKEN not in result.output


SECRET_DAY = f"# 2026-02-03\n\n- pushed with {TOKEN}\n- wifi: password is Sommer2024!\n"


@pytest.mark.parametrize("flags", [["--commit"], []], ids=["commit", "no-commit"])
def test_with_secrets_found_the_next_steps_say_remove_them_and_never_skip_the_hook(tmp_path: Path, runner, flags):
    # QA: in a folder without git, `adopt --commit` refused for a secret, then its next steps
    # said `git add … && git commit --no-verify`, which would have committed the secret.
    ws = make_workspace(tmp_path / "ws", dict(WORKSPACE, **{"memory/2026-02-03.md": SECRET_DAY}))
    result, _ = adopt(runner, str(ws), *flags)
    out = result.output
    assert result.exit_code == (1 if flags else 0), out
    steps = out.split("\nnext:\n", 1)[1]
    assert "--no-verify" not in steps and "Sommer2024" not in out and TOKEN not in out
    first = steps.strip().splitlines()[0]
    assert first.startswith("remove the 2 secrets first")
    assert "memory/2026-02-03.md:3:15 MV503" in first and "memory/2026-02-03.md:4:" in first
    assert "git commit -m 'memvault: adopt existing memory'" in steps  # through the hook, which scans again
    # ... and that commit, run as the steps say after the secrets are gone, is refused while one stays
    (ws / "memory" / "2026-02-03.md").write_text("# 2026-02-03\n\n- wifi: password is Sommer2024!\n", encoding="utf-8")
    git(ws, "add", "memvault.toml", "MEMORY.md", "memory")
    refused = commit(ws)
    assert refused.returncode != 0 and "MV507" in refused.stdout + refused.stderr and not has_head(ws)


def test_without_secrets_the_baseline_commit_may_skip_the_hook(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    result, data = adopt(runner, str(ws))
    assert data is None and "remove the" not in result.output
    assert "(the secret scan found none): git add memvault.toml MEMORY.md memory && git commit --no-verify" in result.output


def test_the_report_says_which_timezone_it_chose(tmp_path: Path, runner, monkeypatch):
    monkeypatch.setenv("TZ", "America/Sao_Paulo")
    result, data = adopt(runner, str(make_workspace(tmp_path / "ws")))
    assert ("timezone: America/Sao_Paulo (from this machine; set [vault] timezone in memvault.toml if your logs "
            "use another)") in result.output
    result, data = adopt(runner, str(make_workspace(tmp_path / "ws2")), "--timezone", "Europe/Berlin", "--json")
    assert data["timezone"] == "Europe/Berlin"
    result, _ = adopt(runner, str(make_workspace(tmp_path / "ws3")), "--timezone", "Europe/Berlin")
    assert "timezone: Europe/Berlin (from --timezone" in result.output


def test_counts_are_singular_and_plural_and_examples_on_one_line_differ_by_column(tmp_path: Path, runner):
    # QA: "1 topic files", and two findings on one line printed as two identical lines.
    other = "ghp_" + TOKEN[4:][::-1]
    files = {"memory/2026-02-03.md": "# 2026-02-03\n\n## 25:99 - Belief\nflaky\n",
             "memory/2026-02-05-incident.md": f"# Incident\n\n- rotated {TOKEN} to {other}\n"}
    result, _ = adopt(runner, str(make_workspace(tmp_path / "ws", files)))
    out = result.output
    assert "files: 2 (1 day file, 1 topic file)" in out
    assert "found: 0 typed entries, 2 notes, 0 MEMORY.md bullets" in out
    assert "problems: 3 errors, 0 warnings" in out and "MV004 error        1  " in out
    examples = [line.strip() for line in out.splitlines() if line.startswith("      memory/2026-02-05-incident.md:3:")]
    assert [e.split(": ", 1)[0] for e in examples] == ["memory/2026-02-05-incident.md:3:11",
                                                       f"memory/2026-02-05-incident.md:3:{15 + len(TOKEN)}"]
    assert "1 memory file" not in out and "2 memory files are not committed yet" not in out  # secrets: no such step


def test_no_git_makes_no_repository_and_no_hook(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    result, data = adopt(runner, str(ws), "--no-git", "--json")
    assert result.exit_code == 0 and data["git"] == "none" and data["hook"] == {}
    assert not (ws / ".git").exists() and (ws / "memvault.toml").is_file()
    ws2 = make_workspace(tmp_path / "ws2")
    result, data = adopt(runner, str(ws2), "--no-git", "--commit", "--json")
    assert result.exit_code == 1 and "--commit needs git" in data["commit_refused"]


def test_no_hook_installs_none(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    result, data = adopt(runner, str(ws), "--no-hook", "--json")
    assert result.exit_code == 0 and data["hook"]["action"] == "skipped"
    assert not githook.status(ws)["installed"]


@pytest.mark.parametrize("ignore, state", [("*.log\n", "suggest"), (".memvault/\n", "ignored")])
def test_the_persons_gitignore_is_never_edited(tmp_path: Path, runner, ignore: str, state: str):
    ws = make_workspace(tmp_path / "ws", dict(WORKSPACE, **{".gitignore": ignore}))
    result, data = adopt(runner, str(ws), "--json")
    assert result.exit_code == 0 and (ws / ".gitignore").read_text() == ignore
    assert data["gitignore"] == state
    assert any(".memvault/" in step for step in data["next"]) == (state == "suggest")
    assert ".memvault" not in git(ws, "status", "--porcelain", "--untracked-files=all").stdout


def test_init_adopt_is_the_same_call(tmp_path: Path, runner):
    ws = make_workspace(tmp_path / "ws")
    before = snapshot(ws)
    result = runner.invoke(cli, ["init", "--adopt", str(ws), "--no-hook"])
    assert result.exit_code == 0, result.output
    assert "adopted" in result.output and {k: v for k, v in snapshot(ws).items() if k in before} == before
    assert judge_mode(Config.load(ws / "memvault.toml")) == "changed-lines"
    assert not githook.status(ws)["installed"]
    both = runner.invoke(cli, ["init", str(tmp_path / "x"), "--adopt", str(ws)])
    assert both.exit_code == 2 and "not both" in both.output


def test_adopting_from_inside_the_workspace(tmp_path: Path, runner, monkeypatch):
    ws = make_workspace(tmp_path / "ws")
    monkeypatch.delenv("MEMVAULT_VAULT")
    monkeypatch.chdir(ws)
    result, _ = adopt(runner)
    assert result.exit_code == 0, result.output
    assert (ws / "memvault.toml").is_file()
    monkeypatch.chdir(ws / "memory" / "archive")
    listed = runner.invoke(cli, ["list"])
    assert listed.exit_code == 0 and "terse status updates" in listed.output
