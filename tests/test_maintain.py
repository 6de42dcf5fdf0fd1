"""`memvault maintain`: the [retention] policies, forgotten entries leaving default results,
relearning, the dry run and idempotence (the archive: tests/test_maintain_archive.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.cli import cli
from memvault.curate.promote import plan_curation
from memvault.maintain.policy import Candidate, Settings, choose
from memvault.vault import Vault

from .conftest import copy_vault

BERLIN = ZoneInfo("Europe/Berlin")
APRIL, NEXT_YEAR = "2026-04-01 12:00", "2027-01-01 12:00"
ALL_SIX = {"2026-01-05T09:10", "2026-01-05T11:30", "2026-01-05T16:45", "2026-02-20T08:05", "2026-02-20T14:00",
           "2026-03-28T19:20"}
ALLERGY = "2026-01-05T09:10"  # Importance: high: [retention] keep_importance (0.7) keeps it
FADING = ALL_SIX - {ALLERGY}


def fixture(root: Path, model: str = "exponential", retention: str = "") -> Path:
    """tests/data/retention (docs/retention.md's table) under `model`, with `retention` settings."""
    copy_vault("retention", root)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "Europe/Berlin"\n\n[decay]\nmodel = "{model}"\n'
                                        + (f"\n[retention]\n{retention}\n" if retention else ""))
    return root


