"""`memvault curate` end to end on fixture vaults: a week of logs, a budget overflow, review."""

from __future__ import annotations

import difflib
import json
import re
import shlex
import shutil
import sys
from datetime import date, datetime
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.curate.document import load_doc
from memvault.curate.promote import StaleMemory, apply, plan_curation
from memvault.curate.sources import curated_sources
from memvault.search import access
from memvault.vault import Vault
from memvault.write.log import log_entry

from .conftest import DATA, plain_vault

AT = "2026-02-22 12:00"
TOOLS = DATA / "curate_tools"
EXPECTED = DATA / "curate_week_expected.md"


def curate(runner, *args, input=None):
    return runner.invoke(cli, ["curate", *args], input=input, catch_exceptions=False)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- a week


def test_dry_run_prints_the_diff_and_changes_nothing(week, runner):
    before = snapshot(week)
    result = curate(runner, "--dry-run", "--at", AT)
    assert result.exit_code == 0, result.output
    assert "--- a/MEMORY.md\n+++ b/MEMORY.md" in result.output
    assert "-- Prefers dark mode (added 2026-02-10)" in result.output
    assert "+- User prefers light mode, not dark mode (added 2026-02-10) (updated 2026-02-19, was: Prefers dark mode)" in result.output
    assert re.search(r"budget: 820 \u2192 2,161 / 8,000 chars", result.output)
    assert snapshot(week) == before


def test_yes_promotes_the_week(week, runner):
    result = curate(runner, "--yes", "--at", AT)
    assert result.exit_code == 0, result.output
    assert "7 added, 1 updated, 1 reconfirmed, 0 archived" in result.output
    assert "budget: 820 \u2192 2,161 / 8,000 chars" in result.output
    assert (week / "MEMORY.md").read_text(encoding="utf-8") == EXPECTED.read_text(encoding="utf-8")


def test_text_curate_did_not_touch_stays_byte_for_byte(week, runner):
    old = (week / "MEMORY.md").read_bytes().split(b"\n")
    curate(runner, "--yes", "--at", AT)
    new = (week / "MEMORY.md").read_bytes().split(b"\n")
    changed = set()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            changed.update(range(i1, i2))
    # Only the two bullets curate updated (lines 9 and 10) were replaced; the rest only grew.
    assert changed == {8, 9}
    assert b"with its odd  double  spaces and trailing spaces.   " in new
    assert b"*   Uses a split keyboard;   spacing kept exactly as typed" in new


def test_crlf_and_bom_are_kept(week, runner):
    path = week / "MEMORY.md"
    original = path.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + original)
    curate(runner, "--yes", "--at", AT)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    expected = EXPECTED.read_bytes().replace(b"\n", b"\r\n")
    assert raw[3:] == expected


def test_bullets_parse_back_and_link_to_their_entries(week, runner):
    curate(runner, "--yes", "--at", AT)
    vault = Vault.open(week)
    assert [str(p) for p in vault.problems] == []
    theme = vault.get("pref-theme")
    assert theme.content == "User prefers light mode, not dark mode"
    assert theme.previous == "Prefers dark mode"
    assert theme.updated.date() == date(2026, 2, 19)
    doc = load_doc((week / "MEMORY.md").read_bytes(), vault.config)
    cites = curated_sources(vault.timeline, doc)
    assert cites["2026-02-19T16:00"] == cites["2026-02-10T09:00"] == "pref-theme"
    # Duplicates across days became one bullet citing both days.
    concise = [b for b in doc.bullets if "concise answers" in b.event.content]
    assert len(concise) == 1
    assert cites["2026-02-16T10:00"] == cites["2026-02-18T12:00"] == concise[0].id
    assert concise[0].id.startswith("mv-")
    # Two entries under the same heading text: the alias keeps them apart.
    assert cites["2026-02-18T12:00-2"] != cites["2026-02-18T12:00"]
    assert "Europe/Berlin" in vault.get(cites["2026-02-18T12:00-2"]).content
    # A reconfirmed hand-written bullet got a stable id and its date bumped.
    english = vault.get(cites["2026-02-20T09:00"])
    assert english.content.startswith("Likes answers in English") and english.updated.date() == date(2026, 2, 20)


