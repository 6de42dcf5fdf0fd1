"""`memvault maintain --archive`: forgotten entries move, whole, out of the daily logs into
`forgotten/YYYY.md`; `history` says where they went; a kill at any point loses and doubles nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.forgotten import ARCHIVED_RE, archived_line
from memvault.vault import Vault

from .conftest import copy_vault
from .helpers_check import git, memvault_cmd

APRIL = "2026-04-01 12:00"
TABS = "2026-01-05T11:30"
TABS_LINES = "## 11:30 - Belief\nUser prefers tabs over spaces in Go code\nImportance: low"


def fixture(root: Path, settings: str = "") -> Path:
    copy_vault("retention", root)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n' + settings)
    return root


def test_archiving_moves_the_entry_whole_and_history_says_where(runner, vault_dir):
    fixture(vault_dir)
    git(vault_dir, "init", "-q")
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-q", "-m", "logs")
    log_before = (vault_dir / "memory" / "2026-01-05.md").read_text()
    result = runner.invoke(cli, ["maintain", "--archive", "--at", APRIL])
    assert result.exit_code == 0, result.output
    assert f"archive {TABS}  memory/2026-01-05.md -> forgotten/2026.md" in result.output
    log_after = (vault_dir / "memory" / "2026-01-05.md").read_text()
    archived = (vault_dir / "forgotten" / "2026.md").read_text()
    assert TABS_LINES in log_before and TABS_LINES not in log_after and TABS_LINES in archived
    # nothing else in the log changed: the entry's lines and one blank line went
    assert log_before.replace(TABS_LINES + "\n\n", "") == log_after
    assert [m["id"] for m in ARCHIVED_RE.finditer(archived)] == [TABS]
    with Vault.open(vault_dir) as vault:
        assert TABS not in vault.timeline.by_id  # the vault does not read the archive
        assert vault.forgotten[TABS].archived == "forgotten/2026.md"
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-q", "-m", "maintain --archive")
    history = runner.invoke(cli, ["history", TABS])
    assert history.exit_code == 0, history.output
    assert f"{TABS}  [archived]" in history.output
    assert "archived to forgotten/2026.md:6 from memory/2026-01-05.md by `memvault maintain`" in history.output
    data = json.loads(runner.invoke(cli, ["history", TABS, "--json"]).stdout)
    assert data["archived"]["file"] == "forgotten/2026.md" and data["status"] == "archived"
    assert [c["change"] for c in data["commits"]] == ["added", "deleted"]
    # asof --recorded: before the archive commit the logs held it, after it they do not
    first, second = git(vault_dir, "log", "--format=%H", "--reverse").stdout.split()
    held = json.loads(runner.invoke(cli, ["asof", "--recorded", first, "--json"]).stdout)
    assert TABS in {d["id"] for d in held}
    gone = json.loads(runner.invoke(cli, ["asof", "--recorded", second, "--json"]).stdout)
    assert TABS not in {d["id"] for d in gone}
    # even without .memvault/ the archive file says where it went
    import shutil
    shutil.rmtree(vault_dir / ".memvault")
    assert "archived to forgotten/2026.md:6" in runner.invoke(cli, ["history", TABS]).output


def test_archive_true_in_the_settings_and_history_without_git(runner, vault_dir):
    fixture(vault_dir, '\n[retention]\narchive = true\narchive_dir = "old/vergessen"\n')
    assert runner.invoke(cli, ["maintain", "--at", APRIL]).exit_code == 0
    assert TABS_LINES in (vault_dir / "old" / "vergessen" / "2026.md").read_text()
    out = runner.invoke(cli, ["history", TABS]).output
    assert "[archived]" in out and "archived to old/vergessen/2026.md:6" in out
    # --no-archive overrides the setting: nothing more moves, the forgetting is derived state only
    (vault_dir / "memory" / "2026-01-05.md").write_text((vault_dir / "memory" / "2026-01-05.md").read_text())
    assert runner.invoke(cli, ["maintain", "--no-archive", "--at", "2027-01-01"]).exit_code == 0
    assert "## 09:10 - Observation" in (vault_dir / "memory" / "2026-01-05.md").read_text()


# -- a kill at any point


def _big_vault(root: Path, days: int = 120) -> set[str]:
    """`days` daily logs of five entries each, German and English, all long faded by 2026-06."""
    rng = random.Random(15)
    words = ("Kaffee Backup Server Mia Lena Tabs Hetzner peanut Atlas Zürich Köln invoice deploy Grafana "
             "Postgres Vertrag Miete Zahnarzt Fahrrad Urlaub").split()
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    ids = set()
    for i in range(days):
        day = date(2025, 1, 1) + timedelta(days=2 * i)
        parts = [f"# {day.isoformat()}\n"]
        for j in range(5):
            parts.append(f"## {9 + j:02d}:{i % 60:02d} - {rng.choice(['Observation', 'Decision', 'Belief'])}\n"
                         f"{' '.join(rng.sample(words, 4))}, Nummer {i}-{j}.\n")
            ids.add(f"{day.isoformat()}T{9 + j:02d}:{i % 60:02d}")
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(parts))
    return ids


def _places(root: Path) -> tuple[list[str], list[str]]:
    """Ids in the vault's files (each parse whole) and ids in the archive files."""
    with Vault.open(root) as vault:
        assert not [p for p in vault.problems if p.severity == "error"]
        in_vault = [e.id for e in vault.events]
    archive = root / "forgotten" / "2025.md"
    text = archive.read_text() if archive.exists() else ""
    return in_vault, [m["id"] for m in ARCHIVED_RE.finditer(text)]


