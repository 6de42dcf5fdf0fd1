"""`memvault check --staged` in real git repositories: exactly the staged blobs are judged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memvault.errors import ConfigError, GitError

from .helpers_check import CHECKS, codes, git, git_repo, run_check, run_memvault, write_vault

DAY14 = "# 2026-02-14\n\n## 14:30 - Belief\nUser wants weekly updates on Friday afternoons\nConfidence: 0.8\n"
GOOD = "# 2026-02-21\n\n## 09:15 - Observation\nUser mentioned a new project called Atlas\n"
BAD = "# 2026-02-21\n\n## 25:15 - Observation\nUser mentioned a new project called Atlas\n"


def stage(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    git(repo, "add", rel)


def test_bad_staged_good_working_tree_is_judged_by_the_staged_version(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": DAY14})
    stage(repo, "memory/2026-02-21.md", BAD)
    (repo / "memory" / "2026-02-21.md").write_text(GOOD)  # unstaged repair
    report = run_check(repo, staged=True)
    assert codes(report) == ["MV004"] and report.files == ["memory/2026-02-21.md"]
    assert run_check(repo).problems == []  # the working tree is fine


def test_good_staged_bad_working_tree_passes(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": DAY14})
    stage(repo, "memory/2026-02-21.md", GOOD)
    (repo / "memory" / "2026-02-21.md").write_text(BAD)
    assert run_check(repo, staged=True).problems == []
    assert codes(run_check(repo)) == ["MV004"]


def test_nothing_staged(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-02-21.md": BAD})
    (repo / "README.md").write_text("not a vault file")
    git(repo, "add", "README.md")
    result = run_memvault(repo, "check", "--staged")
    assert result.returncode == 0
    # a staged file that is not memory is scanned for secrets, and only for secrets (issue 10, point 13)
    assert result.stdout.strip() == "0 errors, 0 warnings in 1 staged file (1 of them not memory, scanned for secrets only)"


def test_unborn_branch_first_commit(tmp_path: Path):
    repo = git_repo(tmp_path / "v", commit=False)
    stage(repo, "memory/2026-02-21.md", BAD)
    assert codes(run_check(repo, staged=True)) == ["MV004"]


def test_references_resolve_against_the_index_not_the_working_tree(tmp_path: Path):
    repo = git_repo(tmp_path / "v")
    (repo / "memory").mkdir(exist_ok=True)
    (repo / "memory" / "2026-02-14.md").write_text(DAY14)  # exists, but not staged
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nMonday, not Friday\nSupersedes: 2026-02-14T14:30\n")
    assert run_check(repo).problems == []
    report = run_check(repo, staged=True)
    assert codes(report) == ["MV011"]
    git(repo, "add", "memory/2026-02-14.md")
    report = run_check(repo, staged=True)
    assert report.problems == [] and report.files == ["memory/2026-02-14.md", "memory/2026-02-21.md"]


def test_reference_into_a_committed_file_reads_only_that_file(tmp_path: Path):
    files = {f"memory/2026-01-{d:02d}.md": f"# 2026-01-{d:02d}\n\n## 10:00 - Observation\nday {d}\n" for d in range(1, 29)}
    repo = git_repo(tmp_path / "v", {**files, "memory/2026-02-14.md": DAY14})
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nMonday, not Friday\n"
          "Supersedes: belief about Friday updates from 2026-02-14\n")
    report = run_check(repo, staged=True)
    assert report.problems == [] and report.context_files == 1


def test_duplicate_explicit_id_in_an_unchanged_file_is_found(tmp_path: Path):
    other = "# 2026-02-14\n\n## 14:30 - Belief\nFriday updates\nId: atlas-cadence\n"
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": other})
    stage(repo, "memory/2026-02-21.md", GOOD.rstrip("\n") + "\nId: atlas-cadence\n")
    report = run_check(repo, staged=True)
    assert codes(report) == ["MV010"]
    assert "also memory/2026-02-14.md:3" in report.problems[0].message


def test_grep_sees_the_index_even_where_the_working_copy_differs(tmp_path: Path):
    other = "# 2026-02-14\n\n## 14:30 - Belief\nFriday updates\nId: atlas-cadence\n"
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": other})
    stage(repo, "memory/2026-02-21.md", GOOD.rstrip("\n") + "\nId: atlas-cadence\n")
    (repo / "memory" / "2026-02-14.md").write_text(other.replace("atlas-cadence", "renamed"))  # unstaged
    assert codes(run_check(repo, staged=True)) == ["MV010"]
    git(repo, "add", "memory/2026-02-14.md")
    assert run_check(repo, staged=True).problems == []


def test_dateless_description_resolves_as_in_a_full_check(tmp_path: Path):
    files = {
        "memory/2026-02-10.md": "# 2026-02-10\n\n## 09:00 - Observation\nLunch was late\n",
        "memory/2026-02-14.md": DAY14,
        "memory/2026-02-15.md": "# 2026-02-15\n\n## 09:00 - Decision\nShip the Atlas beta\n",
    }
    repo = git_repo(tmp_path / "v", files)
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nMonday\nSupersedes: belief about Friday updates\n")
    staged = run_check(repo, staged=True)
    assert staged.problems == run_check(repo).problems == []
    assert staged.context_files == 1  # only the file holding the words
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nMonday\nSupersedes: decision about Friday\n")
    staged, full = run_check(repo, staged=True), run_check(repo)
    assert codes(staged) == codes(full) == ["MV011"]
    assert staged.problems == full.problems


def test_cycle_through_an_unchanged_file_is_reported_on_the_staged_entry(tmp_path: Path):
    older = "# 2026-02-14\n\n## 14:30 - Belief\nFriday\nSupersedes: 2026-02-21T16:00\n"
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": older})
    stage(repo, "memory/2026-02-21.md", "# 2026-02-21\n\n## 16:00 - Correction\nMonday\nSupersedes: 2026-02-14T14:30\n")
    report = run_check(repo, staged=True)
    assert codes(report) == ["MV013"]
    assert "2026-02-21T16:00" in report.problems[0].message and report.problems[0].path == "memory/2026-02-21.md"


def test_staged_config_is_the_one_used(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": DAY14})
    stage(repo, "memory/2026-02-21.md", "# 2026-02-21\n\n## 10:00 - Musing\nhmm\n")
    assert codes(run_check(repo, staged=True)) == ["MV005"]
    stage(repo, "memvault.toml", '[vault]\ntimezone = "UTC"\nextra_types = ["Musing"]\n')
    (repo / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')  # unstaged: ignored
    assert run_check(repo, staged=True).problems == []
    stage(repo, "memvault.toml", "[vault\n")
    with pytest.raises(ConfigError, match="memvault.toml"):
        run_check(repo, staged=True)
    git(repo, "reset", "-q", "memory/2026-02-21.md")
    stage(repo, "memvault.toml", '[checks]\ndisable = ["MV999"]\n')  # only the config is staged
    with pytest.raises(ConfigError, match="MV999"):
        run_check(repo, staged=True)


def test_vault_in_a_subdirectory_of_the_repository(tmp_path: Path):
    repo = git_repo(tmp_path / "repo", {"README.md": "project"})
    vault = write_vault(repo / "notes" / "vault", {"memory/2026-02-14.md": DAY14})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "vault")
    stage(vault, "memory/2026-02-21.md", BAD.replace("25:15", "16:00") + "Supersedes: 2026-02-14T14:30\n")
    report = run_check(vault, staged=True)
    assert report.problems == [] and report.files == ["memory/2026-02-21.md"] and report.context_files == 1
    stage(vault, "memory/2026-02-22.md", BAD.replace("2026-02-21", "2026-02-22"))
    assert [(p.path, p.code) for p in run_check(vault, staged=True).problems] == [("memory/2026-02-22.md", "MV004")]


def test_deleted_files_are_not_checked(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-02-21.md": BAD})
    git(repo, "rm", "-q", "memory/2026-02-21.md")
    assert run_check(repo, staged=True).files == []


def test_not_a_git_repository(tmp_path: Path):
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": GOOD})
    with pytest.raises(GitError, match="not in a git repository"):
        run_check(vault, staged=True)
    result = run_memvault(vault, "check", "--staged")
    assert result.returncode == 1 and "not in a git repository" in result.stderr


def test_json_from_the_process(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-02-14.md": DAY14})
    stage(repo, "memory/2026-02-21.md", BAD)
    result = run_memvault(repo, "check", "--staged", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["mode"] == "staged" and data["files_checked"] == 1 and data["problems"][0]["code"] == "MV004"


def _fixture_files(kind: str) -> list[tuple[str, str]]:
    out = []
    for case in sorted(CHECKS.iterdir()):
        for path in sorted((case / kind).rglob("*.md")):
            out.append((case.name, path.relative_to(case / kind).as_posix()))
    return out


@pytest.mark.parametrize("kind", ["bad", "good"])
def test_staging_one_file_gives_the_full_checks_verdict_on_it(kind: str, tmp_path: Path):
    """Partial checks agree with the full check on every fixture, one staged file at a time."""
    for n, (case, rel) in enumerate(_fixture_files(kind)):
        repo = tmp_path / f"r{n}"
        shutil.copytree(CHECKS / case / kind, repo)
        git_repo(repo)
        with (repo / rel).open("a", encoding="utf-8") as fh:
            fh.write("\n")
        git(repo, "add", rel)
        full = [p for p in run_check(repo).problems if p.path == rel]
        assert run_check(repo, staged=True).problems == full, (case, rel)


def _noise(n: int, text: str) -> dict[str, str]:
    return {f"memory/2026-01-{d:02d}.md": f"# 2026-01-{d:02d}\n\n## 10:00 - Observation\n{text} {d}\n" for d in range(1, n + 1)}


def test_common_words_load_only_files_that_could_win(tmp_path: Path):
    """A file must hold half the description's words to hold the entry it resolves to."""
    files = {**_noise(25, "It rained on friday"),
             "memory/2026-02-14.md": "# 2026-02-14\n\n## 14:30 - Belief\nWeekly updates on Friday afternoons\n"}
    repo = git_repo(tmp_path / "v", files)
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nMonday\n"
          "Supersedes: belief about weekly updates on friday afternoons\n")
    staged, full = run_check(repo, staged=True), run_check(repo)
    assert staged.problems == full.problems == []
    assert staged.context_files == 1