def test_second_run_proposes_nothing(week, runner):
    curate(runner, "--yes", "--at", AT)
    after = (week / "MEMORY.md").read_bytes()
    again = curate(runner, "--yes", "--at", AT)
    assert again.exit_code == 0 and again.output.startswith("nothing to curate")
    assert "budget: 2,161 \u2192 2,161 / 8,000 chars" in again.output
    assert (week / "MEMORY.md").read_bytes() == after
    shutil.rmtree(week / ".memvault", ignore_errors=True)  # derived state is not what remembers
    later = json.loads(curate(runner, "--json", "--at", "2026-02-28 12:00").output)
    assert later["proposals"] == [] and later["archives"] == []


def test_sources_alone_keep_it_idempotent_without_the_marker(week, runner):
    curate(runner, "--yes", "--at", AT)
    path = week / "MEMORY.md"
    path.write_text(re.sub(r"\n<!-- memvault: curated .* -->\n", "\n", path.read_text()))
    data = json.loads(curate(runner, "--json", "--at", AT).output)
    assert data["since"] is None
    assert data["proposals"] == []


def test_later_entries_update_and_reconfirm_in_place(week, runner):
    curate(runner, "--yes", "--at", AT)
    vault = Vault.open(week)
    tz = vault.config.tz
    log_entry(vault, "User prefers concise answers without any preamble", type="belief",
              at=datetime(2026, 2, 24, 10, 0, tzinfo=tz))
    log_entry(vault, "User prefers dark mode again after the eye exam", type="correction",
              at=datetime(2026, 2, 24, 11, 0, tzinfo=tz), supersedes="[[2026-02-19#16:00 - Correction]]")
    result = curate(runner, "--yes", "--at", "2026-02-25 12:00")
    assert "0 added, 1 updated, 1 reconfirmed" in result.output
    vault = Vault.open(week)
    theme = vault.get("pref-theme")
    assert theme.content == "User prefers dark mode again after the eye exam"
    assert theme.previous == "User prefers light mode, not dark mode"
    concise = vault.get("mv-2a4f1f")
    assert concise.updated.date() == date(2026, 2, 24)
    at = datetime(2026, 2, 25, 12, 0, tzinfo=tz)
    # The bumped date is a reconfirmation: decay counts from it.
    assert vault.timeline.confirmed_at(concise, at).date() == date(2026, 2, 24)
    assert "[[2026-02-24#10:00 - Belief]]" in (week / "MEMORY.md").read_text()


# ---------------------------------------------------------------------------- explain


def test_explain_says_why_for_every_entry(week, runner):
    items = json.loads(curate(runner, "--explain", "--json", "--at", AT).output)
    why = {d["id"]: d for d in items}
    assert why["2026-02-17T15:00"]["reason"].startswith("trivial: 2 words")
    assert "min_confidence" in why["2026-02-20T10:00"]["reason"]
    assert why["2026-02-20T11:00"]["reason"].startswith("temporary")
    assert "ignore_tags" in why["2026-02-20T12:00"]["reason"]
    assert why["2026-02-21T15:00"]["reason"] == "superseded by 2026-02-22T09:00"
    assert "does not matter enough" in why["2026-02-17T16:00"]["reason"]
    chosen = why["2026-02-19T16:00"]
    assert chosen["chosen"] and chosen["proposal"] == "p1" and "update bullet ^pref-theme" in chosen["reason"]
    assert why["2026-02-18T11:00"]["chosen"] and "said on 2 different days" in why["2026-02-18T11:00"]["reason"]
    assert why["2026-02-21T10:00"]["chosen"] and "reconfirmed by" in why["2026-02-21T10:00"]["reason"]


