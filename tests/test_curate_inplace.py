"""Issue 13 point 4: an update in place keeps the bullet's `(added D)`, and says why once."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from memvault.cli import cli
from memvault.vault import Vault

AT = "2026-12-01 12:00"


def curate(runner, *args):
    return runner.invoke(cli, ["curate", *args], catch_exceptions=False)


def vault_with(root: Path, memory: str, days: dict[str, str]) -> Path:
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "MEMORY.md").write_text(memory, encoding="utf-8")
    (root / "memory").mkdir()
    for day, text in days.items():
        (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}", encoding="utf-8")
    return root


def bullet(vault: Path, block: str) -> str:
    return next(ln for ln in (vault / "MEMORY.md").read_text(encoding="utf-8").splitlines() if ln.endswith(f"^{block}"))


def test_a_correction_rewrites_the_bullet_and_keeps_when_it_was_learned(vault_dir, runner):
    vault_with(vault_dir, "# Long-Term Memory\n\n## User Preferences\n"
               "- Jörg möchte den Wochenbericht freitags per Mail (added 2026-11-02) ^weekly\n",
               {"2026-11-30": "## 11:00 - Correction\nJörg möchte den Wochenbericht jetzt montags im Chat\n"
                              "Supersedes: weekly\n"})  # a bullet is named by its id (docs/format.md, References)
    result = curate(runner, "--yes", "--at", AT)
    assert result.exit_code == 0, result.output
    assert "1 updated" in result.output
    line = bullet(vault_dir, "weekly")
    assert line.startswith("- Jörg möchte den Wochenbericht jetzt montags im Chat (added 2026-11-02) "
                           "(updated 2026-11-30, was: Jörg möchte den Wochenbericht freitags per Mail) (source: ")
    events = [e for e in Vault.open(vault_dir).timeline.events if e.file == "MEMORY.md" and "weekly" in e.block_ids]
    assert len(events) == 1
    assert events[0].timestamp == datetime(2026, 11, 2, tzinfo=UTC)
    assert events[0].updated is not None and events[0].updated.date().isoformat() == "2026-11-30"


def test_a_second_update_still_keeps_the_first_date(vault_dir, runner):
    vault_with(vault_dir, "# M\n\n## Notes\n"
               "- Deploys happen on Tuesdays (added 2026-10-01) (updated 2026-11-01, was: Deploys happen on Mondays) ^deploy\n",
               {"2026-11-30": "## 11:00 - Correction\nDeploys happen on Thursdays now\nSupersedes: deploy\n"})
    assert curate(runner, "--yes", "--at", AT).exit_code == 0
    line = bullet(vault_dir, "deploy")
    assert line.startswith("- Deploys happen on Thursdays now (added 2026-10-01) "
                           "(updated 2026-11-30, was: Deploys happen on Tuesdays) (source: ")
    assert line.count("(added") == 1 and line.count("(updated") == 1


def test_a_bullet_without_an_added_date_gets_none_made_up(vault_dir, runner):
    vault_with(vault_dir, "# M\n\n## Notes\n- Deploys happen on Tuesdays ^deploy\n",
               {"2026-11-30": "## 11:00 - Correction\nDeploys happen on Thursdays now\nSupersedes: deploy\n"})
    assert curate(runner, "--yes", "--at", AT).exit_code == 0
    assert "(added" not in bullet(vault_dir, "deploy")


def test_a_reconfirmation_says_why_once(vault_dir, runner):
    # "says again what the bullet says; says what the bullet says" was the reason shown.
    vault_with(vault_dir, "# M\n\n## Notes\n- The staging server is slow in the mornings (added 2026-11-01) ^slow\n",
               {"2026-11-30": "## 09:00 - Observation\nStaging server slow again this morning, in the mornings it crawls\n"})
    data = json.loads(curate(runner, "--json", "--at", AT).output)
    [p] = data["proposals"]
    assert p["kind"] == "reconfirm" and p["reason"] == "says again what the bullet says"
    items = json.loads(curate(runner, "--explain", "--json", "--at", AT).output)
    reason = next(d["reason"] for d in items if d["id"] == "2026-11-30T09:00")
    assert reason.count("what the bullet says") == 1, reason
    text = curate(runner, "--dry-run", "--at", AT).output
    assert text.count("what the bullet says") == 1, text
    assert curate(runner, "--yes", "--at", AT).exit_code == 0
    assert bullet(vault_dir, "slow").startswith(
        "- The staging server is slow in the mornings (added 2026-11-01) (updated 2026-11-30) (source: ")
