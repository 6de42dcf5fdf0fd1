"""Curate and freeform notes: a note is promoted only when it says it matters (or keeps being
recalled), never for repeating template text; when nothing qualifies, curate says why."""

from __future__ import annotations

import json
from pathlib import Path

from memvault.cli import cli

HEARTBEAT = """## Heartbeat Checklist
- [x] Mails gelesen und sortiert
- [x] Kalender für morgen geprüft
- [x] Backups des Servers kontrolliert
"""


def write_days(root: Path, days: int) -> None:
    for d in range(1, days + 1):
        day = f"2026-03-{d:02d}"
        (root / "memory" / f"{day}.md").write_text(f"# {day} - Tageslog\n\n{HEARTBEAT}\n## Build\nAll green today.\n")


def plan(runner, *args: str) -> dict:
    result = runner.invoke(cli, ["curate", "--at", "2026-03-08", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_template_text_repeated_every_day_is_not_promoted(vault_dir: Path, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    write_days(vault_dir, 7)
    assert plan(runner)["proposals"] == []
    why = runner.invoke(cli, ["curate", "--at", "2026-03-08", "--dry-run"]).output
    assert "left out: 14 a freeform note that does not say it matters" in why
    explained = runner.invoke(cli, ["curate", "--at", "2026-03-08", "--explain", "2026-03-03#heartbeat-checklist"]).output
    assert "does not say it matters" in explained


def test_a_note_that_says_it_matters_is_promoted_but_not_a_code_block(vault_dir: Path, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory" / "2026-03-05.md").write_text(
        "# 2026-03-05\n\n## Server\nDer Staging-Server läuft ab jetzt auf Hetzner in Falkenstein.\nImportance: high\n\n"
        "## Befehl\n```bash\nsystemctl restart quokka-gateway --now\n```\nImportance: high\n")
    proposals = plan(runner)["proposals"]
    assert [p["entries"] for p in proposals] == [["2026-03-05#server"]]
    explained = runner.invoke(cli, ["curate", "--at", "2026-03-08", "--explain", "2026-03-05#befehl"]).output
    assert "code or a table only" in explained
