"""Finding the event a person names by what memvault printed (memvault/entries/lookup.py):
ids, their starts, search's `file#Lx-Ly` and check's `file:line`, over a parsed vault."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.entries.lookup import place
from memvault.errors import NotFoundError
from memvault.vault import Vault

from .conftest import copy_vault

CURATED = """# Memory

Kurz vorweg: alles hier ist kuratiert.

## User Preferences
- Prefers tea in the morning
- Dislikes long meetings

Und ein Absatz dazwischen, über beiden Listen.

- Works from Leipzig on Fridays
"""


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    copy_vault("notes", vault_dir)
    (vault_dir / "MEMORY.md").write_text(CURATED)
    (vault_dir / "memory" / "2026-03-22.md").write_text(
        "# 2026-03-22\n\n## Lofi Shaman Session\nSetlist geprobt\n\n## Lofi Beats\nneue Platten\n\n"
        "## Lofi Shaman Session\nzweite Probe\n")
    return Vault.open(vault_dir)


@pytest.mark.parametrize("spec, where", [
    ("memory/2026-02-01.md#L12-L15", ("memory/2026-02-01.md", 12, 15)), ("memory/2026-02-01.md#L12", ("memory/2026-02-01.md", 12, 12)),
    ("memory/2026-02-01.md:12", ("memory/2026-02-01.md", 12, 12)), ("memory/2026-02-01.md:12:1:", ("memory/2026-02-01.md", 12, 12)),
    ("memory/2026-01-26 notes.md:3", ("memory/2026-01-26 notes.md", 3, 3)), ("MEMORY.md#L6-L6", ("MEMORY.md", 6, 6)),
    ("memory/2026-02-01.md#L15-L12", ("memory/2026-02-01.md", 15, 15)),
    ("2026-02-01T09:15", None), ("2026-02-01#was-passiert-ist", None), ("memory/2026-02-01.md", None),
    ("memory/2026-02-01.txt:3", None), ("[[2026-02-01#09:15]]", None),
])
def test_place(spec, where):
    assert place(spec) == where


def test_a_citation_or_a_problems_place_names_the_event_covering_it(vault: Vault):
    for spec in ("memory/2026-02-01.md#L24-L27", "memory/2026-02-01.md:26", "memory/2026-02-01.md:27:1:",
                 "./memory/2026-02-01.md:25", "2026-02-01.md:24", f"{vault.root}/memory/2026-02-01.md:24"):
        assert vault.find(spec).id == "2026-02-01T09:15", spec
    assert vault.find("memory/2026-02-01.md:9").id == "2026-02-01#was-passiert-ist/build-action"
    assert vault.find("memory/2026-02-02.md#L8-L9").id == "2026-02-02#log@14:30-2"  # a timed bullet's note
    # Blank lines between sections: the first covered line of the range counts.
    assert vault.find("memory/2026-02-01.md#L11-L13").id == "2026-02-01#was-passiert-ist/heartbeat-checklist"


def test_memory_md_bullets_win_over_the_prose_around_them(vault: Vault):
    prose = vault.find("MEMORY.md:9")
    assert prose.is_note and prose.content.startswith("Und ein Absatz") and (prose.line, prose.end_line) == (5, 9)
    # The section's note starts at its heading, so its lines enclose the bullets: the innermost wins.
    assert vault.find("MEMORY.md#L7-L7").id == "M:user-preferences:dislikes-long-meetings"
    assert vault.find("MEMORY.md:11").id == "M:user-preferences:works-from-leipzig-on-fridays"
    assert vault.find("MEMORY.md:3").id == "MEMORY.md#_"


def test_nothing_at_a_place_says_what_is_near(vault: Vault):
    with pytest.raises(NotFoundError, match=r"nothing in memory/2026-02-01.md:4: .*nearest: 2026-02-01#_ \(L1-L3\)"):
        vault.find("memory/2026-02-01.md:4")
    with pytest.raises(NotFoundError, match="no file memory/2026-09-09.md in the vault"):
        vault.find("memory/2026-09-09.md:3")


def test_the_start_of_an_id_names_it_when_it_is_the_only_one(vault: Vault):
    assert vault.find("2026-03-22#lofi-b").id == "2026-03-22#lofi-beats"
    assert vault.find("2026-02-05-memory-leak-incident#root").id == "2026-02-05-memory-leak-incident#root-cause"
    with pytest.raises(NotFoundError) as err:
        vault.find("2026-03-22#lofi")
    assert str(err.value) == ("'2026-03-22#lofi' starts 3 ids: 2026-03-22#lofi-beats, 2026-03-22#lofi-shaman-session, "
                              "2026-03-22#lofi-shaman-session~2; give more of one")
    # An exact id wins over the longer ones it starts; references still resolve; get stays strict.
    assert vault.find("2026-03-22#lofi-shaman-session").content == "Setlist geprobt"
    assert vault.find("2026-02-01 09:15").id == "2026-02-01T09:15"
    with pytest.raises(NotFoundError):
        vault.get("2026-03-22#lofi-b")