def test_explain_one_entry_and_recall_counts(week, runner):
    for _ in range(3):
        access.record(week, ["2026-02-17T16:00"])
    one = curate(runner, "--explain", "2026-02-17 16:00", "--at", AT)
    assert one.exit_code == 0
    assert one.output.count("\n") == 1
    assert "chosen" in one.output and "recalled 3 times" in one.output
    missing = curate(runner, "--explain", "2031-01-01T00:00", "--at", AT)
    assert missing.exit_code == 1 and "no entry" in missing.output


def test_explain_after_curation_points_at_the_marker(week, runner):
    curate(runner, "--yes", "--at", AT)
    one = curate(runner, "--explain", "2026-02-17T16:00", "--at", AT)
    assert "before the last curation" in one.output and "--all" in one.output
    again = json.loads(curate(runner, "--explain", "--json", "--all", "--at", AT).output)
    assert any(d["id"] == "2026-02-19T16:00" and "already in MEMORY.md" in d["reason"] for d in again)


# ---------------------------------------------------------------------------- review


@pytest.fixture
def editor(monkeypatch):
    monkeypatch.setenv("EDITOR", f"{shlex.quote(sys.executable)} {shlex.quote(str(TOOLS / 'fake_editor.py'))}")
    return monkeypatch


def test_interactive_accept_skip_edit_quit(week, runner, editor):
    editor.setenv("FAKE_EDIT_TEXT", "Decided: SQLite for the Atlas prototype")
    result = curate(runner, "--interactive", "--at", AT, input="y\nn\ne\ny\nq\n")
    assert result.exit_code == 0, result.output
    assert "(1/9) p1: update bullet ^pref-theme" in result.output
    assert "budget: 820 \u2192 975 / 8,000 chars" in result.output  # with the curation marker
    text = (week / "MEMORY.md").read_text()
    assert "- User prefers light mode, not dark mode (added 2026-02-10) (updated 2026-02-19" in text
    assert "- Likes answers in English, even when asked in German\n" in text
    assert "- Decided: SQLite for the Atlas prototype (added 2026-02-17) (source: [[2026-02-17#09:30 - Decision]]) ^mv-e28759" in text
    assert "staging" not in text.lower()
    assert "memvault: curated" not in text
    assert "stopped early" in result.output


def test_interactive_accepting_everything_equals_yes(week, runner):
    result = curate(runner, "-i", "--at", AT, input="\n" * 9)
    assert result.exit_code == 0, result.output
    assert (week / "MEMORY.md").read_text() == EXPECTED.read_text()


def test_interactive_skipping_everything_records_the_review(week, runner):
    original = (week / "MEMORY.md").read_text()
    result = curate(runner, "-i", "--at", AT, input="n\n" * 9)
    assert "0 added, 0 updated, 0 reconfirmed" in result.output
    text = (week / "MEMORY.md").read_text()
    assert text == original + "\n<!-- memvault: curated 2026-02-22T12:00:00+01:00 -->\n"
    assert curate(runner, "--dry-run", "--at", AT).output.startswith("nothing to curate")


def test_an_edit_that_is_not_one_bullet_is_refused(week, runner, editor):
    editor.setenv("FAKE_EDIT_RAW", "- one bullet\n- and another\n")
    result = curate(runner, "-i", "--at", AT, input="e\nn\nq\n")
    assert "not used: the edited text must be one bullet" in result.output
    assert "stopped; nothing was written" in result.output


def test_review_needs_a_terminal(week, runner):
    result = curate(runner, "--at", AT)
    assert result.exit_code == 2
    assert "--dry-run" in result.output and "--interactive" in result.output


def test_memory_changed_during_review_is_not_overwritten(week, runner, editor):
    path = week / "MEMORY.md"
    original = path.read_text()
    editor.setenv("FAKE_EDIT_TEXT", "Prefers light mode")
    editor.setenv("FAKE_EDIT_TOUCH", str(path))
    result = curate(runner, "-i", "--at", AT, input="e\ny\nq\n")
    assert result.exit_code == 1
    assert "changed on disk since curate read it; nothing was written" in result.output
    assert path.read_text() == original + "- written in Obsidian while curate was waiting\n"


