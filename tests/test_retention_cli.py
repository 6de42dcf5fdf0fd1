"""`memvault show` carries the entry's retention and status, under the vault's model, counting
the entry's presentations in the files and its recalls (each show is one)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

from memvault.cli import cli
from memvault.vault import Vault


def _day(days_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%d")


def ago(entry_id: str) -> float:
    return (datetime.now(UTC) - datetime.fromisoformat(entry_id + "+00:00")).total_seconds() / 86400


def make_vault(root, model: str):
    (root / "memory").mkdir(exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "UTC"\n\n[decay]\nmodel = "{model}"\n')
    old, mid = _day(200), _day(40)
    (root / "memory" / f"{old}.md").write_text(
        f"# {old}\n\n## 09:00 - Observation\nJörg Wendt arbeitet jetzt beim Zoll in Hamburg-Altona.\n\n"
        "## 10:00 - Belief\nUser likes oolong tea from Taiwan\nImportance: low\n", encoding="utf-8")
    (root / "memory" / f"{mid}.md").write_text(
        f"# {mid}\n\n## 08:00 - Observation\nJörg Wendt arbeitet jetzt beim Zoll in Hamburg-Altona (sagt er wieder)\n",
        encoding="utf-8")
    return f"{old}T09:00", f"{old}T10:00", f"{mid}T08:00"


def show(runner, root, ref, *extra):
    result = runner.invoke(cli, ["--vault", str(root), "show", ref, *extra])
    assert result.exit_code == 0, result.output
    return result.output


def test_show_json_and_text_carry_retention_under_each_model(runner, vault_dir):
    said, tea, _ = make_vault(vault_dir, "forgetting-curve")
    d = json.loads(show(runner, vault_dir, said, "--json"))
    # written ~200.5 days ago, said again ~40.5 days ago (medium), recalled once (this show):
    # ln(200.5^-.5 + 40.5^-.5) + 0.08 = -1.400 → logistic(1.100) = 0.750, active
    assert d["retention"]["presentations"] == 2
    assert d["retention"]["accesses"] == 1
    a = math.log(ago(said) ** -0.5 + ago(f"{_day(40)}T08:00") ** -0.5) + 0.08
    assert abs(d["retention"]["value"] - 1 / (1 + math.exp(-(a + 2.5)))) < 1e-4
    assert (d["retention"]["status"], d["retention"]["model"]) == ("active", "forgetting-curve")
    text = show(runner, vault_dir, tea)
    # low, ~200.5 days, one presentation, one recall: -0.5 ln 200.5 + ln 0.5 + 0.08 = -3.264 → 0.318
    assert "retention 0.32 (fading under forgetting-curve; 1 presentation, 1 recall)" in text

    make_vault(vault_dir, "exponential")
    d = json.loads(show(runner, vault_dir, said, "--json"))
    # the latest presentation is the entry saying it again, ~40.5 days ago: 0.95^40.5 = 0.125, fading
    assert (d["retention"]["status"], d["retention"]["accesses"]) == ("fading", 2)
    assert abs(d["retention"]["value"] - 0.95 ** ago(f"{_day(40)}T08:00")) < 1e-4


def test_show_no_record_counts_no_recall_and_switching_models_changes_no_file(runner, vault_dir):
    said, _, _ = make_vault(vault_dir, "forgetting-curve")
    before = {p: p.read_bytes() for p in (vault_dir / "memory").iterdir()}
    d = json.loads(show(runner, vault_dir, said, "--json", "--no-record"))
    assert d["retention"]["accesses"] == 0
    make_vault(vault_dir, "ebbinghaus")
    show(runner, vault_dir, said, "--json")
    assert {p: p.read_bytes() for p in (vault_dir / "memory").iterdir()} == before
    with Vault.open(vault_dir) as vault:
        assert vault.timeline.recalls.get(said) == 1