def maintain(runner, *args: str) -> dict:
    result = runner.invoke(cli, ["maintain", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def live_ids(root: Path, at: str | None = None) -> set[str]:
    with Vault.open(root) as vault:
        when = datetime.fromisoformat(at).replace(tzinfo=BERLIN) if at else None
        return {e.id for e in vault.entries(at=when)}


def hashes(root: Path) -> dict[str, str]:
    """Every file under the vault, .memvault/ and .git/ included, by its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# -- the policies, pure


def test_choose_forgets_below_the_threshold_then_the_lowest_over_the_cap_oldest_first():
    t = [datetime(2026, 1, d, tzinfo=BERLIN) for d in range(1, 6)]
    found = [Candidate("e", 0.5, t[4]), Candidate("a", 0.05, t[0]), Candidate("d", 0.3, t[3]),
             Candidate("c", 0.3, t[2]), Candidate("b", 0.9, t[1]), Candidate("u", 0.3, None)]
    assert [(c.id, c.policy) for c in choose(found, Settings(forget_below=0.1))] == [("a", "forget_below")]
    # max_live 3 of the five left: the two lowest go; of three tied at 0.3 the oldest (c, then d; undated last)
    chosen = choose(found, Settings(forget_below=0.1, max_live=3))
    assert [(c.id, c.policy) for c in chosen] == [("a", "forget_below"), ("c", "max_live"), ("d", "max_live")]
    assert choose(list(reversed(found)), Settings(forget_below=0.1, max_live=3)) == chosen  # input order is no factor
    assert choose(found, Settings(forget_below=0.0)) == []
    assert choose(found, Settings(forget_below=0.0, max_live=10)) == []


# -- the fixture vault under each model forgets exactly what docs/retention.md shows


@pytest.mark.parametrize(("model", "settings", "at", "forgotten"), [
    ("exponential", "", APRIL, {"2026-01-05T11:30"}),  # 0.01; the rest are fading (0.13) or active
    ("ebbinghaus", "", APRIL, {"2026-01-05T11:30"}),  # the same curve as exponential
    ("exponential", "", NEXT_YEAR, FADING),  # 0.00 each: nine months without a presentation; high importance stays
    ("exponential", "keep_importance = 1.1", NEXT_YEAR, ALL_SIX),  # above 1: importance keeps none
    ("forgetting-curve", "", NEXT_YEAR, set()),  # the ACT-R term keeps every entry fading or active
    ("forgetting-curve", "forget_below = 0.3", NEXT_YEAR, {"2026-01-05T11:30", "2026-03-28T19:20"}),  # 0.24, 0.27
    # max_live 3: the three lowest go (0.24, 0.27 and the older of the two 0.41s)
    ("forgetting-curve", "max_live = 3", NEXT_YEAR, {"2026-01-05T11:30", "2026-03-28T19:20", "2026-02-20T08:05"}),
])
def test_each_model_forgets_the_documented_entries(runner, vault_dir, model, settings, at, forgotten):
    fixture(vault_dir, model, settings)
    report = maintain(runner, "--at", at)
    assert {f["id"] for f in report["forgotten"]} == forgotten
    assert report["model"] == model and report["considered"] == 6
    assert live_ids(vault_dir, at) == ALL_SIX - forgotten
    with Vault.open(vault_dir) as vault:
        for f in report["forgotten"]:
            assert f["policy"] == ("max_live" if "max_live" in settings and f["retention"] >= 0.1 else "forget_below")
            assert vault.forgotten[f["id"]].retention == pytest.approx(f["retention"], rel=1e-5)


# -- leaving default results, as superseded entries do


def test_forgotten_entries_leave_list_search_asof_and_curate_but_all_shows_them(runner, vault_dir):
    fixture(vault_dir)
    maintain(runner, "--at", APRIL)
    tabs = "2026-01-05T11:30"
    listed = runner.invoke(cli, ["list"]).output
    assert "tabs over spaces" not in listed and "5 entries" in listed
    everything = runner.invoke(cli, ["list", "--all"]).output
    # each figure says what it is: confidence labelled, the retention mark with its value, the
    # status tag with since when maintain forgot it
    row = next(line for line in everything.splitlines() if line.startswith(tabs))
    assert row.startswith(f"{tabs}     belief      conf 0.")
    assert row.endswith("  \u25cb 0.00  User prefers tabs over spaces in Go code [forgotten 2026-04-01]")
    as_json = json.loads(runner.invoke(cli, ["list", "--all", "--json"]).stdout)
    shape = next(d for d in as_json if d["id"] == tabs)
    assert (shape["status"], shape["forgotten"]) == ("forgotten", "2026-04-01T12:00:00+02:00")
    assert {d["forgotten"] for d in as_json if d["id"] != tabs} == {None}
    assert tabs not in runner.invoke(cli, ["search", "tabs", "spaces"]).output  # only neighbours are found
    hits = json.loads(runner.invoke(cli, ["search", "tabs", "spaces", "--all", "--json"]).stdout)
    assert (hits[0]["id"], hits[0]["status"]) == (tabs, "forgotten")
    # asof: hidden at and after the forgetting, there before it (with a query too)
    assert tabs not in {d["id"] for d in json.loads(runner.invoke(cli, ["asof", "2026-05-01", "--json"]).stdout)}
    assert tabs in {d["id"] for d in json.loads(runner.invoke(cli, ["asof", "2026-03-01", "--json"]).stdout)}
    before = json.loads(runner.invoke(cli, ["asof", "2026-03-01", "tabs", "--json"]).stdout)
    assert before[0]["id"] == tabs
    after = json.loads(runner.invoke(cli, ["asof", "2026-05-01", "tabs", "--json"]).stdout)
    assert after and tabs not in {d["id"] for d in after}
    with Vault.open(vault_dir) as vault:
        reason = plan_curation(vault, everything=True).decisions[tabs].reason
        assert reason.startswith("forgotten by memvault maintain")
        at = datetime(2026, 5, 1, tzinfo=BERLIN)
        assert tabs not in {e.id for e in vault.timeline.live(at)}
        assert vault.timeline.status(vault.timeline.by_id[tabs], datetime(2026, 3, 1, tzinfo=BERLIN)) == "live"


def test_deleting_the_derived_folder_brings_them_back_until_maintain_runs_again(runner, vault_dir):
    fixture(vault_dir)
    maintain(runner, "--at", APRIL)
    assert "2026-01-05T11:30" not in live_ids(vault_dir)
    shutil.rmtree(vault_dir / ".memvault")
    assert "2026-01-05T11:30" in live_ids(vault_dir)
    assert [f["id"] for f in maintain(runner, "--at", APRIL)["forgotten"]] == ["2026-01-05T11:30"]


def _append(root: Path, day: str, text: str) -> None:
    path = root / "memory" / f"{day}.md"
    old = path.read_text() if path.exists() else f"# {day}\n"
    path.write_text(old.rstrip("\n") + "\n\n" + text)


@pytest.mark.parametrize("relearned", [
    "## 10:00 - Belief\nStill tabs in Go, gofmt does it anyway.\nReconfirms: 2026-01-05T11:30\n",
    "## 10:00 - Belief\nUser prefers tabs over spaces in Go code (said so again today).\n",  # said again
])
def test_a_later_presentation_brings_a_forgotten_entry_back_from_then_on(runner, vault_dir, relearned):
    fixture(vault_dir)
    maintain(runner, "--at", APRIL)
    _append(vault_dir, "2026-04-10", relearned)
    tabs = "2026-01-05T11:30"
    assert tabs in live_ids(vault_dir, "2026-04-11 12:00")  # back from its new presentation on
    assert tabs not in live_ids(vault_dir, "2026-04-05 12:00")  # still forgotten in between
    assert tabs in live_ids(vault_dir, "2026-03-01 12:00")  # and there before
    for at, shown in (("2026-04-05", False), ("2026-04-11", True), ("2026-03-01", True)):
        listed = json.loads(runner.invoke(cli, ["asof", at, "--json"]).stdout)
        assert (tabs in {d["id"] for d in listed}) is shown, at
        # search (and asof with a query) judge it from the index, without parsing the vault: the same answer
        found = json.loads(runner.invoke(cli, ["asof", at, "tabs", "spaces", "Go", "--json"]).stdout)
        assert (tabs in {d["id"] for d in found}) is shown, at
    assert tabs in {h["id"] for h in json.loads(runner.invoke(cli, ["search", "tabs", "Go", "--json"]).stdout)}
    # one session asking many times answers from event time's live intervals (entries/spans.py):
    # live, forgotten, live again is two intervals
    with Vault.open(vault_dir) as vault:
        for _ in range(2):
            for at, shown in (("2026-04-05", False), ("2026-04-11", True), ("2026-03-01", True), ("2026-04-01 12:00", False)):
                assert (tabs in {d["id"] for d in vault.as_of(at)}) is shown, at
        assert vault.past._spans is not None
    # maintain does not forget it again (its retention was renewed), while others faded meanwhile
    again = maintain(runner, "--at", "2026-04-11 12:00")["forgotten"]
    assert again and tabs not in {f["id"] for f in again}


def test_maintain_leaves_curated_and_undated_entries_alone(runner, vault_dir):
    fixture(vault_dir)
    (vault_dir / "MEMORY.md").write_text("# MEMORY\n\n## Preferences\n\n- Lena mag keinen Koriander\n")
    report = maintain(runner, "--at", NEXT_YEAR)
    assert {f["id"] for f in report["forgotten"]} == FADING
    with Vault.open(vault_dir) as vault:
        assert [e.kind for e in vault.entries(at=datetime(2027, 1, 2, tzinfo=BERLIN))] == ["curated", "log"]


# -- the dry run and a second run


@pytest.mark.parametrize("archive", [False, True])
def test_a_dry_run_says_exactly_what_the_run_does_and_changes_no_byte(runner, vault_dir, archive):
    fixture(vault_dir, "forgetting-curve", "max_live = 4")
    runner.invoke(cli, ["search", "Backup"])  # the derived folder exists, with an index
    flag = ["--archive"] if archive else []
    before = hashes(vault_dir)
    dry = maintain(runner, "--dry-run", "--at", NEXT_YEAR, *flag)
    assert hashes(vault_dir) == before
    text = runner.invoke(cli, ["maintain", "--dry-run", "--at", NEXT_YEAR, *flag]).output
    assert hashes(vault_dir) == before
    assert "would forget 2026-01-05T11:30" in text and "dry run: nothing was written" in text
    done = maintain(runner, "--at", NEXT_YEAR, *flag)
    assert dry["dry_run"] and not done["dry_run"]
    assert (dry["forgotten"], dry["archived"]) == (done["forgotten"], done["archived"])
    assert len(done["archived"]) == (2 if archive else 0)


@pytest.mark.parametrize("archive", [False, True])
def test_maintain_twice_changes_nothing_the_second_time(runner, vault_dir, archive):
    fixture(vault_dir, "exponential")
    flag = ["--archive"] if archive else []
    first = maintain(runner, "--at", APRIL, *flag)
    assert first["record_written"] and len(first["forgotten"]) == 1
    # The said-again cache may catch up with the texts the first run archived; nothing else moves.
    cache = ".memvault/said.sqlite"
    after = {k: v for k, v in hashes(vault_dir).items() if k != cache}
    second = maintain(runner, "--at", APRIL, *flag)
    assert (second["forgotten"], second["archived"], second["record_written"]) == ([], [], False)
    assert {k: v for k, v in hashes(vault_dir).items() if k != cache} == after
    third = hashes(vault_dir)
    maintain(runner, "--at", APRIL, *flag)
    assert hashes(vault_dir) == third
    assert "nothing to forget" in runner.invoke(cli, ["maintain", "--at", APRIL, *flag]).output
    # a later run forgets what has faded since, and keeps the first forgetting's time
    later = maintain(runner, "--at", NEXT_YEAR, *flag)
    assert {f["id"] for f in later["forgotten"]} == FADING - {"2026-01-05T11:30"}
    with Vault.open(vault_dir) as vault:
        assert vault.forgotten["2026-01-05T11:30"].at == datetime(2026, 4, 1, 12, tzinfo=BERLIN)


def test_settings_come_from_memvault_toml_and_bad_ones_name_the_line(runner, vault_dir):
    fixture(vault_dir, "exponential", "forget_below = 0.1\nmax_live = 100")
    assert {f["id"] for f in maintain(runner, "--at", APRIL)["forgotten"]} == {"2026-01-05T11:30"}
    fixture(vault_dir, "exponential", "forget_below = 0.2")
    shutil.rmtree(vault_dir / ".memvault")
    # 0.13 < 0.2: the fading ones go too, the coffee machine (0.83) stays
    assert {f["id"] for f in maintain(runner, "--at", APRIL)["forgotten"]} == FADING - {"2026-03-28T19:20"}
    fixture(vault_dir, "exponential", 'archive = true\narchive_dir = "memory/old"')
    result = runner.invoke(cli, ["maintain", "--at", APRIL])
    assert result.exit_code == 1
    assert "memvault.toml:9: [retention] archive_dir 'memory/old' is inside what the vault reads" in result.output


@pytest.mark.parametrize("data", ["retention", "curate_week"])
def test_said_again_read_backwards_from_the_entries_since_equals_said_again_forwards(vault_dir, data):
    """What brings a forgotten entry back is found from the few entries written since the
    forgetting (`presentations.said_again_after`); it must be exactly `SaidAgain.of` read the
    other way, at every cut."""
    from memvault.entries.presentations import SaidAgain, said_again_after

    copy_vault(data, vault_dir)
    with Vault.open(vault_dir) as vault:
        tl = vault.timeline
        said = SaidAgain(tl, 0.5)  # below curate's default: more pairs to compare
        dated = sorted({e.timestamp for e in tl.events if e.timestamp is not None})
        assert len(dated) > 4
        pairs = 0
        for since in [dated[0], dated[len(dated) // 3], dated[len(dated) // 2], dated[-2]]:
            forwards: dict[str, list[datetime]] = {}
            for e in tl.events:
                times = [tl.by_id[r].timestamp for r in said.of(e) if tl.by_id[r].timestamp > since]
                if times:
                    forwards[e.id] = sorted(times)
            backwards = {k: sorted(v) for k, v in said_again_after(said, since).items()}
            assert backwards == forwards, since
            pairs += sum(map(len, forwards.values()))
        assert pairs  # the vault has entries said again