def test_library_apply_refuses_a_stale_plan(week):
    vault = Vault.open(week)
    plan = plan_curation(vault, at=datetime(2026, 2, 22, 12, 0, tzinfo=vault.config.tz))
    path = week / "MEMORY.md"
    path.write_text(path.read_text().replace("Learn Rust", "Learn Zig"))
    with pytest.raises(StaleMemory):
        apply(vault, plan)
    assert "Learn Zig" in path.read_text() and "light mode" not in path.read_text()


def test_json_yes_reports_what_was_applied(week, runner):
    data = json.loads(curate(runner, "--json", "--yes", "--at", AT).output)
    assert data["applied"] is True and data["curation_point_recorded"] is True
    assert data["counts"] == {"add": 7, "update": 1, "reconfirm": 1, "archive": 0}
    assert data["proposals"][0]["lines"][0].endswith("^pref-theme")
    assert data["budget"]["after"]["chars"] == len(EXPECTED.read_text())


def test_flags_that_contradict_each_other(week, runner):
    result = curate(runner, "--dry-run", "--yes")
    assert result.exit_code == 2 and "cannot be used together" in result.output


def test_a_vault_without_memory_md_gets_one(vault_dir, runner):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\n## 14:30 - Decision\nAgreed to check in weekly on Atlas progress\n")
    result = curate(runner, "--yes", "--at", AT)
    assert result.exit_code == 0, result.output
    text = (vault_dir / "MEMORY.md").read_text()
    assert text.startswith("# Long-Term Memory\n\n## Decisions\n- Agreed to check in weekly on Atlas progress (added 2026-02-21)")
    assert text.endswith("]]) ^mv-140640\n\n<!-- memvault: curated 2026-02-22T12:00:00+01:00 -->\n")


# ----------------------------------------------------------------------------- budget


def test_budget_overflow_archives_the_most_expendable(over, runner):
    dry = curate(runner, "--dry-run", "--at", AT)
    assert "a1: archive bullet ^hermes" in dry.output and "a2: archive bullet ^old-tabs" in dry.output
    assert "old-email" not in dry.output.split("---")[0]
    assert "budget: 567 \u2192 1,039 / 1,090 chars" in dry.output and "OVER" not in dry.output
    result = curate(runner, "--yes", "--at", AT)
    assert "4 added, 0 updated, 0 reconfirmed, 2 archived (to MEMORY.archive.md)" in result.output
    text = (over / "MEMORY.md").read_text()
    assert len(text) <= 1090
    assert "^hermes" not in text and "^old-tabs" not in text and "^old-email" in text
    archive = (over / "MEMORY.archive.md").read_text()
    assert "- Hermes: migrate the mail server to the new host (added 2025-09-15) (source: [[2025-09-15#10:00 - Decision]]) ^hermes\n" in archive
    assert "was superseded (2025-09-15T10:00 by 2026-01-10T10:00)" in archive
    assert "- Prefers tabs over spaces in every editor (added 2025-06-01) ^old-tabs\n" in archive


def test_budget_that_cannot_be_met_is_said_loudly(over, runner):
    cfg = over / "memvault.toml"
    cfg.write_text(cfg.read_text().replace("budget_chars = 1090", "budget_chars = 600"))
    data = json.loads(curate(runner, "--json", "--at", AT).output)
    assert data["budget"]["over"] is True and data["budget"]["chars"] == 600
    assert len(data["archives"]) == 3
    assert "over its budget" in data["warnings"][0]
    result = curate(runner, "--yes", "--at", AT)
    assert "OVER BUDGET" in result.output and "warning: MEMORY.md is over its budget" in result.output


def test_keeping_a_bullet_in_review_offers_the_next_one(over, runner):
    result = curate(runner, "-i", "--at", AT, input="\n" * 4 + "n\ny\n\n")
    assert "archive bullet ^hermes" in result.output and "archive bullet ^old-email" in result.output
    text = (over / "MEMORY.md").read_text()
    assert "^hermes" in text and "^old-tabs" not in text and "^old-email" not in text
    # Keeping hermes leaves it 4 characters over: said, not hidden.
    assert len(text) == 1094
    assert "budget: 567 \u2192 1,094 / 1,090 chars  OVER BUDGET" in result.output
    assert "warning: MEMORY.md is over its budget" in result.output


