"""The curate review as a library object, driven without click: decisions, re-planning, the write."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.curate.document import load_doc
from memvault.curate.promote import plan_curation
from memvault.curate.review import Review, apply_all, budget_line
from memvault.entries.timeparse import parse_time
from memvault.errors import InputError
from memvault.vault import Vault

from .conftest import DATA, copy_vault

AT = "2026-02-22 12:00"
EXPECTED = DATA / "curate_week_expected.md"
MARKER = "<!-- memvault: curated 2026-02-22T12:00:00+01:00 -->"


def review(root: Path) -> Review:
    vault = Vault.open(root)
    return Review(vault, plan_curation(vault, at=parse_time(AT, vault.config.tz, day_end=True)))


def keys(r: Review) -> list[str]:
    """Accept every step, noting each proposal's key and kind."""
    seen = []
    while r.step is not None:
        seen.append(f"{r.step.proposal.key}:{r.step.proposal.kind}")
        r.accept()
    return seen


def test_each_step_shows_the_proposal_its_place_and_the_budget_if_accepted(week):
    r = review(week)
    step = r.step
    assert step is not None and (step.number, step.total) == (1, 9)
    assert step.proposal.kind == "update" and step.proposal.bullet == "pref-theme" and step.editable
    assert budget_line(step.budget) == "budget: 820 \u2192 975 / 8,000 chars"  # with the curation marker
    assert step.draft() == "\n".join(step.proposal.lines) + "\n"


def test_accepting_everything_writes_what_yes_writes(week, tmp_path):
    r = review(week)
    assert keys(r)[:2] == ["p1:update", "p2:reconfirm"] and r.step is None
    result = r.finish()
    assert result is not None and result["curation_point_recorded"] is True
    assert result["counts"] == {"add": 7, "update": 1, "reconfirm": 1, "archive": 0}
    assert (week / "MEMORY.md").read_text() == EXPECTED.read_text()
    (tmp_path / "again").mkdir()
    again = copy_vault("curate_week", tmp_path / "again")
    vault = Vault.open(again)
    assert apply_all(vault, plan_curation(vault, at=parse_time(AT, vault.config.tz, day_end=True))) == result | {
        "memory": str(again / "MEMORY.md")}


def test_accept_skip_edit_quit(week):
    r = review(week)
    r.accept()  # p1: the update
    r.skip()  # p2: the reconfirm
    r.edit(r.step.draft().replace("- Use SQLite", "- Decided: SQLite", 1))
    assert r.step.number == 3 and "Decided: SQLite" in r.step.proposal.lines[0]  # shown again, edited
    r.accept()
    r.quit()
    assert r.step is None and r.stopped
    result = r.finish()
    assert result is not None and result["counts"] == {"add": 1, "update": 1, "reconfirm": 0, "archive": 0}
    assert result["curation_point_recorded"] is False  # skipped entries come back next time
    text = (week / "MEMORY.md").read_text()
    assert "- User prefers light mode, not dark mode (added 2026-02-10) (updated 2026-02-19" in text
    assert "- Decided: SQLite for the Atlas prototype; revisit at 10k users. (added 2026-02-17)" in text
    assert "- Likes answers in English, even when asked in German\n" in text
    assert "memvault: curated" not in text


def test_an_edit_that_is_not_one_bullet_is_refused_and_an_emptied_one_skips(week):
    r = review(week)
    with pytest.raises(InputError, match="must be one bullet"):
        r.edit("- one\n- two\n")
    assert r.step.number == 1 and r.step.proposal.bullet == "pref-theme"  # nothing decided
    r.edit("\n\n")
    assert r.step.number == 2 and r.accepted == {}


def test_quitting_before_accepting_anything_writes_nothing(week):
    before = (week / "MEMORY.md").read_bytes()
    r = review(week)
    r.skip()
    r.quit()
    assert r.finish() is None
    assert (week / "MEMORY.md").read_bytes() == before


def test_skipping_everything_records_the_review(week):
    original = (week / "MEMORY.md").read_text()
    r = review(week)
    while r.step is not None:
        r.skip()
    result = r.finish()
    assert result is not None and result["counts"]["add"] == 0
    assert (week / "MEMORY.md").read_text() == original + f"\n{MARKER}\n"


def test_finishing_before_the_end_stops_there(week):
    r = review(week)
    r.accept()
    result = r.finish()
    assert r.stopped and result is not None and result["counts"]["update"] == 1
    assert "memvault: curated" not in (week / "MEMORY.md").read_text()


def test_no_decision_after_the_end(week):
    r = review(week)
    r.quit()
    for decide in (r.accept, r.skip, r.quit, lambda: r.edit("- x\n")):
        with pytest.raises(InputError, match="review is over"):
            decide()


def test_archives_are_replanned_from_what_was_accepted_and_kept(over):
    r = review(over)
    for _ in range(4):
        assert r.step.proposal.kind == "add"
        r.accept()
    step = r.step
    assert (step.proposal.key, step.proposal.bullet, step.number, step.total) == ("a1", "hermes", 1, 2)
    assert not step.editable
    with pytest.raises(InputError, match="accept or skip"):
        r.edit(step.draft())
    r.skip()  # keep hermes: one more bullet must go instead
    assert (r.step.proposal.key, r.step.proposal.bullet, r.step.number, r.step.total) == ("a2", "old-tabs", 2, 3)
    r.accept()
    assert r.step.proposal.bullet == "old-email"
    r.accept()
    assert r.step is None
    result = r.finish()
    assert result is not None and [a["bullet"] for a in result["archives"]] == ["old-tabs", "old-email"]
    text = (over / "MEMORY.md").read_text()
    assert "^hermes" in text and "^old-tabs" not in text and "^old-email" not in text
    assert len(text) == 1094 and result["budget"]["over"] is True  # keeping hermes: 4 over, and said
    assert "over its budget" in result["warnings"][0]
    assert "^old-tabs" in (over / "MEMORY.archive.md").read_text()


def test_nothing_to_curate_writes_nothing(week):
    first = review(week)
    keys(first)
    assert first.finish()["applied"] is True
    before = (week / "MEMORY.md").read_bytes()
    r = review(week)
    assert r.empty and r.step is None
    result = r.finish()
    assert result is not None and result["applied"] is False and result["message"].startswith("nothing to curate")
    assert (week / "MEMORY.md").read_bytes() == before
    assert load_doc(before, Vault.open(week).config).marker_at is not None
