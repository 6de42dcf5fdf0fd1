"""Issue 15: `memvault review` (spaced review, stored in the entry's own metadata lines).

Through the CLI in a real git vault, checked through the library; the schedule as properties."""

from __future__ import annotations

import difflib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memvault.cli import cli
from memvault.entries.spaced import (
    Plan,
    Reviewed,
    entry_schedule,
    format_duration,
    format_plan,
    format_reviewed,
    next_interval,
    parse_duration,
    parse_plan,
    parse_reviewed,
)
from memvault.search import access
from memvault.vault import Vault
from memvault.write.review import due_reviews, insert_line
from tests.conftest import git

LOG = """\
# 2026-11-20

## 09:15 - Decision
Wir nehmen Postgres statt MySQL für Atlas.
Tags: atlas

## 10:00 - Observation - Dana's Zugangscode
Dana (Ops) hat den Build-Server umgezogen:
- neuer Host: build-02
- alter Host bleibt bis Freitag

## 11:30 - Belief
User prefers tea in the morning
"""


def make_vault(root: Path, text: str = LOG) -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n', encoding="utf-8")
    (root / "memory" / "2026-11-20.md").write_text(text, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "vault")
    return root


def run(runner, root: Path, *args: str):
    result = runner.invoke(cli, ["--vault", str(root), *args])
    return result


def schedule_of(root: Path, event_id: str):
    with Vault.open(root) as vault:
        return entry_schedule(vault.timeline.by_id[event_id], vault.config.tz)