def test_budget_in_lines(over, runner):
    cfg = over / "memvault.toml"
    cfg.write_text(cfg.read_text().replace("budget_chars = 1090", "budget_chars = 0\nbudget_lines = 19"))
    data = json.loads(curate(runner, "--json", "--at", AT).output)
    assert data["budget"]["lines"] == 19 and data["budget"]["after"]["lines"] <= 19
    assert [a["bullet"] for a in data["archives"]] == ["hermes", "old-tabs"]


# ------------------------------------------------------------------------------ --with


def fake(mode: str | None = None) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(TOOLS / 'fake_curator.py'))}"


def test_with_rewrites_and_merges(week, runner, monkeypatch, tmp_path):
    saved = tmp_path / "payload.json"
    monkeypatch.setenv("FAKE_CURATOR_SAVE", str(saved))
    result = curate(runner, "--with", fake(), "--yes", "--at", AT)
    assert result.exit_code == 0, result.output
    payload = json.loads(saved.read_text())
    assert payload["protocol"] == "memvault-curate/1"
    first = payload["candidates"][0]
    assert first["kind"] == "update" and first["entries"][0]["content"] == "User prefers light mode, not dark mode"
    text = (week / "MEMORY.md").read_text()
    assert ("- Prefers light mode (added 2026-02-10) (updated 2026-02-19, was: dark mode) (source: [[2026-02-10#09:00 - Belief]], "
            "[[2026-02-19#16:00 - Correction]]) ^pref-theme\n") in text
    merged = [ln for ln in text.splitlines() if ln.startswith("- Atlas: SQLite prototype")]
    assert len(merged) == 1
    assert all(link in merged[0] for link in (
        "[[2026-02-17#09:30 - Decision]]", "[[2026-02-17#11:00 - Observation]]", "[[2026-02-21#10:00 - Observation]]"))
    active = text.split("## Active Projects", 1)[1].split("\n## ", 1)[0]
    assert merged[0] in active
    assert "Use SQLite for the Atlas prototype" not in text


def test_with_output_goes_through_the_same_review(week, runner):
    result = curate(runner, "--with", fake(), "-i", "--at", AT, input="y\nq\n")
    assert "p1: update bullet ^pref-theme (line 9)  [rewritten by --with]" in result.output
    assert "- Prefers light mode (added 2026-02-10) (updated 2026-02-19, was: dark mode)" in (week / "MEMORY.md").read_text()


@pytest.mark.parametrize(("mode", "message"), [
    ("fail", "exited with status 3"),
    ("garbage", "did not print JSON"),
    ("multiline", "must be one line"),
    ("unknown-key", "unknown key 'p999'"),
    ("secret", "looks like it holds a secret"),
])
def test_with_a_bad_answer_changes_nothing(week, runner, monkeypatch, mode, message):
    monkeypatch.setenv("FAKE_CURATOR_MODE", mode)
    before = snapshot(week)
    result = curate(runner, "--with", fake(), "--yes", "--at", AT)
    assert result.exit_code == 1
    assert message in result.output and "nothing was changed" in result.output
    assert snapshot(week) == before


def test_with_a_missing_command(week, runner):
    result = curate(runner, "--with", "no-such-curator-cmd --flag", "--dry-run", "--at", AT)
    assert result.exit_code == 1 and "command not found: no-such-curator-cmd" in result.output


# ----------------------------------------------------------------- the seed's own vault