def test_overlapping_search_words_are_still_counted(tmp_path: Path):
    from memvault.check.sources import overlap

    assert overlap(["part", "partner"])  # "party" searches as "part": git grep -o would hide one
    assert overlap(["updat", "update"]) and overlap(["x-id", "idle"])
    assert not overlap(["bench-unique-id", "dakafi", "rivi"])  # only mid-word overlaps
    files = {**_noise(5, "A parrot called"),
             "memory/2026-02-14.md": "# 2026-02-14\n\n## 14:30 - Decision\nThe party partner booked the hall\n"}
    repo = git_repo(tmp_path / "v", files)
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nNo party\nSupersedes: party partner\n")
    staged, full = run_check(repo, staged=True), run_check(repo)
    assert staged.problems == full.problems == []
    assert staged.context_files == 1


def test_unresolvable_description_fails_in_both_modes(tmp_path: Path):
    files = _noise(6, "Lunch with the team on friday")
    repo = git_repo(tmp_path / "v", files)
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nNo\nSupersedes: lunch on friday\n")
    staged, full = run_check(repo, staged=True), run_check(repo)
    assert codes(staged) == codes(full) == ["MV011"]
    assert "ambiguous" in staged.problems[0].message


def test_words_spread_over_different_entries_do_not_load_a_file(tmp_path: Path):
    noise = {f"memory/2026-01-{d:02d}.md": f"# 2026-01-{d:02d}\n\n## 09:00 - Observation\nThe weekly standup\n\n"
             f"## 10:00 - Observation\nIt rained on friday\n" for d in range(1, 21)}
    coded = {"memory/2026-01-25.md": "# 2026-01-25\n\n## 09:00 - Observation\nweekly\n```\n## 10:00 x\n```\nfriday\n"}
    files = {**noise, **coded,
             "memory/2026-02-14.md": "# 2026-02-14\n\n## 14:30 - Belief\nWeekly updates on Friday afternoons\n"}
    repo = git_repo(tmp_path / "v", files)
    stage(repo, "memory/2026-02-21.md", GOOD + "\n## 16:00 - Correction\nMonday\n"
          "Supersedes: belief about weekly updates on friday afternoons\n")
    staged, full = run_check(repo, staged=True), run_check(repo)
    assert staged.problems == full.problems == []
    assert staged.context_files == 2  # the answer, and the file whose code fence makes it uncertain
