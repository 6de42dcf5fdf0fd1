"""MEMORY.md's prose as curated notes: searchable, never rewritten or archived by curate."""

from __future__ import annotations

import json
from pathlib import Path

from memvault.cli import cli
from memvault.config.core import Config
from memvault.entries.memory_md import parse_memory
from memvault.vault import Vault

MEMORY = """# MEMORY.md - Long-Term Memory

Was dieser Agent über Jana weiß; gepflegt von Hand und von `memvault curate`.

## Router Installation (2026-03-06)

**What:** Quillrouter is a plugin that routes between 41 models.

```bash
curl -fsSL https://example.invalid/install | bash
```

**Wallet generated:**
- EVM (Base): `0xcf4Dbc2aB3FC6C147443aE45f3A50726E76A49b7`
- Key file: `~/.quill/wallet.key`

### Accounts
- Email: jana@example.org

## Vorlieben
- Trinkt morgens Matcha statt Kaffee
"""


def parse(text: str = MEMORY):
    return parse_memory(text, "MEMORY.md", Config())


def test_prose_runs_are_curated_notes_and_bullets_stay_entries():
    events = parse().events
    notes = {e.id: e for e in events if e.is_note}
    assert set(notes) == {"MEMORY.md#_", "MEMORY.md#router-installation-2026-03-06"}
    intro, router = notes["MEMORY.md#_"], notes["MEMORY.md#router-installation-2026-03-06"]
    assert "gepflegt von Hand" in intro.content and intro.kind == "curated" and intro.timestamp is None
    assert "Quillrouter" in router.content and "curl -fsSL" in router.content
    assert "0xcf4D" not in router.content  # the bullets are entries of their own
    assert router.category == "Router Installation (2026-03-06)" and router.location.startswith("MEMORY.md#L5-")
    bullets = [e for e in events if not e.is_note]
    assert [e.content for e in bullets][-1] == "Trinkt morgens Matcha statt Kaffee"
    assert any("jana@example.org" in e.content for e in bullets)


def test_a_heading_over_bullets_only_is_no_note():
    assert not [e for e in parse("# M\n\n## Prefs\n- Likes tea\n\n### Sub\n- Likes cake\n").events if e.is_note]


def test_note_ids_do_not_move_when_other_sections_change():
    before = {e.id for e in parse().events if e.is_note}
    edited = MEMORY.replace("## Vorlieben\n", "## Vorlieben\n\nNeu: ein Absatz über Tee.\n\n")
    after = {e.id for e in parse(edited).events if e.is_note}
    assert after == before | {"MEMORY.md#vorlieben"}


def test_search_finds_prose_and_curate_leaves_it_alone(vault_dir: Path, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "MEMORY.md").write_text(MEMORY)
    (vault_dir / "memory" / "2026-03-07.md").write_text(
        "# 2026-03-07\n\n## 09:00 - Belief\nJana prefers Matcha in the morning.\nImportance: high\n")
    hits = json.loads(runner.invoke(cli, ["search", "--json", "Quillrouter"]).output)
    assert hits[0]["id"] == "MEMORY.md#router-installation-2026-03-06"
    result = runner.invoke(cli, ["curate", "--yes", "--at", "2026-03-08"])
    assert result.exit_code == 0, result.output
    text = (vault_dir / "MEMORY.md").read_text()
    for part in ("**What:** Quillrouter is a plugin", "curl -fsSL", "gepflegt von Hand"):
        assert part in text
    with Vault.open(vault_dir) as vault:
        assert {e.id for e in vault.events if e.is_note and e.kind == "curated"} == {
            "MEMORY.md#_", "MEMORY.md#router-installation-2026-03-06"}
    check = json.loads(runner.invoke(cli, ["check", "--json"]).output)
    assert [p["code"] for p in check["problems"] if p["path"] == "MEMORY.md"] == []


def test_memory_md_and_a_memory_file_of_the_same_name_never_share_ids(vault_dir: Path):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "MEMORY.md").write_text("# Memory\n\n## Context\nKuratiert.\n")
    (vault_dir / "memory" / "MEMORY.md").write_text("# Memory\n\n## Context\nAlte Kopie.\n")
    with Vault.open(vault_dir) as vault:
        ids = [e.id for e in vault.events]
        assert sorted(ids) == ["MEMORY#_", "MEMORY#context", "MEMORY.md#context"]
        assert not [p for p in vault.problems if p.code == "MV010"]
