"""Issue 13 point 5: entries logged after a curation with an earlier time (`log --at`).

A correction of a curated bullet is proposed whenever it was dated; an ordinary backdated entry
is proposed once: curate records what it considered (`.memvault/curate-considered.json`), not
only the marker's time point. Driven through the CLI in a real vault, checked through the library.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.curate import considered
from memvault.curate.document import load_doc
from memvault.curate.promote import plan_curation
from memvault.vault import Vault

FIRST = "2026-02-22 12:00"  # the first curation
LATER = "2026-02-23 12:00"  # the next ones


def run(runner, *args: str, input: str | None = None) -> str:
    result = runner.invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def log(runner, text: str, at: str, *opts: str) -> str:
    return run(runner, "log", "--at", at, *opts, text).strip()


@pytest.fixture
def curated(vault_dir: Path, runner) -> Path:
    """A new vault with two bullets curated from a belief and a decision, marker at FIRST."""
    run(runner, "init", str(vault_dir))
    log(runner, "User wants a GIF at the top of the README", "2026-02-20 09:00", "--type", "belief")
    log(runner, "Nutzer möchte die Wochenberichte auf Deutsch, nicht auf Englisch", "2026-02-20 10:00",
        "--type", "decision")
    run(runner, "curate", "--yes", "--at", FIRST)
    return vault_dir


def plan(root: Path, at: str = LATER, **kw):
    vault = Vault.open(root)
    return plan_curation(vault, at=_when(vault, at), **kw)


def _when(vault: Vault, text: str) -> datetime:
    return datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=vault.config.tz)


def bullet_citing(root: Path, entry: str) -> str:
    """The text of the MEMORY.md bullet whose sources include `entry` (through the library)."""
    vault = Vault.open(root)
    ev = vault.timeline.by_id[entry]
    (bid,) = vault.timeline.cited_by(ev)
    doc = load_doc((root / "MEMORY.md").read_bytes(), vault.config)
    (bullet,) = [b for b in doc.bullets if b.id == bid]
    return doc.lines[bullet.start]


def gif_bullet(root: Path) -> str:
    doc = load_doc((root / "MEMORY.md").read_bytes(), Vault.open(root).config)
    (line,) = [doc.lines[b.start] for b in doc.bullets if "README" in doc.lines[b.start]]
    return line


# ------------------------------------------------------------------- corrections of bullets


@pytest.mark.parametrize("opts", [
    ("--type", "correction", "--supersedes", "2026-02-20T09:00"),  # the repro
    ("--type", "belief", "--supersedes", "2026-02-20T09:00"),  # not a correction by type: by its chain
    ("--type", "observation", "--supersedes", "2026-02-20T09:00"),  # no merit of its own
    ("--type", "correction"),  # no Supersedes: the bullet it says the most like
])
def test_a_backdated_correction_of_a_bullet_is_proposed_without_all(curated, runner, opts):
    corr = log(runner, "User wants a screenshot at the top of the README, not a GIF", "2026-02-21 10:00", *opts)
    p = plan(curated)
    assert p.since is not None and p.since_from == "marker"
    assert [(x.kind, x.entries) for x in p.proposals] == [("update", (corr,))]
    assert p.decisions[corr].facts["new"] == "logged since the last curation, with an earlier time"
    run(runner, "curate", "--yes", "--at", LATER)
    line = bullet_citing(curated, corr)
    assert line == gif_bullet(curated)
    assert line.startswith("- User wants a screenshot at the top of the README, not a GIF")
    assert "was: User wants a GIF at the top of the README" in line
    before = (curated / "MEMORY.md").read_bytes()
    assert not plan(curated).proposals
    assert run(runner, "curate", "--yes", "--at", LATER).startswith("nothing to curate")
    assert (curated / "MEMORY.md").read_bytes() == before


def test_a_backdated_correction_is_proposed_with_no_record_at_all(curated, runner):
    # `.memvault/` is derived and may be deleted: the correction rule needs nothing in it.
    corr = log(runner, "User wants a screenshot at the top of the README, not a GIF", "2026-02-21 10:00",
               "--type", "correction", "--supersedes", "2026-02-20T09:00")
    shutil.rmtree(curated / ".memvault")
    p = plan(curated)
    assert not p.record_used
    assert [(x.kind, x.entries) for x in p.proposals] == [("update", (corr,))]
    assert p.decisions[corr].facts["new"] == f"corrects bullet {p.proposals[0].bullet}, which does not say it yet"


def test_a_correction_memory_md_already_says_is_not_proposed_again(curated, runner):
    # The person fixed the bullet by hand on the correction's day: `_maybe_done` makes it a
    # reconfirmation (a link), proposed once; after that nothing, with or without a record.
    path = curated / "MEMORY.md"
    text = path.read_text(encoding="utf-8")
    old = "- User wants a GIF at the top of the README (added 2026-02-20)"
    assert old in text
    path.write_text(text.replace(old, "- User wants a screenshot at the top of the README (added 2026-02-20) "
                                      "(updated 2026-02-21, was: a GIF)"), encoding="utf-8")
    corr = log(runner, "User wants a screenshot at the top of the README, not a GIF", "2026-02-21 10:00",
               "--type", "correction", "--supersedes", "2026-02-20T09:00")
    assert [(x.kind, x.entries) for x in plan(curated).proposals] == [("reconfirm", (corr,))]
    run(runner, "curate", "--yes", "--at", LATER)
    shutil.rmtree(curated / ".memvault")
    assert not plan(curated).proposals


# ------------------------------------------------------------------ ordinary entries, once


def backdated_decision(runner) -> str:
    return log(runner, "Use Postgres for the billing service, decided with Jörg", "2026-02-21 15:30",
               "--type", "decision")


def test_a_backdated_entry_is_proposed_once_then_not_after_a_skip(curated, runner):
    eid = backdated_decision(runner)
    p = plan(curated)
    assert p.record_used
    assert [(x.kind, x.entries) for x in p.proposals] == [("add", (eid,))]
    assert p.decisions[eid].facts["new"] == "logged since the last curation, with an earlier time"
    before = (curated / "MEMORY.md").read_bytes()
    out = run(runner, "curate", "-i", "--at", LATER, input="n\n")
    assert "0 added" in out
    assert b"Postgres" not in (curated / "MEMORY.md").read_bytes()
    assert (curated / "MEMORY.md").read_bytes() != before  # the review completed: the point moved
    assert eid in considered.load(curated, load_doc((curated / "MEMORY.md").read_bytes(),
                                                   Vault.open(curated).config).marker_at)
    again = plan(curated, at="2026-02-24 12:00")
    assert not again.proposals
    assert not again.decisions[eid].chosen
    # --all still reconsiders everything.
    assert [x.entries for x in plan(curated, at="2026-02-24 12:00", everything=True).proposals] == [(eid,)]


def test_a_backdated_entry_accepted_is_not_proposed_again(curated, runner):
    eid = backdated_decision(runner)
    run(runner, "curate", "--yes", "--at", LATER)
    assert "Use Postgres for the billing service" in bullet_citing(curated, eid)
    before = (curated / "MEMORY.md").read_bytes()
    assert run(runner, "curate", "--yes", "--at", "2026-02-24 12:00").startswith("nothing to curate")
    assert (curated / "MEMORY.md").read_bytes() == before


def test_quitting_the_review_records_nothing(curated, runner):
    eid = backdated_decision(runner)
    log(runner, "Deploy the billing service only on Tuesdays", "2026-02-23 09:00", "--type", "decision")
    run(runner, "curate", "-i", "--at", LATER, input="n\nq\n")
    assert [x.entries for x in plan(curated).proposals][0] == (eid,)


def test_a_skipped_backdated_correction_stays_skipped_while_the_record_holds(curated, runner):
    corr = log(runner, "User wants a screenshot at the top of the README, not a GIF", "2026-02-21 10:00",
               "--type", "correction", "--supersedes", "2026-02-20T09:00")
    run(runner, "curate", "-i", "--at", LATER, input="n\n")
    assert "GIF at the top" in gif_bullet(curated)
    assert not plan(curated, at="2026-02-24 12:00").proposals  # the person's skip counts
    # Without the record curate cannot tell a skip from never seen: it proposes it again.
    shutil.rmtree(curated / ".memvault")
    assert [x.entries for x in plan(curated, at="2026-02-24 12:00").proposals] == [(corr,)]


# ---------------------------------------------------------------- the record is derived state


def test_without_the_record_curate_falls_back_to_the_marker(curated, runner):
    backdated_decision(runner)
    shutil.rmtree(curated / ".memvault")
    before = (curated / "MEMORY.md").read_bytes()
    p = plan(curated)
    assert not p.record_used and not p.proposals  # the time point, as before the record existed
    assert run(runner, "curate", "--yes", "--at", LATER).startswith("nothing to curate")
    assert (curated / "MEMORY.md").read_bytes() == before  # nothing proposed: nothing written


@pytest.mark.parametrize("damage", [
    b"not json", b'{"version": 1}', b'{"version": 1, "marker": "2026-02-22T12:00:00+00:00", "entries": "x"}',
    b'{"version": 99, "marker": "2026-02-22T12:00:00+00:00", "entries": []}', b"[]",
])
def test_a_damaged_record_is_ignored(curated, runner, damage):
    backdated_decision(runner)
    considered.path_of(curated).write_bytes(damage)
    p = plan(curated)
    assert not p.record_used and not p.proposals  # the marker alone, as if there were no record
    # The next completed review writes a good one.
    log(runner, "Deploy the billing service only on Tuesdays", "2026-02-23 09:00", "--type", "decision")
    run(runner, "curate", "--yes", "--at", LATER)
    data = json.loads(considered.path_of(curated).read_text(encoding="utf-8"))
    assert data["version"] == considered.VERSION and "2026-02-20T09:00" in data["entries"]


def test_a_record_for_another_marker_is_not_used(curated, runner):
    # MEMORY.md put back to an older text (git checkout, a hand edit of the marker): the record
    # describes another curation, and counting it would hide entries that one never saw.
    eid = backdated_decision(runner)
    path = curated / "MEMORY.md"
    path.write_text(path.read_text(encoding="utf-8").replace("2026-02-22T12:00:00", "2026-02-21T12:00:00"),
                    encoding="utf-8")
    p = plan(curated)
    assert not p.record_used
    assert [x.entries for x in p.proposals] == [(eid,)]  # 15:30 is after the older marker


def test_since_names_the_window_itself(curated, runner):
    backdated_decision(runner)
    p = plan(curated, since=_when(Vault.open(curated), "2026-02-22 00:00"))
    assert p.since_from == "option" and not p.record_used and not p.proposals


def test_a_curation_at_an_earlier_time_keeps_what_a_later_one_considered(curated, runner):
    # The marker never moves back; neither does the record: entries the later curation saw stay seen,
    # and entries dated after an `--at` curation's time were not seen by it.
    seen = log(runner, "Staging deploys need the VPN since the audit", "2026-02-23 09:00", "--type", "decision")
    run(runner, "curate", "-i", "--at", LATER, input="n\n")
    later = log(runner, "Release notes go out on Thursdays", "2026-02-23 18:00", "--type", "decision")
    early = log(runner, "Use Postgres for the billing service", "2026-02-21 16:00", "--type", "decision")
    run(runner, "curate", "-i", "--at", "2026-02-22 18:00", input="n\n")
    p = plan(curated, at="2026-02-24 12:00")
    assert [x.entries for x in p.proposals] == [(later,)]  # `seen` and the skipped `early` stay seen
    assert {seen, early} <= p.seen
