"""Issue 12: a file whose name carries no day is dated by its first commit, else its mtime.

Real git repositories in tmp folders, commits at set dates."""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from memvault.filedates import CACHE_NAME, FileDates, parse_first_adds
from memvault.layout import DEFAULT, Selection
from memvault.parsed import ParsedVault

from .conftest import git
from .helpers_check import write_vault

BERLIN = ZoneInfo("Europe/Berlin")


def commit(root: Path, when: str, message: str = "save", *paths: str) -> None:
    """Commit everything (or `paths`) with author and committer date `when` (ISO, with zone)."""
    git(root, "add", "-A", "--", *(paths or ["."]))
    git(root, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


def stamp(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def test_parse_first_adds_keeps_the_earliest_add_and_follows_renames():
    out = ("\x01300\0\nR100\0memory/p/ideen.md\0memory/archive/ideen.md\0M\0memory/x.md\0"
           "\x01200\0\nA\0memory/x.md\0A\0memory/über uns.md\0"
           "\x01100\0\nA\0memory/p/ideen.md\0")  # newest first, as git log prints
    assert parse_first_adds(out) == {"memory/p/ideen.md": 100, "memory/archive/ideen.md": 100,
                                     "memory/x.md": 200, "memory/über uns.md": 200}
    assert parse_first_adds("") == {}


def undated_vault(root: Path) -> Path:
    write_vault(root, {
        "memvault.toml": '[vault]\ntimezone = "Europe/Berlin"\n',
        "memory/2026-01-15.md": "# 2026-01-15\n\n## 09:00 - Observation\nA day's own file\n",
        "memory/projects/ideen.md": "# Ideen\n\n## 10:00 - Decision\nRegal für die Garage bauen\n",
    })
    git(root, "init", "-q")
    return root


def test_an_undated_file_is_dated_by_its_first_commit_in_the_vaults_zone(vault_dir):
    undated_vault(vault_dir)
    commit(vault_dir, "2026-01-10T23:30:00+00:00")  # already 11 January in Berlin
    (vault_dir / "memory/projects/ideen.md").write_text("# Ideen\n\n## 10:00 - Decision\nRegal bauen, Holz kaufen\n")
    commit(vault_dir, "2026-03-01T12:00:00+00:00")  # an edit does not move the date
    stamp(vault_dir / "memory/projects/ideen.md", datetime(2026, 6, 1, tzinfo=UTC))
    vault = ParsedVault.open(vault_dir)
    assert vault.dates.of("memory/projects/ideen.md") == date(2026, 1, 11)
    (ev,) = [e for e in vault.files["memory/projects/ideen.md"].events if e.type == "decision"]
    assert ev.timestamp == datetime(2026, 1, 11, 10, 0, tzinfo=BERLIN)
    assert "Holz kaufen" in ev.content


def test_the_name_says_the_day_when_it_can(vault_dir):
    undated_vault(vault_dir)
    commit(vault_dir, "2026-05-05T12:00:00+00:00")
    dates = FileDates(vault_dir, DEFAULT, BERLIN)
    assert dates.of("MEMORY.md") is None and dates.of("memory/2026-01-15.md") is None  # the parser knows
    assert dates.of("memory/2026/01/2026-01-15.md") is None
    assert dates.of("memory/2026-01-26-fologram-research.md") == date(2026, 1, 26)
    assert dates.of("memory/archive/2026-01-15.md") == date(2026, 1, 15)
    assert dates.of("memory/2026-02-30.md") is None  # meant a date, has none: MV001, not a commit's day
    assert dates.git_calls == 0  # none of these needed git


def test_a_moved_file_keeps_its_first_commits_date(vault_dir):
    undated_vault(vault_dir)
    commit(vault_dir, "2026-01-05T10:00:00+00:00")
    (vault_dir / "memory/archive").mkdir()
    git(vault_dir, "mv", "memory/projects/ideen.md", "memory/archive/ideen.md")
    commit(vault_dir, "2026-02-20T10:00:00+00:00")
    assert FileDates(vault_dir, DEFAULT, UTC).of("memory/archive/ideen.md") == date(2026, 1, 5)


def test_a_file_git_has_not_seen_is_dated_by_its_mtime(vault_dir):
    undated_vault(vault_dir)
    commit(vault_dir, "2026-01-05T10:00:00+00:00")
    new = vault_dir / "memory/Notizen über Müller.md"
    new.write_text("# Müller\n\n## 08:00 - Observation\nAnruf wegen Angebot\n")
    stamp(new, datetime(2026, 2, 2, 23, 30, tzinfo=UTC))
    vault = ParsedVault.open(vault_dir)
    assert vault.dates.of("memory/Notizen über Müller.md") == date(2026, 2, 3)  # Berlin is an hour ahead
    assert {e.timestamp.date() for e in vault.files["memory/Notizen über Müller.md"].events} == {date(2026, 2, 3)}
    assert vault.dates.of("memory/gone.md") is None  # neither committed nor on disk


def test_without_git_every_undated_file_is_dated_by_its_mtime(vault_dir):
    write_vault(vault_dir, {"memory/projects/ideen.md": "# Ideen\n\n## 10:00 - Decision\nRegal\n"})
    stamp(vault_dir / "memory/projects/ideen.md", datetime(2025, 7, 14, 12, tzinfo=UTC))
    vault = ParsedVault.open(vault_dir)
    assert [e.timestamp.date() for e in vault.events if e.type == "decision"] == [date(2025, 7, 14)]


def test_a_vault_below_the_repositorys_top(vault_dir):
    top = vault_dir.parent / "repo"
    vault = top / "agents" / "clawd"
    undated_vault(vault)
    os.rename(vault / ".git", top / ".git")
    (top / "README.md").write_text("the repo\n")
    commit(top, "2025-11-30T09:00:00+00:00")
    assert FileDates(vault, DEFAULT, UTC).of("memory/projects/ideen.md") == date(2025, 11, 30)


def test_one_git_log_per_head_kept_in_the_derived_folder(vault_dir):
    undated_vault(vault_dir)
    commit(vault_dir, "2026-01-05T10:00:00+00:00")
    first = FileDates(vault_dir, DEFAULT, UTC)
    assert first.of("memory/projects/ideen.md") == date(2026, 1, 5)
    assert first.git_calls == 2  # rev-parse and log
    cached = json.loads((vault_dir / ".memvault" / CACHE_NAME).read_text())
    assert cached["dates"] == {"memory/projects/ideen.md": int(datetime(2026, 1, 5, 10, tzinfo=UTC).timestamp())}
    again = FileDates(vault_dir, DEFAULT, UTC)  # another command, HEAD unchanged
    assert again.of("memory/projects/ideen.md") == date(2026, 1, 5) and again.git_calls == 1  # rev-parse only
    (vault_dir / "memory/projects/neu.md").write_text("# neu\n")
    commit(vault_dir, "2026-02-07T10:00:00+00:00")
    after = FileDates(vault_dir, DEFAULT, UTC)
    assert after.of("memory/projects/neu.md") == date(2026, 2, 7) and after.git_calls == 2
    other = FileDates(vault_dir, Selection(("memory/**/*.md", "AGENTS.md")), UTC)  # other files: asked anew
    assert other.of("memory/projects/neu.md") == date(2026, 2, 7) and other.git_calls == 2


def test_a_long_lived_reader_sees_a_new_commit(vault_dir, monkeypatch):
    import memvault.filedates as filedates

    undated_vault(vault_dir)
    commit(vault_dir, "2026-01-05T10:00:00+00:00")
    dates = FileDates(vault_dir, DEFAULT, UTC)
    new = vault_dir / "memory/projects/neu.md"
    new.write_text("# neu\n")
    stamp(new, datetime(2026, 3, 3, 12, tzinfo=UTC))
    assert dates.of("memory/projects/neu.md") == date(2026, 3, 3)  # not committed yet: mtime
    commit(vault_dir, "2026-03-04T10:00:00+00:00")
    assert dates.of("memory/projects/neu.md") == date(2026, 3, 3)  # HEAD is asked again only now and then
    monkeypatch.setattr(filedates, "REFRESH_SECONDS", 0.0)
    assert dates.of("memory/projects/neu.md") == date(2026, 3, 4)


def test_a_vault_whose_files_carry_their_dates_never_runs_git(vault_dir):
    write_vault(vault_dir, {
        "MEMORY.md": "# Memory\n",
        "memory/2026-01-15.md": "# 2026-01-15\n\n## 09:00 - Observation\nx\n",
        "memory/2026-01-26-fologram-research.md": "# 2026-01-26\n\n## 09:00 - Observation\ny\n",
        "memory/2025/12/2025-12-31.md": "# 2025-12-31\n\n## 09:00 - Observation\nz\n",
    })
    git(vault_dir, "init", "-q")
    commit(vault_dir, "2026-01-05T10:00:00+00:00")
    vault = ParsedVault.open(vault_dir)
    assert len([e for e in vault.events if e.type == "observation"]) == 3 and vault.dates.git_calls == 0
    assert not (vault_dir / ".memvault" / CACHE_NAME).exists()
