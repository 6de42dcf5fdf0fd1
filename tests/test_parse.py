"""The daily-log and MEMORY.md parser: the seed's example, Obsidian notes, bad input."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from memvault.config.core import Config
from memvault.entries.daily import log_date, parse_log
from memvault.entries.markdown import inline_tags
from memvault.entries.memory_md import parse_memory
from memvault.vault import Vault

from .conftest import DATA, copy_vault

UTC_CFG = Config(timezone="UTC")
SEED_LOG = (DATA / "seed" / "memory" / "2026-02-21.md").read_text()


def test_seed_example_parses_verbatim():
    parsed = parse_log(SEED_LOG, "memory/2026-02-21.md", UTC_CFG)
    assert parsed.problems == []
    assert [(e.id, e.type) for e in parsed.events] == [
        ("2026-02-21T09:15", "observation"),
        ("2026-02-21T14:30", "decision"),
        ("2026-02-21T16:00", "correction"),
    ]
    obs, dec, cor = parsed.events
    assert obs.content == 'User mentioned they\'re starting a new project called "Atlas"'
    assert dec.content == "Agreed to check in weekly on Atlas progress"
    assert cor.content == "User prefers weekly updates on Monday, not Friday"
    assert cor.supersedes == "belief about Friday updates from 2026-02-14"
    assert cor.timestamp == datetime(2026, 2, 21, 16, 0, tzinfo=ZoneInfo("UTC"))
    assert (cor.line, cor.end_line) == (9, 11)


def test_times_without_zone_use_the_vault_zone():
    parsed = parse_log(SEED_LOG, "memory/2026-02-21.md", Config(timezone="Europe/Berlin"))
    assert parsed.events[0].timestamp.utcoffset().total_seconds() == 3600


def test_same_minute_ids_get_suffixes_in_file_order_and_explicit_id_wins():
    text = "# 2026-02-21\n\n## 09:15 - Belief\na\n\n## 09:15:30 - Belief\nb\n\n## 09:15 - Decision\nc\nId: D1:3\n\n## 09:15 - Belief\nd\n"
    ids = [e.id for e in parse_log(text, "memory/2026-02-21.md", UTC_CFG).events]
    assert ids == ["2026-02-21T09:15", "2026-02-21T09:15-2", "D1:3", "2026-02-21T09:15-4"]


def test_metadata_keys_are_case_insensitive_and_values_parsed():
    text = (
        "# 2026-02-21\n\n## 10:00 - BELIEF - about coffee\nLikes coffee #Drinks\n\n"
        "confidence: 0.6\nTAGS: morning, #habits\nimportance: high\nSource: user\n"
        "Expires: 2026-03-01\nScope: global\nReconfirms: 2026-02-20T09:00\n"
    )
    (ev,) = parse_log(text, "memory/2026-02-21.md", UTC_CFG).events
    assert ev.type == "belief" and ev.title == "about coffee"
    assert ev.content == "Likes coffee #Drinks"
    assert ev.confidence0 == 0.6 and ev.importance == 0.9 and ev.source == "user"
    assert ev.tags == ("morning", "habits", "drinks")
    assert ev.expires == datetime(2026, 3, 1, tzinfo=ZoneInfo("UTC"))
    assert ev.scope == "global" and ev.reconfirms == ("2026-02-20T09:00",)


def test_prose_with_a_colon_at_the_end_stays_content():
    text = "# 2026-02-21\n\n## 10:00 - Observation\nNote: the build is red\nReason: flaky test\n"
    (ev,) = parse_log(text, "memory/2026-02-21.md", UTC_CFG).events
    assert ev.content == "Note: the build is red\nReason: flaky test"


def test_obsidian_vault_keeps_links_blocks_callouts_code_and_frontmatter(vault_dir):
    copy_vault("obsidian", vault_dir)
    vault = Vault.open(vault_dir)
    assert vault.problems == []
    by_id = vault.timeline.by_id
    kickoff = by_id["2026-03-04T09:00"]
    assert kickoff.links == ("People/Dana", "Atlas")
    assert kickoff.block_ids == ("kickoff",)
    assert "> [!note] Callout" in kickoff.content and "| docs | Dana  |" in kickoff.content
    assert kickoff.source == "session:2026-03-04-a"  # frontmatter default
    assert vault.files["memory/2026/03/2026-03-04.md"].frontmatter["date"] == "2026-03-04"
    belief = by_id["2026-03-04T09:00-2"]
    assert belief.confidence0 == 0.7
    assert belief.tags == ("work", "atlas", "risk", "atlas/launch")
    decision = by_id["2026-03-04T11:30"]
    assert "## 12:00 - Belief" in decision.content  # inside a code block: not a heading
    assert decision.tags == ("work", "atlas", "release")  # nothing from the code block or the URL
    assert decision.importance == 0.9
    assert vault.timeline.supersedes["2026-03-04T14:00"] == "2026-03-04T09:00-2"
    lesson = by_id["L-1"]
    assert lesson.type == "lesson" and lesson.scope == "project:atlas"
    assert vault.timeline.reconfirmed_by["2026-03-04T09:00"] == ["L-1"]


def test_inline_tags_ignore_code_urls_and_headings():
    text = "Real #tag and `#code` and http://x.org/a#frag and #123 and issue#7\n```\n#fenced\n```\n# Heading"
    assert inline_tags(text) == ["tag"]


@pytest.mark.parametrize(
    "name, expected",
    [("2026-02-21.md", "2026-02-21"), ("2026-02-30.md", None), ("notes.md", None), ("2026-2-1.md", None)],
)
def test_log_date_from_file_name(name, expected):
    got = log_date(name)
    assert (got.isoformat() if got else None) == expected


def test_messy_vault_reports_each_problem_and_keeps_the_rest(vault_dir):
    copy_vault("messy", vault_dir)
    vault = Vault.open(vault_dir)
    found = {(p.path, p.line, p.severity) for p in vault.problems}
    expected = {
        ("memory/2026-01-05.md", 6, "error"),  # 25:00
        ("memory/2026-01-05.md", 9, "error"),  # unknown type
        ("memory/2026-01-05.md", 14, "error"),  # confidence 1.7
        ("memory/2026-01-05.md", 19, "error"),  # missing dash
        ("memory/2026-01-05.md", 22, "error"),  # unresolved supersedes
        ("memory/2026-01-06.md", 3, "error"),  # frontmatter
        ("memory/2026-01-06.md", 7, "warning"),  # invalid utf-8
        ("memory/2026-01-09.md", 7, "error"),  # duplicate id
        ("memory/2026-01-09.md", 11, "error"),  # self supersession
        ("memory/2026-01-09.md", 16, "error"),  # ambiguous
        ("memory/2026-02-30.md", 1, "error"),
    }
    assert found == expected
    contents = {e.content for e in vault.events}
    assert "CRLF file with a BOM and a lower-case type." in contents
    assert "Valid after the broken ones." in contents
    assert any(c.startswith("Broken frontmatter above") for c in contents)
    ambiguous = next(p for p in vault.problems if p.line == 16 and p.path.endswith("09.md"))
    assert "X1 (memory/2026-01-09.md:3)" in ambiguous.message


def test_huge_and_empty_files_parse(tmp_path):
    body = "".join(f"## {h:02d}:{m:02d} - Observation\nline {h} {m}\n\n" for h in range(24) for m in range(60))
    text = "# 2026-01-01\n\n" + body * 40  # ~1.4 MB, 57,600 entries
    parsed = parse_log(text, "memory/2026-01-01.md", UTC_CFG)
    assert len(parsed.events) == 57600
    assert parsed.events[-1].id == "2026-01-01T23:59-40"
    assert parse_log("", "memory/2026-01-01.md", UTC_CFG).events == []


def test_memory_md_sections_annotations_and_ids():
    text = (DATA / "seed" / "MEMORY.md").read_text() + (
        "\n## Decisions\n- Use Postgres (source: [[2026-02-21#14:30 - Decision]]) ^mv-1a2b3c\n"
        "  - nested detail belongs to the parent\n\nSome prose, not an entry.\n"
    )
    parsed = parse_memory(text, "MEMORY.md", UTC_CFG)
    by_content = {e.content.split("\n")[0]: e for e in parsed.events}
    light = by_content["Prefers light mode"]
    assert light.category == "User Preferences" and light.type == "belief"
    assert light.updated == datetime(2026, 2, 21, tzinfo=ZoneInfo("UTC")) and light.previous == "dark mode"
    pg = by_content["Use Postgres"]
    assert pg.id == "mv-1a2b3c" and pg.type == "decision"
    assert pg.sources == ("2026-02-21#14:30 - Decision",)
    assert "nested detail belongs to the parent" in pg.content
    assert all("prose" not in e.content for e in parsed.events if not e.is_note)
    prose = [e for e in parsed.events if e.is_note]
    assert [(e.id, e.kind, e.content, e.timestamp) for e in prose] == [
        ("MEMORY.md#decisions", "curated", "Some prose, not an entry.", None)]
    assert by_content["Weekly check-ins on Monday"].id == "M:user-preferences:weekly-check-ins-on-monday"


def test_memory_ids_survive_reordering():
    a = "# M\n\n## Prefs\n- Likes tea\n- Likes cake\n"
    b = "# M\n\n## Prefs\n- Likes cake\n- Likes tea\n"
    ids_a = {e.content: e.id for e in parse_memory(a, "MEMORY.md", UTC_CFG).events}
    ids_b = {e.content: e.id for e in parse_memory(b, "MEMORY.md", UTC_CFG).events}
    assert ids_a == ids_b


def test_fifty_megabyte_log_parses_with_a_warning(vault_dir):
    (vault_dir / "memory").mkdir()
    big = "# 2026-01-01\n\n## 09:00 - Observation\n" + ("word " * 20 + "\n") * 500_000 + "\n## 10:00 - Belief\nafter\n"
    (vault_dir / "memory" / "2026-01-01.md").write_text(big)
    vault = Vault.open(vault_dir)
    assert [e.id for e in vault.events] == ["2026-01-01T09:00", "2026-01-01T10:00"]
    assert [p.code for p in vault.problems] == ["MV103"]


@pytest.mark.parametrize(("key", "code", "expected"), [
    ("confidence", "MV202", "is not a number between 0 and 1"),
    ("importance", "MV203", "is not high, medium, low or 0-1"),
])
def test_a_bad_score_reads_the_same_in_front_matter_and_in_an_entry(key, code, expected):
    """One check for a score, wherever it is set: same code, same words."""
    text = f"---\n{key}: 1.7\n---\n# 2026-02-21\n\n## 09:00 - Observation\nA note.\n{key.capitalize()}: 1.7\n"
    parsed = parse_log(text, "memory/2026-02-21.md", UTC_CFG)
    found = [(p.line, p.code, p.message) for p in parsed.problems]
    assert found == [
        (1, code, f"frontmatter {key.capitalize()}: 1.7 {expected}"),
        (8, code, f"{key.capitalize()}: '1.7' {expected}"),
    ]