def test_start_ok_failed_through_the_cli_add_lines_the_library_reads(runner, vault_dir: Path):
    root = make_vault(vault_dir)
    before = (root / "memory" / "2026-11-20.md").read_text(encoding="utf-8").split("\n")
    assert json.loads(run(runner, root, "review", "--json").output) == []  # nothing scheduled yet

    assert run(runner, root, "review", "2026-11-20T09:15", "--start").exit_code == 0
    res = run(runner, root, "review", "2026-11-20T10:00", "--start", "--target", "12d", "--ratio", "0.5", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["written"] == "Review: 12d, ratio 0.5"

    due = json.loads(run(runner, root, "review", "--json").output)  # written 2026-11-20, first gap 6d: due
    assert [d["id"] for d in due] == ["2026-11-20T09:15", "2026-11-20T10:00"]
    assert due[0]["next_review"] == "2026-11-26T09:15:00+01:00" and due[0]["last_success"] is None

    ok = run(runner, root, "review", "2026-11-20T09:15", "--ok", "--json")
    failed = run(runner, root, "review", "2026-11-20T10:00", "--failed", "--json")
    assert ok.exit_code == 0 and failed.exit_code == 0, ok.output + failed.output
    assert json.loads(ok.output)["interval"] == "12d"  # 6d doubled
    assert json.loads(failed.output)["interval"] == "3d"  # 6d halved

    recalls = access.stats(root)  # a successful review is a retrieval; a failed one is not
    assert recalls["2026-11-20T09:15"].count == 1 and "2026-11-20T10:00" not in recalls
    good, bad = schedule_of(root, "2026-11-20T09:15"), schedule_of(root, "2026-11-20T10:00")
    assert good is not None and bad is not None
    assert [r.outcome for r in good.history] == ["ok"] and good.last_success is True
    assert bad.last_success is False and bad.interval == timedelta(days=3)
    assert good.due > datetime.now(UTC) and json.loads(run(runner, root, "review", "--json").output) == []

    after = (root / "memory" / "2026-11-20.md").read_text(encoding="utf-8").split("\n")
    ops = difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
    assert {op for op, *_ in ops} == {"equal", "insert"}  # lines added, none changed or removed
    added = [line for op, _, _, b1, b2 in ops if op == "insert" for line in after[b1:b2]]
    assert sorted(added) == sorted(["", "Review: 30d, ratio 0.2", "Review: 12d, ratio 0.5",
                                    *[x for x in after if x.startswith("Reviewed: ")]])
    assert len(added) == 5  # two Review:, two Reviewed:, one blank line after the list
    assert after[after.index("- alter Host bleibt bis Freitag") + 1] == ""  # the list is not joined

    assert json.loads(run(runner, root, "check", "--json").output)["problems"] == []  # check stays clean
    with Vault.open(root) as vault:  # and the entries' bodies did not change
        assert vault.timeline.by_id["2026-11-20T09:15"].content == "Wir nehmen Postgres statt MySQL für Atlas."


def test_the_history_grows_line_by_line_and_text_output_names_it(runner, vault_dir: Path):
    root = make_vault(vault_dir)
    run(runner, root, "review", "2026-11-20T11:30", "--start", "--target", "10d", "--ratio", "0.1")
    for flag in ("--ok", "--ok", "--failed"):
        assert run(runner, root, "review", "2026-11-20T11:30", flag).exit_code == 0
    sched = schedule_of(root, "2026-11-20T11:30")
    assert sched is not None
    assert [(r.outcome, r.interval) for r in sched.history] == [
        ("ok", timedelta(days=2)), ("ok", timedelta(days=4)), ("failed", timedelta(days=2))]
    text = run(runner, root, "review", "2026-11-20T11:30").output
    assert "last failed" in text and text.count("next in") == 3
    listed = run(runner, root, "review", "--all").output
    assert "2026-11-20T11:30" in listed and "history:" in listed


def test_unknown_ambiguous_and_unscheduled_ids_are_errors(runner, vault_dir: Path):
    root = make_vault(vault_dir)
    missing = run(runner, root, "review", "2027-01-01T00:00", "--ok", "--json")
    assert missing.exit_code != 0 and json.loads(missing.output)["error"]["code"] == "not_found"
    ambiguous = run(runner, root, "review", "2026-11-20T", "--ok", "--json")
    assert json.loads(ambiguous.output)["error"]["code"] == "ambiguous"
    unscheduled = run(runner, root, "review", "2026-11-20T11:30", "--ok", "--json")
    assert json.loads(unscheduled.output)["error"]["code"] == "refused"
    assert "--start" in json.loads(unscheduled.output)["error"]["message"]
    run(runner, root, "review", "2026-11-20T11:30", "--start")
    twice = run(runner, root, "review", "2026-11-20T11:30", "--start", "--json")
    assert json.loads(twice.output)["error"]["code"] == "refused"
    assert run(runner, root, "review", "--ok").exit_code == 2  # usage: no id
    assert run(runner, root, "review", "2026-11-20T11:30", "--target", "3d").exit_code == 2
    bad = run(runner, root, "review", "2026-11-20T09:15", "--start", "--target", "a month", "--json")
    assert json.loads(bad.output)["error"]["code"] == "usage"


def test_ok_and_failed_together_are_a_usage_error_and_write_nothing(runner, vault_dir: Path):
    root = make_vault(vault_dir)
    run(runner, root, "review", "2026-11-20T11:30", "--start")
    before = (root / "memory" / "2026-11-20.md").read_bytes()
    for flags in (["--failed", "--ok"], ["--ok", "--failed"]):
        both = run(runner, root, "review", "2026-11-20T11:30", *flags, "--json")
        assert both.exit_code == 2 and json.loads(both.output)["error"]["code"] == "usage"
        assert "--ok or --failed" in json.loads(both.output)["error"]["message"]
    assert (root / "memory" / "2026-11-20.md").read_bytes() == before
    with Vault.open(root) as vault:
        assert "reviewed" not in vault.timeline.by_id["2026-11-20T11:30"].meta


def test_superseded_entries_leave_the_review_list(runner, vault_dir: Path):
    root = make_vault(vault_dir, LOG + "Review: 30d\n\n## 12:00 - Correction\nUser prefers coffee now\n"
                      "Supersedes: 2026-11-20T11:30\n")
    with Vault.open(root) as vault:
        assert due_reviews(vault, everything=True) == []
    res = run(runner, root, "review", "2026-11-20T11:30", "--ok", "--json")
    assert json.loads(res.output)["error"]["code"] == "refused" and "superseded" in res.output


def test_hand_written_review_lines_are_read_and_bad_ones_reported(runner, vault_dir: Path):
    text = LOG.replace("Tags: atlas\n", "Tags: atlas\nReview: 30d\nReviewed: 2026-11-26 09:00 ok, interval 12d\n"
                       "Reviewed: 2026-11-27 vergessen, interval 3d\n")
    root = make_vault(vault_dir, text)
    sched = schedule_of(root, "2026-11-20T09:15")
    assert sched is not None and len(sched.history) == 1 and sched.due.isoformat() == "2026-12-08T09:00:00+01:00"
    codes = [(p["code"], p["line"]) for p in json.loads(run(runner, root, "check", "--json").output)["problems"]]
    assert ("MV211", 8) in codes


def test_review_in_prose_stays_text(runner, vault_dir: Path):
    """"Review: PR #42 merged" ends many a log: no digit after the colon, so it is no metadata line."""
    text = LOG + "Review: PR #42 merged, sieht gut aus\n\n## Abends\nReviewed: the slides with Dana\n"
    root = make_vault(vault_dir, text)
    with Vault.open(root) as vault:
        belief = vault.timeline.by_id["2026-11-20T11:30"]
        assert belief.content.endswith("Review: PR #42 merged, sieht gut aus") and "review" not in belief.meta
        assert any(e.content == "Reviewed: the slides with Dana" for e in vault.events)
    assert json.loads(run(runner, root, "check", "--json").output)["problems"] == []


def test_a_line_the_file_would_not_read_as_metadata_is_refused_and_nothing_written(runner, vault_dir: Path):
    text = LOG + "\n## 12:00 - Observation\nDer Befehl:\n```sh\nmemvault review --all\n"  # fence never closed
    root = make_vault(vault_dir, text)
    res = run(runner, root, "review", "2026-11-20T12:00", "--start", "--json")
    assert json.loads(res.output)["error"]["code"] == "refused" and "metadata" in res.output
    assert (root / "memory" / "2026-11-20.md").read_text(encoding="utf-8") == text


def test_insert_line_keeps_crlf_and_a_missing_final_newline(vault_dir: Path):
    root = make_vault(vault_dir, LOG.rstrip("\n"))
    raw = LOG.rstrip("\n").replace("\n", "\r\n").encode()
    with Vault.open(root) as vault:
        last, first = vault.timeline.by_id["2026-11-20T11:30"], vault.timeline.by_id["2026-11-20T09:15"]
    assert insert_line(raw, last, "Review: 30d") == raw + b"\r\nReview: 30d"
    new = insert_line(raw, first, "Review: 30d")
    assert new.replace(b"Review: 30d\r\n", b"", 1) == raw


# ---------------------------------------------------------------- the format and the schedule

durations = st.integers(min_value=1, max_value=60 * 24 * 3650).map(lambda m: timedelta(minutes=m))
plans = st.builds(Plan, durations, st.floats(min_value=0.01, max_value=1.0))


@given(plans, durations)
def test_ok_lengthens_failed_shortens_within_bounds(plan: Plan, previous: timedelta):
    lo, hi = plan.bounds
    previous = min(max(previous, lo), hi)
    ok, failed = next_interval(plan, previous, "ok"), next_interval(plan, previous, "failed")
    assert lo - timedelta(minutes=1) <= failed <= previous + timedelta(minutes=1)
    assert previous - timedelta(minutes=1) <= ok <= hi + timedelta(minutes=1)
    assert failed <= ok
    if previous * 2 <= hi - timedelta(minutes=2):
        assert ok > previous  # strictly longer until the target caps it
    if previous / 2 >= lo + timedelta(minutes=2):
        assert failed < previous


@given(durations, st.floats(min_value=0.01, max_value=1.0).map(lambda r: round(r, 2)))
def test_plan_lines_round_trip(target: timedelta, ratio: float):
    plan = Plan(target, ratio)
    read = parse_plan(format_plan(plan).removeprefix("Review: "))
    assert read == plan


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
       st.sampled_from(["ok", "failed"]), durations)
def test_reviewed_lines_round_trip(at: datetime, outcome, interval: timedelta):
    review = Reviewed(at.replace(second=0, microsecond=0), outcome, interval)
    assert parse_reviewed(format_reviewed(review).removeprefix("Reviewed: "), UTC) == review


def test_durations_and_bad_values():
    assert parse_duration("1d12h") == timedelta(hours=36) and format_duration(timedelta(hours=36)) == "36h"
    assert [parse_duration(x) for x in ("0d", "a month", "30", "3w", "")] == [None] * 5
    assert isinstance(parse_plan("30d, ratio 0"), str) and isinstance(parse_plan("30 Tage"), str)
    assert isinstance(parse_reviewed("2026-11-26 ok", UTC), str)
    assert Plan(timedelta(days=30)).first == timedelta(days=6)  # the seed's 0.1-0.3: 0.2 by default