def _run(root: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
    return subprocess.Popen([*memvault_cmd(), "maintain", "--archive", "--at", "2026-06-01"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _kill_when(proc: subprocess.Popen[bytes], path: Path, after: float) -> None:
    """Kill -9 `proc` `after` seconds once `path` exists (or once it has ended)."""
    while not path.exists() and proc.poll() is None:
        time.sleep(0.0005)
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.slow  # ~10 s: eight real processes over 600 entries
def test_a_kill_mid_run_leaves_every_file_whole_and_no_entry_lost_or_doubled(tmp_path):
    rng = random.Random(9)
    # when each write starts: the record, then the archive file, then the logs one by one
    points = [(".memvault/forgotten.sqlite", 0.0), ("forgotten/2025.md", 0.0),
              ("forgotten/2025.md", rng.uniform(0.001, 0.02)), ("forgotten/2025.md", rng.uniform(0.01, 0.05))]
    halves = 0
    for round_, (marker, after) in enumerate(points):
        root = tmp_path / f"v{round_}"
        ids = _big_vault(root)
        texts = {p.name: p.read_text() for p in (root / "memory").iterdir()}
        _kill_when(_run(root), root / marker, after)
        in_vault, archived = _places(root)
        assert len(in_vault) == len(set(in_vault)) and len(archived) == len(set(archived))
        assert set(in_vault) | set(archived) == ids  # none lost; an entry in both is a move a kill cut short
        halves += bool(set(in_vault) & set(archived))
        # the next run finishes the move: every entry in exactly one place, its lines as written
        assert _run(root).wait(timeout=60) == 0
        in_vault, archived = _places(root)
        assert in_vault == [] and sorted(archived) == sorted(ids)
        archive = (root / "forgotten" / "2025.md").read_text()
        for text in texts.values():
            for block in text.split("\n\n")[1:]:
                assert block.strip() in archive
    assert halves  # at least one kill fell between the archive's write and a log's


def test_a_move_cut_short_is_finished_by_the_next_run_not_doubled(runner, vault_dir):
    """The state a kill between the archive's write and the log's leaves (the slow test above
    makes it with real kills): the entry in both places, the record not yet saying where it went."""
    fixture(vault_dir)
    assert runner.invoke(cli, ["maintain", "--at", APRIL]).exit_code == 0  # forgotten, not archived
    with Vault.open(vault_dir) as vault:
        record = vault.forgotten[TABS]
    (vault_dir / "forgotten").mkdir()
    (vault_dir / "forgotten" / "2026.md").write_text(
        f"# Archive 2026\n\n{archived_line(record, 'memory/2026-01-05.md')}\n{TABS_LINES}\n")
    before = (vault_dir / "forgotten" / "2026.md").read_text()
    # not even --archive is needed: a move begun is a move to finish
    result = runner.invoke(cli, ["maintain", "--at", APRIL])
    assert result.exit_code == 0 and f"archive {TABS}" in result.output
    assert TABS_LINES not in (vault_dir / "memory" / "2026-01-05.md").read_text()
    assert (vault_dir / "forgotten" / "2026.md").read_text() == before  # not appended twice
    with Vault.open(vault_dir) as vault:
        assert vault.forgotten[TABS].archived == "forgotten/2026.md"


def test_an_entry_edited_after_its_archive_copy_was_written_stays_in_its_log(runner, vault_dir):
    """A half-done move whose log entry was edited since: the edit is not lost to the archive."""
    fixture(vault_dir)
    assert runner.invoke(cli, ["maintain", "--at", APRIL]).exit_code == 0
    with Vault.open(vault_dir) as vault:
        record = vault.forgotten[TABS]
    (vault_dir / "forgotten").mkdir()
    (vault_dir / "forgotten" / "2026.md").write_text(
        f"# Archive 2026\n\n{archived_line(record, 'memory/2026-01-05.md')}\n{TABS_LINES}\n")
    log = vault_dir / "memory" / "2026-01-05.md"
    log.write_text(log.read_text().replace("in Go code", "in Go code, und in Rust auch"))
    assert runner.invoke(cli, ["maintain", "--at", APRIL]).exit_code == 0
    assert "und in Rust auch" in log.read_text()