def test_the_seed_vault_knows_what_was_corrected_by_hand(sample_vault, runner):
    items = json.loads(curate(runner, "--explain", "--json", "--at", AT).output)
    why = {d["id"]: d["reason"] for d in items}
    assert why["2026-02-14T15:00"].startswith("MEMORY.md already corrected it")
    assert why["2026-02-14T14:30"] == "superseded by 2026-02-21T16:00"
    vault = Vault.open(sample_vault)
    # The person already wrote the light-mode update; the correction only adds its source.
    log_entry(vault, "User prefers light mode, not dark mode", type="correction",
              at=datetime(2026, 2, 21, 16, 5, tzinfo=vault.config.tz), supersedes="2026-02-14T15:00")
    curate(runner, "--yes", "--at", AT)
    text = (sample_vault / "MEMORY.md").read_text()
    assert ("- Prefers light mode (updated 2026-02-21, was: dark mode) (source: [[2026-02-21#16:05 - Correction]]) "
            "^mv-") in text
    assert "dark mode in every tool" not in text
    assert text.startswith("# Long-Term Memory\n\n## User Preferences\n")


def test_repeats_of_a_bullet_reconfirm_it_instead_of_adding(vault_dir, runner):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "MEMORY.md").write_text("# M\n\n## Notes\n- The staging server is slow in the mornings\n")
    (vault_dir / "memory").mkdir()
    for day in ("2026-02-20", "2026-02-21"):
        (vault_dir / "memory" / f"{day}.md").write_text(
            f"# {day}\n\n## 09:00 - Observation\nStaging server slow again this morning, in the mornings it crawls\n")
    data = json.loads(curate(runner, "--json", "--at", AT).output)
    assert [(p["kind"], p["entries"]) for p in data["proposals"]] == [
        ("reconfirm", ["2026-02-20T09:00", "2026-02-21T09:00"])]
    assert data["proposals"][0]["lines"][0].startswith(
        "- The staging server is slow in the mornings (updated 2026-02-21) (source: [[2026-02-20#09:00 - Observation]], ")


def test_a_failing_editor_in_curate_review_keeps_the_review_going(runner, vault_dir, monkeypatch):
    # EDITOR=false (or a typo'd editor) aborted the whole review: what was accepted was lost.
    plain_vault(vault_dir)
    (vault_dir / "MEMORY.md").write_text("# Long-Term Memory\n\n## Decisions\n")
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(day.read_text() + "\n## 10:00 - Decision\nUse SQLite for the Atlas prototype\n")
    monkeypatch.setenv("EDITOR", "false")
    result = runner.invoke(cli, ["curate", "-i", "--at", "2026-02-22 12:00"], input="y\ne\nn\n")
    assert result.exit_code == 0, result.output
    assert "not used: " in result.output and "$EDITOR" in result.output
    memory = (vault_dir / "MEMORY.md").read_text()
    assert "User likes tea" in memory and "Use SQLite" not in memory


def test_check_accepts_the_id_aliased_source_links_curate_writes(runner, vault_dir):
    # Two corrections logged in the same second share a heading; curate links each with its id as
    # the alias (`[[2026-02-21#10:00:05 - Correction|2026-02-21T10:00-2]]`), and the next `check`
    # warned MV402 "ambiguous" on its own output because the parser keeps only the link's target.
    plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-22.md").write_text(
        "# 2026-02-22\n\n## 10:00:05 - Correction\nWeekly updates move to Monday mornings\n\n"
        "## 10:00:05 - Correction\nDeploys happen only on Tuesdays now\n")
    (vault_dir / "MEMORY.md").write_text("# Long-Term Memory\n\n## Notes\n")
    applied = runner.invoke(cli, ["curate", "--yes", "--at", "2026-02-23", "--json"])
    assert applied.exit_code == 0, applied.output
    memory = (vault_dir / "MEMORY.md").read_text()
    assert "|2026-02-22T10:00-2]]" in memory, memory
    check = runner.invoke(cli, ["check", "--json"])
    assert '"problems": []' in check.output, check.output
    # an alias that is no entry's id does not hide the ambiguity
    (vault_dir / "MEMORY.md").write_text(memory.replace("|2026-02-22T10:00-2]]", "|nope]]"))
    assert '"MV402"' in runner.invoke(cli, ["check", "--json"]).output
