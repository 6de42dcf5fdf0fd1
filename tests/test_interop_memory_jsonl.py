"""The forgetting-curve skill's state/memory.jsonl imported (docs/interop.md): entries, their
presentations as reconfirming entries, recalls as access counts, spaced-review lines; retention
then computed by memvault as the skill's maintenance script computes it."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memvault.cli import cli
from memvault.entries.spaced import entry_schedule
from memvault.errors import SecretRefused
from memvault.interop import formats
from memvault.interop import memory_jsonl as mj
from memvault.interop.amfile import BadFile
from memvault.search import access
from memvault.vault import Vault

FIXTURE = Path(__file__).parent / "data" / "interop" / "memory.jsonl"
BERLIN = ZoneInfo("Europe/Berlin")
TICK0 = datetime(2026, 3, 2, 8, tzinfo=BERLIN)  # the fixture's tick 0 (one tick an hour)
SECRET = 'aws_secret_access_key = "' + "Zx9Qm2Lp7Rt4Vw8Y" + 'b3Nc6Hd1Jf5Kg0Ts2Ue4Wq7"'


def new_vault(root: Path, decay: str = 'model = "forgetting-curve"\ntick = "1h"\n') -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "Europe/Berlin"\n\n[decay]\n{decay}')
    return root


def lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return path


def memory_id(rec: dict[str, Any]) -> str:
    return mj.parse(json.dumps(rec), "x", BERLIN)[0].id


def log_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "memory").rglob("*.md"))}


@pytest.fixture
def imported(vault_dir: Path) -> Vault:
    new_vault(vault_dir)
    mj.import_file(Vault.open(vault_dir), FIXTURE)
    return Vault.open(vault_dir)


def test_every_memory_becomes_an_entry_at_its_time(imported: Vault):
    tl = imported.timeline
    for rec in lines():
        ev = tl.by_id[memory_id(rec)]
        assert ev.content == rec["summary"]
        assert ev.timestamp == datetime.fromisoformat(rec["time"]).replace(tzinfo=BERLIN)
        assert ev.importance == {"high": 0.9, "medium": 0.5, "low": 0.2}[rec["importance"]]
        assert set(rec["tags"]) <= set(ev.tags)


def test_types_the_vault_knows_stay_the_others_become_a_tag(imported: Vault):
    tl = imported.timeline
    by_type = {rec["type"]: tl.by_id[memory_id(rec)] for rec in lines()}
    assert by_type["decision"].type == "decision" and by_type["observation"].type == "observation"
    assert by_type["emotion"].type == "observation" and by_type["emotion"].tags[0] == "emotion"
    assert by_type["plan_outcome"].tags[0] == "plan_outcome"


def test_presentations_become_reconfirming_entries_at_their_ticks_time(imported: Vault):
    promise = next(r for r in lines() if r["type"] == "social")  # ticks 31, 55, 90, 130
    mid = memory_id(promise)
    tl = imported.timeline
    confirmers = tl.reconfirmed_by[mid]
    assert confirmers == [f"{mid}~p55", f"{mid}~p90", f"{mid}~p130"]
    assert [tl.by_id[c].timestamp for c in confirmers] == [TICK0 + timedelta(hours=t) for t in (55, 90, 130)]
    at = TICK0 + timedelta(hours=200)
    assert tl.retention(tl.by_id[mid], at).presentations == 4


def test_access_counts_become_recalls(imported: Vault):
    stats = access.stats(imported.root)
    for rec in lines():
        got = stats.get(memory_id(rec))
        assert (got.count if got else 0) == rec.get("_access_count", 0)


def test_retention_is_the_skills_own_formula(imported: Vault):
    """The maintenance script at tick 200: max(Ebbinghaus, logistic(ACT-R activation − θ))."""
    now_tick, at = 200, TICK0 + timedelta(hours=200)
    vault = Vault.open(imported.root)  # reads the recalls
    for rec in lines():
        pres = rec.get("_presentations") or [rec["tick"]]  # none yet: encoded once, at its tick
        k = {"high": 1.5, "medium": 1.0, "low": 0.5}[rec["importance"]]
        ebb = math.exp(-(now_tick - rec["tick"]) / (100 * k))
        act = (math.log(sum(max(1, now_tick - p) ** -0.5 for p in pres)) + math.log(k)
               + 0.08 * min(10, rec.get("_access_count", 0)))
        expected = max(ebb, 1 / (1 + math.exp(-(act + 2.5))))
        got = vault.timeline.retention(vault.timeline.by_id[memory_id(rec)], at)
        assert got.value == pytest.approx(expected, rel=1e-9), rec["summary"]


def test_review_fields_become_review_and_reviewed_lines(imported: Vault):
    alice = next(r for r in lines() if r["tick"] == 7)  # target 240 ticks, ratio 0.2, next review tick 124, ok
    ev = imported.timeline.by_id[memory_id(alice)]
    text = (imported.root / ev.file).read_text()
    assert "Review: 10d, ratio 0.2\nReviewed: 2026-03-05T12:00+01:00 ok, interval 2d" in text  # tick 76 -> 124
    schedule = entry_schedule(ev, BERLIN)
    assert schedule is not None and schedule.due == TICK0 + timedelta(hours=124)
    promise = imported.timeline.by_id[memory_id(next(r for r in lines() if r["tick"] == 31))]
    sched = entry_schedule(promise, BERLIN)
    assert sched is not None and sched.due == TICK0 + timedelta(hours=150) and sched.last_success is False


def test_importing_again_adds_nothing_and_counts_nothing_twice(imported: Vault):
    before = log_bytes(imported.root)
    res = mj.import_file(Vault.open(imported.root), FIXTURE)
    assert res.written == [] and log_bytes(imported.root) == before
    assert access.stats(imported.root)[memory_id(lines()[1])].count == 4


def test_after_maintenance_only_the_new_presentation_and_recalls_come_in(imported: Vault, tmp_path: Path):
    recs = lines()
    recs[1] = {**recs[1], "_presentations": [7, 31, 76, 140], "_access_count": 7}  # the script ran again
    res = mj.import_file(Vault.open(imported.root), write(tmp_path / "memory.jsonl", recs))
    mid = memory_id(recs[1])
    assert [w["id"] for w in res.written] == [f"{mid}~p140"]
    assert access.stats(imported.root)[mid].count == 7


def test_the_pace_of_ticks_comes_from_the_file_else_the_vaults_tick(vault_dir: Path, tmp_path: Path):
    memories = mj.parse(FIXTURE.read_text(), "m", BERLIN)
    assert mj.seconds_per_tick(memories, 60.0) == 3600.0
    one = [{"tick": 5, "time": "2026-03-02T10:00:00", "type": "event", "summary": "Einzige Erinnerung.",
            "_presentations": [5, 8]}]
    new_vault(vault_dir, 'model = "forgetting-curve"\ntick = "1d"\n')
    mj.import_file(Vault.open(vault_dir), write(tmp_path / "one.jsonl", one))
    ev = Vault.open(vault_dir).timeline.by_id[memory_id(one[0]) + "~p8"]
    assert ev.timestamp == datetime(2026, 3, 5, 10, tzinfo=BERLIN)


def test_a_presentation_in_the_future_is_left_out_with_a_warning(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    recent = datetime.now(BERLIN).replace(microsecond=0) - timedelta(hours=2)
    rec = {"tick": 10, "time": recent.replace(tzinfo=None).isoformat(), "type": "event", "summary": "Gerade eben.",
           "_presentations": [10, 11, 50]}
    res = mj.import_file(Vault.open(vault_dir), write(tmp_path / "m.jsonl", [rec]))
    assert [w["id"].split("~")[-1] for w in res.written] == [res.written[0]["id"].split("~")[-1], "p11"]
    assert "tick 50" in res.warnings[0]


BAD = [
    ("not json", ['{"tick": 1, "time": "2026-03-02T08:00:00", "summary": "ok"}', "{oops"], 2, "not JSON"),
    ("no summary", ['{"tick": 1, "time": "2026-03-02T08:00:00", "type": "event"}'], 1, '"summary"'),
    ("bad time", ['{"tick": 1, "time": "Dienstag", "summary": "x"}'], 1, "ISO 8601"),
    ("no time", ['{"tick": 1, "summary": "x"}'], 1, '"time"'),
    ("importance", ['{"tick": 1, "time": "2026-03-02T08:00:00", "summary": "x", "importance": "huge"}'], 1, "importance"),
    ("presentations", ['{"tick": 1, "time": "2026-03-02T08:00:00", "summary": "x", "_presentations": "3"}'], 1,
     "_presentations"),
    ("ratio", ['{"tick": 1, "time": "2026-03-02T08:00:00", "summary": "x", "_spacing_ratio": 3}'], 1, "_spacing_ratio"),
    ("surrogate", ['{"tick": 1, "time": "2026-03-02T08:00:00", "summary": "x", "tags": ["\\udc80"]}'], 1, "surrogate"),
]


@pytest.mark.parametrize("text, line, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_line_is_an_error_naming_file_and_line(vault_dir: Path, tmp_path: Path, text, line, words):
    new_vault(vault_dir)
    f = tmp_path / "memory.jsonl"
    f.write_text("\n".join(text) + "\n")
    with pytest.raises(BadFile) as err:
        mj.import_file(Vault.open(vault_dir), f)
    assert str(err.value).startswith(f"{f}:{line}: ") and words in str(err.value), str(err.value)
    assert log_bytes(vault_dir) == {}


def test_a_secret_refuses_the_whole_import(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    recs = lines()
    recs[4] = {**recs[4], "summary": f"Clinic login: {SECRET}"}
    f = write(tmp_path / "memory.jsonl", recs)
    with pytest.raises(SecretRefused) as err:
        mj.import_file(Vault.open(vault_dir), f)
    assert err.value.line == 5 and log_bytes(vault_dir) == {} and access.stats(vault_dir) == {}


@pytest.mark.parametrize("field", ["tags", "type"])
def test_a_secret_in_tags_or_type_is_refused(vault_dir: Path, tmp_path: Path, field: str):
    new_vault(vault_dir)
    token = "ghp_" + "Zx9Qm2Lp7Rt4Vw8Yb3Nc6Hd1Jf5Kg0Ts2Ue4W"
    rec = {"tick": 1, "time": "2026-03-02T08:00:00", "summary": "Harmlos.", field: [token] if field == "tags" else token}
    with pytest.raises(SecretRefused):
        mj.import_file(Vault.open(vault_dir), write(tmp_path / "memory.jsonl", [rec]))
    assert log_bytes(vault_dir) == {}


def test_cli_import_sniffs_memory_jsonl(runner, vault_dir: Path):
    new_vault(vault_dir)
    result = runner.invoke(cli, ["import", str(FIXTURE), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "memory-jsonl" and len(data["written"]) == 18
    assert memory_id(lines()[0]) in Vault.open(vault_dir).timeline.by_id
    assert formats.sniff(FIXTURE, "m") == "memory-jsonl"


def test_cli_format_given_and_a_secret_is_a_json_secret_error(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write(tmp_path / "memory.jsonl", [{"tick": 1, "time": "2026-03-02T08:00:00", "summary": SECRET}])
    result = runner.invoke(cli, ["import", str(f), "--format", "memory-jsonl", "--json"])
    assert result.exit_code == 1
    err = json.loads(result.stderr)["error"]
    assert (err["code"], err["file"], err["line"]) == ("secret", str(f), 1)


def test_cli_dry_run_writes_nothing_and_records_no_recall(runner, vault_dir: Path):
    new_vault(vault_dir)
    result = runner.invoke(cli, ["import", str(FIXTURE), "--dry-run"])
    assert result.exit_code == 0 and "would write 18 entries" in result.output
    assert log_bytes(vault_dir) == {} and access.stats(vault_dir) == {}


def test_a_duplicate_line_in_the_file_is_said_to_be_one_not_already_in_the_vault(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    first = lines()[0]
    res = formats.import_file(Vault.open(vault_dir), write(tmp_path / "dup.jsonl", [first, first]), dry_run=True)
    assert [s["reason"] for s in res["skipped"]] == ["a duplicate of an earlier line in the file"] * len(res["skipped"])
    assert res["skipped"] and all(s["line"] == 2 for s in res["skipped"])


def test_presentations_are_not_memories_of_their_own_in_context_or_the_exports(runner, vault_dir: Path,
                                                                                tmp_path: Path):
    new_vault(vault_dir)
    formats.import_file(Vault.open(vault_dir), FIXTURE)
    vault = Vault.open(vault_dir)
    presented = {e.id for e in vault.timeline.events if e.id.rsplit("~p", 1)[-1].isdigit() and "~p" in e.id}
    assert presented  # the fixture has presentations, written as reconfirming entries (retention reads them)
    at = ["--vault", str(vault_dir)]
    for cmd in (["export", "--format", "agent-memory"], ["export", "--format", "memoryblock"]):
        out = runner.invoke(cli, [*at, *cmd])
        assert out.exit_code == 0 and "Presented again" not in out.output
    out = runner.invoke(cli, [*at, "context", "--json", "--budget", "100000"])
    items = json.loads(out.output)["items"]
    assert items and not {i["id"] for i in items} & presented
    assert len(Vault.open(vault_dir).timeline.by_id) > len(presented)  # still in the vault (list, show)


def test_a_changed_importance_on_a_re_import_is_said_not_carried(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    first = lines()[0]
    formats.import_file(Vault.open(vault_dir), write(tmp_path / "a.jsonl", [first]))
    res = formats.import_file(Vault.open(vault_dir), write(tmp_path / "a.jsonl", [{**first, "importance": 0.95}]))
    assert "importance 0.95 is not carried" in res["skipped"][0]["reason"] and res["written"] == []
