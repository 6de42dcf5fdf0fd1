"""Changed-lines mode of the pre-commit hook: legacy content never blocks, new lines are judged.

Real repositories, the real installed hook and `git commit`; the diff parser on its own where
git's output has corners (quoted names, content that looks like diff headers, pure renames).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.check.changed import keep_changed, parse_diff, staged_changes
from memvault.check.runner import check_vault
from memvault.entries.model import Problem
from memvault.errors import InputError
from memvault.vault import Vault

from .helpers_check import NOW, commit, git, git_repo, run_memvault

CHANGED = '[vault]\ntimezone = "UTC"\n\n[hook]\njudge = "changed-lines"\n'
TOKEN = "ghp_" + "Zk3Qp9Lm2Xv8Rt5Yw7Nb4Hc6Jd1Fg0Sa2Ty3Ui"
# How real agent logs look before memvault: a titled day, freeform sections in two languages,
# timed bullets, and the problems such files really have (attempted entries that are wrong).
LEGACY = """\
# 2026-02-01 - Config & Setup Session

## Was passiert ist
- **Setup:** Gateway neu gestartet, Logs geprüft
- 14:30 Token-Rotation besprochen

### Heartbeat Checklist
- [x] inbox
- [ ] calendar

## 25:99 - Belief
The nightly build is flaky

## 10:00 - Feeling
Tired of the flaky build

## 11:00 - Decision
Move the nightly build to 02:00
Supersedes: the entry about weekly standups that never existed

## Offene Punkte
- Build beobachten
"""
# (The file ends in a freeform section: a line appended right under the Supersedes line would strand
# it in the body, MV210, which the hook refuses even here: tests/test_first_use_refusals.py.)


def legacy_repo(tmp_path: Path, toml: str = CHANGED) -> Path:
    """A committed vault whose day file is full of problems, with the hook installed."""
    repo = git_repo(tmp_path / "v", {"memvault.toml": toml, "memory/2026-02-01.md": LEGACY,
                                     "MEMORY.md": "# Long-Term Memory\n\n## Projects\n- Atlas ships in March\n"})
    assert run_memvault(repo, "hook", "install").returncode == 0
    return repo


def append(repo: Path, rel: str, text: str) -> None:
    with (repo / rel).open("a", encoding="utf-8") as fh:
        fh.write(text)
    git(repo, "add", rel)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def line_of(repo: Path, text: str, rel: str = "memory/2026-02-01.md") -> int:
    return (repo / rel).read_text().split("\n").index(text) + 1


def staged_codes(repo: Path, **kw) -> list[str]:
    return [p.code for p in check_vault(Vault.open(repo), staged=True, now=NOW, **kw).problems]


# -- the acceptance: through the real hook ---------------------------------------------------

def test_the_legacy_file_is_full_of_errors_and_a_full_check_says_so(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    report = check_vault(Vault.open(repo), now=NOW)
    assert {"MV004", "MV005"} <= {p.code for p in report.problems} and report.errors >= 2


def test_a_one_line_append_to_a_legacy_file_passes_the_hook(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    before = head(repo)
    append(repo, "memory/2026-02-01.md", "- 16:10 Build auf 02:00 verschoben, läuft\n")
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert head(repo) != before
    assert "older problems on lines this commit does not change left out" in result.stdout + result.stderr


@pytest.mark.parametrize("entry, code", [
    ("\n## 25:99 - Belief\nThe deploy key moved\n", "MV004"),
    ("\n## 16:00 - Feeling\nRelieved\n", "MV005"),
    (f"- 16:10 pushed with {TOKEN}\n", "MV503"),
])
def test_a_bad_new_entry_or_a_secret_on_the_new_line_is_refused(tmp_path: Path, entry: str, code: str):
    repo = legacy_repo(tmp_path)
    before = head(repo)
    append(repo, "memory/2026-02-01.md", entry)
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and f" {code} error" in out and "commit refused" in out
    assert head(repo) == before
    assert ":7:1: MV004" not in out and ":10:1: MV005" not in out  # the legacy ones stay quiet
    assert TOKEN not in out


def test_a_new_bad_supersedes_on_a_legacy_entry_is_refused_at_its_heading(tmp_path: Path):
    # MV011 is reported on the heading line, which the commit did not change: the entry's
    # metadata line did, so the entry is the commit's to answer for.
    repo = git_repo(tmp_path / "v", {"memvault.toml": CHANGED, "memory/2026-02-01.md": LEGACY.replace(
        "Supersedes: the entry about weekly standups that never existed\n", "")})
    text = (repo / "memory/2026-02-01.md").read_text()
    (repo / "memory/2026-02-01.md").write_text(text.replace(
        "Move the nightly build to 02:00\n", "Move the nightly build to 02:00\nSupersedes: 2026-01-01T09:00\n"))
    git(repo, "add", "-A")
    report = check_vault(Vault.open(repo), staged=True, now=NOW)
    assert [(p.code, p.line) for p in report.problems] == [("MV011", line_of(repo, "## 11:00 - Decision"))]
    assert report.judge == "changed-lines" and report.excused >= 2


def test_a_new_bad_supersedes_in_a_new_entry_is_refused(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    append(repo, "memory/2026-02-01.md", "\n## 17:00 - Correction\nStandup is Tuesdays\nSupersedes: the meeting about llamas\n")
    assert staged_codes(repo) == ["MV011"]


def test_a_new_duplicate_id_is_refused_though_its_twin_is_legacy(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    append(repo, "memory/2026-02-01.md", "\n## 18:00 - Observation\nnight build green\nId: nightly\n")
    git(repo, "commit", "-q", "--no-verify", "-m", "x")
    append(repo, "memory/2026-02-01.md", "\n## 19:00 - Observation\nnight build red\nId: nightly\n")
    report = check_vault(Vault.open(repo), staged=True, now=NOW)
    assert [(p.code, p.line) for p in report.problems] == [("MV010", line_of(repo, "## 19:00 - Observation"))]


def test_a_body_line_added_to_a_legacy_entry_does_not_wake_its_old_problem(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    path = repo / "memory/2026-02-01.md"
    path.write_text(path.read_text().replace("Tired of the flaky build\n", "Tired of the flaky build\nstill tired\n"))
    git(repo, "add", "-A")
    assert staged_codes(repo) == []


def test_a_deleted_heading_makes_the_entry_it_merges_into_the_commits(tmp_path: Path):
    # Deleting "## 11:00 - Decision" hands its Supersedes line to the entry above it.
    repo = legacy_repo(tmp_path)
    path = repo / "memory/2026-02-01.md"
    path.write_text(path.read_text().replace("## 11:00 - Decision\n", ""))
    git(repo, "add", "-A")
    assert "MV005" in staged_codes(repo)  # the merged entry's heading is reported again


def test_a_file_new_to_the_repository_is_judged_whole(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    (repo / "memory/2026-02-02.md").write_text(LEGACY.replace("2026-02-01", "2026-02-02"))
    git(repo, "add", "-A")
    assert {"MV004", "MV005"} <= set(staged_codes(repo))


def test_a_rename_judges_only_what_changed_and_the_new_name(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    (repo / "memory/2026").mkdir()
    git(repo, "mv", "memory/2026-02-01.md", "memory/2026/2026-02-01.md")
    assert staged_codes(repo) == []
    git(repo, "mv", "memory/2026/2026-02-01.md", "memory/2026-02-31.md")  # not a real date
    assert "MV001" in staged_codes(repo)


def test_a_secret_in_a_non_memory_file_is_judged_by_its_changed_lines(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    (repo / "notes.txt").write_text(f"old {TOKEN}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "legacy secret, already in history")
    append(repo, "notes.txt", "more\n")
    assert staged_codes(repo) == []
    append(repo, "notes.txt", f"new {TOKEN}\n")
    assert staged_codes(repo) == ["MV503"]


def test_full_mode_stays_the_default_for_vaults_made_by_init(tmp_path: Path, runner):
    from memvault.cli import cli

    target = tmp_path / "fresh"
    assert runner.invoke(cli, ["init", str(target)]).exit_code == 0
    (target / "memory/2026-02-01.md").write_text(LEGACY)
    git(target, "add", "-A")
    git(target, "commit", "-q", "--no-verify", "-m", "legacy")
    append(target, "memory/2026-02-01.md", "- one more line\n")
    result = commit(target)
    assert result.returncode != 0 and "MV004" in result.stdout + result.stderr


def test_the_flags_override_the_config_and_need_staged(tmp_path: Path, runner):
    from memvault.cli import cli

    repo = legacy_repo(tmp_path)
    append(repo, "memory/2026-02-01.md", "- one more line\n")
    assert staged_codes(repo) == []
    assert "MV004" in staged_codes(repo, changed_lines=False)
    full = legacy_repo(tmp_path / "full", toml='[vault]\ntimezone = "UTC"\n')
    append(full, "memory/2026-02-01.md", "- one more line\n")
    assert staged_codes(full, changed_lines=True) == []
    with pytest.raises(InputError, match="--staged"):
        check_vault(Vault.open(repo), changed_lines=True)
    out = runner.invoke(cli, ["--vault", str(repo), "check", "--staged", "--all-lines", "--json"])
    data = json.loads(out.output)
    assert out.exit_code == 1 and data["judge"] == "all" and data["excused"] == 0
    out = runner.invoke(cli, ["--vault", str(repo), "check", "--staged", "--json"])
    data = json.loads(out.output)
    assert out.exit_code == 0 and data["judge"] == "changed-lines" and data["excused"] >= 3


def test_a_staged_config_switching_the_mode_judges_that_commit(tmp_path: Path):
    repo = legacy_repo(tmp_path)
    (repo / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n\n[hook]\njudge = "all"\n')
    append(repo, "memory/2026-02-01.md", "- one more line\n")
    git(repo, "add", "-A")
    assert "MV004" in staged_codes(repo)


def test_a_bad_judge_value_is_a_config_error(tmp_path: Path, runner):
    from memvault.cli import cli

    repo = git_repo(tmp_path / "v", {"memvault.toml": '[vault]\ntimezone = "UTC"\n\n[hook]\njudge = "lines"\n'})
    out = runner.invoke(cli, ["--vault", str(repo), "check"])
    assert out.exit_code != 0 and "[hook] judge must be one of 'all', 'changed-lines'" in out.output


# -- the diff, as git prints it --------------------------------------------------------------

def test_parse_diff_reads_quoted_names_and_is_not_fooled_by_content(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/ü x.md": "a\nb\n", "memory/2026-02-01.md": "x\n"})
    (repo / "memory/ü x.md").write_text("a\n++ b/fake\n-- a/fake\ndiff --git a/x b/x\n")
    (repo / "memory/tab\there.md").write_text("one\n")
    git(repo, "add", "-A")
    got = staged_changes(repo)
    assert got["memory/ü x.md"].added == {2, 3, 4} and not got["memory/ü x.md"].new_path
    assert got["memory/tab\there.md"].added == {1} and got["memory/tab\there.md"].new_path
    assert set(got) == {"memory/ü x.md", "memory/tab\there.md"}


def test_parse_diff_pure_renames_deletions_and_empty_files(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/a b.md": "x\ny\nz\n", "memory/gone.md": "bye\n"})
    git(repo, "mv", "memory/a b.md", "memory/c d.md")
    git(repo, "rm", "-q", "memory/gone.md")
    (repo / "memory/empty.md").write_text("")
    git(repo, "add", "-A")
    got = staged_changes(repo)
    assert set(got) == {"memory/c d.md", "memory/empty.md"}
    assert got["memory/c d.md"].new_path and got["memory/c d.md"].added == set()
    assert got["memory/empty.md"].new_path


def test_parse_diff_marks_where_a_heading_or_metadata_line_was_deleted():
    diff = ("diff --git a/m.md b/m.md\nindex 1..2 100644\n--- a/m.md\n+++ b/m.md\n"
            "@@ -5,2 +4,0 @@\n-## 10:00 - Belief\n-x\n@@ -9 +8 @@\n-Confidence: 0.5\n+Confidence: 0.6\n"
            "@@ -20 +19,0 @@\n-just prose\n")
    got = parse_diff(diff)["m.md"]
    assert got.cut_heads == {4, 8} and got.added == {8}


def test_keep_changed_without_a_diff_keeps_nothing():
    assert keep_changed([Problem("memory/x.md", 1, "m")], {}, []) == []


# -- a refused commit names the `check --fix` for its own files -------------------------------

# Legacy files with what `--fix` repairs (no title, trailing whitespace, heading spacing): a
# plain `check --fix` in an adopted vault rewrote all 22 of them on one workspace.
UNTIDY = "## 09:00 - Observation  \nHeizung tropft  \n##  10:00  -  Belief\nThe landlord fixes it\n"
HIDDEN = "\n\u200b## 12:00 - Decision\nCall the plumber\n"


def untidy_repo(tmp_path: Path, sub: str = "") -> tuple[Path, Path]:
    """(repository, vault): an adopted vault of untidy legacy files, committed, the hook installed."""
    files = {f"memory/2026-01-{d:02d}.md": UNTIDY for d in range(10, 16)}
    files["memvault.toml"] = CHANGED
    files["memory/2026-02-01.md"] = LEGACY
    repo = git_repo(tmp_path / "v", {f"{sub}{k}": v for k, v in files.items()})
    vault = repo / sub if sub else repo
    assert run_memvault(vault, "hook", "install").returncode == 0
    return repo, vault


@pytest.mark.parametrize("sub", ["", "ws/"], ids=["vault-at-top", "vault-in-a-subfolder"])
def test_a_refusal_suggests_check_fix_for_the_refused_files_only(tmp_path: Path, sub: str):
    import shlex
    import subprocess

    from .helpers_check import hook_env, memvault_cmd

    repo, vault = untidy_repo(tmp_path, sub)
    legacy = {p: p.read_bytes() for p in (vault / "memory").glob("*.md")}
    assert len(check_vault(Vault.open(vault)).problems) > 20  # the vault-wide --fix would touch every file
    append(repo, f"{sub}memory/2026-01-12.md", HIDDEN)
    before = head(repo)
    refused = commit(repo)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "MV017 error" in out and "commit refused" in out
    hint = [line for line in out.splitlines() if line.startswith("to repair what --fix can in these files only: ")]
    where = f" --vault {sub.rstrip('/')}" if sub else ""
    assert hint == [f"to repair what --fix can in these files only: memvault{where} check --fix {sub}memory/2026-01-12.md"]
    assert "'memvault check --fix' repairs" not in out  # the old, vault-wide advice
    # the command as printed, run where the hook ran (the repository's top): that file, no other
    args = shlex.split(hint[0].split(": ", 1)[1])[1:]
    fixed = subprocess.run([*memvault_cmd(), *args], cwd=repo, capture_output=True, text=True, env=hook_env())
    assert fixed.returncode in (0, 1), fixed.stderr
    assert f"fixed {sub}memory/2026-01-12.md" in fixed.stdout or "fixed memory/2026-01-12.md" in fixed.stdout
    changed = {p for p, raw in legacy.items() if p.read_bytes() != raw}
    assert changed == {vault / "memory" / "2026-01-12.md"}
    assert "\u200b" not in (vault / "memory" / "2026-01-12.md").read_text()
    git(repo, "add", f"{sub}memory/2026-01-12.md")
    ok = commit(repo)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert head(repo) != before and git(repo, "status", "--porcelain", "--untracked-files=no").stdout == ""


def test_a_refusal_nothing_can_fix_names_no_fix_command(tmp_path: Path):
    repo, _ = untidy_repo(tmp_path)
    append(repo, "memory/2026-01-12.md", "\n## 25:99 - Belief\nThe deploy moved\n")
    out = "".join((r := commit(repo)).stdout + r.stderr)
    assert r.returncode != 0 and "MV004 error" in out
    assert "to repair what --fix can" not in out
