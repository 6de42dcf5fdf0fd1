"""Issue 17's QA findings (qa17), each with the test that failed before its fix: ingest's
re-runs and corrections, context's view of ingested user statements, `--with` timeouts, the
MemoryBlock export of stale bullets, `log --supersedes ""`.

CLI through CliRunner, the vault's state read back through the library, real scripts for `--with`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

from memvault.cli import cli
from memvault.vault import Vault
from tests.conftest import DATA
from tests.helpers_secrets import expand

HERE = DATA / "ingest"
AT = "2026-02-20 18:00"


def make_vault(root: Path, log: str | None = None, day: str = "2026-02-10") -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    if log:
        (root / "memory" / f"{day}.md").write_text(log)
    return root


def ingest(runner, *args: str, input: str | None = None):
    return runner.invoke(cli, ["ingest", *args], input=input, catch_exceptions=False)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.parts}


def live(root: Path) -> list[str]:
    with Vault.open(root) as v:
        return [e.content for e in v.timeline.live() if e.kind == "log"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, only not yet reaped


# ------------------------------------------------------------------ #8: --with timeout kills the group


def test_a_timed_out_with_command_takes_its_children_with_it(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    pidfile = tmp_path / "child.pid"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'hang_wrapper.py'))} {shlex.quote(str(pidfile))}"
    result = ingest(runner, str(HERE / "protocol_example.txt"), "--with", command, "--timeout", "0.5")
    assert result.exit_code == 1 and "did not answer within 0.5s" in result.output
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


# ------------------------------------------------------------------ #1: a correction ingested twice


def test_a_transcript_with_a_correction_ingested_again_writes_nothing(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    (tmp_path / "trip.txt").write_text("USER: My budget is 3000 euros.\n")
    fix = tmp_path / "fix.txt"
    fix.write_text("USER: Quick update. Actually, my budget is 4500 euros, not 3000 euros.\n\n"
                   "USER: Actually, the conference is on March 14, not March 12.\n")
    assert ingest(runner, str(tmp_path / "trip.txt"), "--at", AT).exit_code == 0
    first = json.loads(ingest(runner, str(fix), "--at", AT, "--json").output)
    assert [f["action"] for f in first["facts"]] == ["supersede", "new"]
    before = snapshot(vault_dir)
    for _ in range(3):
        again = json.loads(ingest(runner, str(fix), "--json").output)
        assert again["counts"] == {"known": 2} and again["entries"] == []
        assert snapshot(vault_dir) == before
    budget = [c for c in live(vault_dir) if "budget" in c]
    assert budget == ["The user's budget is 4500 euros."]


# ------------------------------------------------------------------ #2, #3: correction phrasings


def test_sorry_i_meant_and_no_my_supersede_in_turn_order(vault_dir, runner):
    make_vault(vault_dir)
    text = "USER: My flight is on Friday.\n\nUSER: Sorry, I meant Saturday, not Friday.\n\nUSER: No, my flight is on Sunday.\n"
    report = json.loads(ingest(runner, "-", "--at", AT, "--json", input=text).output)
    assert [(f["action"], f["content"]) for f in report["facts"]] == [
        ("new", "The user's flight is on Friday."),
        ("supersede", "The user's flight is on Saturday."),
        ("supersede", "The user's flight is on Sunday."),
    ]
    assert [c for c in live(vault_dir) if "flight" in c] == ["The user's flight is on Sunday."]


def test_corrections_of_earlier_statements_and_decisions_in_the_vault(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    first = tmp_path / "plan.txt"
    first.write_text("USER: We decided to stay at the Hotel Avenida.\n\nUSER: Let's go with the 10:40 flight then.\n\n"
                     "USER: Mein Budget ist 3000 Euro.\n\nUSER: My train is on Friday.\n")
    later = tmp_path / "later.txt"
    later.write_text("USER: And we decided to stay at the Hotel Miramar, not the Hotel Avenida.\n\n"
                     "USER: Let's go with the 12:15 flight, not the 10:40 flight.\n\n"
                     "USER: Eigentlich ist mein Budget 4000 Euro, nicht 3000 Euro.\n\nUSER: Not Friday but Saturday.\n")
    assert ingest(runner, str(first), "--at", AT).exit_code == 0
    report = json.loads(ingest(runner, str(later), "--at", AT, "--json").output)
    assert report["counts"] == {"supersede": 4}
    assert sorted(live(vault_dir)) == ["Angabe: Mein Budget ist 4000 Euro.", "Decided: stay at the Hotel Miramar.",
                                       "Decided: the 12:15 flight then.", "The user's train is on Saturday."]
    assert json.loads(ingest(runner, str(later), "--json").output)["counts"] == {"known": 4}


def test_corrections_without_a_target_read_as_sentences():
    from memvault.ingest.extract import extract
    from memvault.ingest.transcript import read_transcript

    def said(text: str) -> list[str]:
        return [f.content for f in extract(read_transcript(text, "x.txt"))]

    assert said("USER: I meant Saturday.") == ["Correction: the user meant Saturday."]
    assert said("USER: Not Friday but Saturday.") == ["Correction: Saturday, not Friday."]
    assert said("USER: Eigentlich ist mein Budget 4000 Euro, nicht 3000 Euro.") == [
        "Korrektur: Eigentlich ist mein Budget 4000 Euro, nicht 3000 Euro."]


# ------------------------------------------------------------------ #4, #5, #13, #14: what the rules take


def test_ids_decisions_and_repeats_read_as_documented():
    from memvault.ingest.extract import extract
    from memvault.ingest.transcript import read_transcript

    def facts(text: str) -> list[tuple[str, float, str]]:
        return [(f.kind, f.importance, f.content) for f in extract(read_transcript(text, "x.txt"))]

    assert facts("AGENT: I booked it: confirmation number HA-77812.") == [
        ("id", 0.8, "The confirmation number is HA-77812.")]
    assert facts("AGENT: As we decided yesterday, we use Postgres.") == [("decision", 0.64, "Decided: we use Postgres.")]
    assert facts("AGENT: Booking reference is ZX9QKL.") == [("id", 0.8, "The booking number is ZX9QKL.")]
    assert facts("USER: My booking reference is ZX9QKL.") == [("id", 0.8, "The user's booking number is ZX9QKL.")]
    window = extract(read_transcript("USER: I prefer window seats on flights.\n\nUSER: Thanks.\n\n"
                                     "USER: I prefer window seats, remember that.\n", "x.txt"))
    assert [(f.content, f.turns) for f in window] == [("The user prefers window seats on flights.", (1, 3))]


# ------------------------------------------------------------------ #9: a length limit for built-in facts


def test_a_built_in_fact_longer_than_a_with_reply_may_be_is_not_written(vault_dir, runner):
    make_vault(vault_dir)
    text = "USER: I prefer window seats and " + "very " * 3000 + "quiet rooms.\n\nUSER: I prefer tea.\n"
    report = json.loads(ingest(runner, "-", "--at", AT, "--json", input=text).output)
    assert [f["action"] for f in report["facts"]] == ["unwritable", "new"]
    assert "more than 2000" in report["facts"][0]["why"]
    assert live(vault_dir) == ["The user prefers tea."]


# ------------------------------------------------------------------ #10, #11, #12: the report


def test_every_with_reply_fact_is_in_the_report_and_a_repeat_names_its_turn(vault_dir, runner):
    make_vault(vault_dir)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'repeat_reply.py'))}"
    text = "USER: I prefer tea.\n\nUSER: Tea, as I said.\n"
    report = json.loads(ingest(runner, "-", "--with", command, "--at", AT, "--json", input=text).output)
    assert report["counts"] == {"new": 2, "said again": 1} and len(report["facts"]) == 3
    again = next(f for f in report["facts"] if f["action"] == "said again")
    assert again["turn"] == 2 and "kept as the fact of the transcript" in again["why"]
    with Vault.open(vault_dir) as v:
        tea = next(e for e in v.timeline.events if e.content == "The user prefers tea.")
    assert json.loads(tea.meta["metadata"])["turns"] == [2]


def test_the_text_report_counts_in_words_and_uses_the_json_actions(vault_dir, runner):
    make_vault(vault_dir)
    one = ingest(runner, "-", "--at", AT, input="USER: I prefer tea.\n")
    assert "stdin: 1 turn, 1 fact (builtin)" in one.output and "wrote 1 entry: " in one.output
    assert "\n  new        turn 1 " in one.output
    text = f"USER: Use the staging key {expand('AKIA{{upper:16}}', 3)} when testing.\n\nUSER: I prefer coffee.\n"
    report = ingest(runner, "-", "--at", AT, "--dry-run", "--source", "aws", input=text)
    assert "1 line withheld as secrets" in report.output
    with_secret = json.loads(ingest(runner, "-", "--with", f"{shlex.quote(sys.executable)} -c "
                                    + shlex.quote("import json,sys; print(json.dumps([{'content': json.load(sys.stdin)"
                                                  "['turns'][0]['text'], 'importance_score': 0.5}]))"),
                                    "--dry-run", "--json", input=text).output)
    assert with_secret["facts"][0]["content"].startswith("[line withheld: it looks like an AWS")


def test_an_unknown_role_names_the_file_and_the_line_its_message_starts(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    jsonl = tmp_path / "badrole.jsonl"
    jsonl.write_text('{"role":"user","content":"I prefer tea"}\n\n{"role":"wizard","content":"x"}\n')
    doc = tmp_path / "badrole.json"
    doc.write_text('{"title": "x [y]", "messages": [\n  {"role": "user", "content": "I prefer tea, {really}"},\n'
                   '  {\n    "role": "wizard",\n    "content": "x"\n  }\n]}\n')
    for path, line in ((jsonl, 3), (doc, 3)):
        result = ingest(runner, str(path), "--json")
        assert result.exit_code == 2
        err = json.loads(result.output)["error"]
        assert err["file"] == str(path) and err["line"] == line
        assert err["message"].startswith(f"{path}:{line}: message 2: unknown role 'wizard'")


# ------------------------------------------------------------------ #6, #7: ingested words in context


def test_what_the_user_said_in_a_transcript_is_the_users_word_in_context(vault_dir, runner):
    make_vault(vault_dir)
    text = ("USER: I prefer window seats on flights.\n\nUSER: From now on, always send me the itinerary as a PDF.\n\n"
            "USER: Bitte schreib mir ab sofort immer auf Deutsch.\n\nUSER: Call me Jonas.\n")
    assert ingest(runner, "-", "--source", "trip.json", "--at", AT, input=text).exit_code == 0
    logged = runner.invoke(cli, ["log", "The user prefers aisle seats on flights", "--type", "belief",
                                 "--at", "2026-02-20 19:00"])
    assert logged.exit_code == 0, logged.output
    aisle = logged.output.strip().split()[-1]
    block = json.loads(runner.invoke(cli, ["context", "seats", "--no-record", "--json"]).output)
    assert [i["text"] for i in block["items"]] == ["The user prefers window seats on flights."]
    assert {"id": aisle, "reason": f"conflicts with {block['items'][0]['id']} (source: user)"} in block["left_out"]
    whole = json.loads(runner.invoke(cli, ["context", "--no-record", "--json"]).output)
    kinds = {i["text"]: i["kind"] for i in whole["items"]}
    assert kinds["From now on, always send the user the itinerary as a PDF."] == "lesson"
    assert kinds["Anweisung: Bitte schreib mir ab sofort immer auf Deutsch."] == "lesson"
    assert kinds["The user wants to be called Jonas."] == "preference"
    assert "## Observations" not in whole["text"]


# ------------------------------------------------------------------ #19: log --supersedes ""


def test_an_empty_supersedes_or_reconfirms_is_a_usage_error(vault_dir, runner):
    make_vault(vault_dir)
    before = snapshot(vault_dir)
    for option in ("--supersedes", "--reconfirms"):
        result = runner.invoke(cli, ["log", "--type", "correction", option, " ", "x"])
        assert result.exit_code == 2 and f"{option} needs a value" in result.output
        as_json = runner.invoke(cli, ["log", option, "", "x", "--json"])
        assert as_json.exit_code == 2 and json.loads(as_json.output)["error"]["code"] == "usage"
    assert snapshot(vault_dir) == before


# ------------------------------------------------------------------ #17: a stale bullet in a MemoryBlock export

STALE_LOG = """# 2026-11-27

## 09:00 - Belief
Prefers dark mode in every tool.

## 18:00 - Correction
Prefers light mode, not dark mode.
Supersedes: 2026-11-27T09:00
"""
STALE_MEMORY = """# MEMORY

## User Preferences
- Prefers dark mode in every tool (source: [[2026-11-27#09:00 - Belief]])
- Prefers light mode (source: [[2026-11-27#18:00 - Correction]])
"""


def test_a_bullet_whose_sources_are_all_superseded_is_not_live_in_a_memoryblock_export(vault_dir, runner):
    from memvault.interop import memoryblock

    make_vault(vault_dir, STALE_LOG, day="2026-11-27")
    (vault_dir / "MEMORY.md").write_text(STALE_MEMORY)
    with Vault.open(vault_dir) as v:
        live_blocks = [b["content"] for b in memoryblock.blocks(v) if b["type"] == "SEMANTIC"]
        every = {b["content"]: b["metadata"]["status"] for b in memoryblock.blocks(v, include_all=True)
                 if b["type"] == "SEMANTIC"}
    assert live_blocks == ["Prefers light mode"]
    assert every == {"Prefers dark mode in every tool": "superseded", "Prefers light mode": "live"}
    block = json.loads(runner.invoke(cli, ["context", "--no-record", "--json"]).output)  # the same rule
    assert "Prefers dark mode in every tool" not in block["text"] and "Prefers light mode" in block["text"]


# ------------------------------------------------------------------ #16: docs/memoryblock.md's example runs


def test_the_python_example_in_memoryblock_md_runs_verbatim(vault_dir, monkeypatch, tmp_path):
    """docs/memoryblock.md's example, as written but for the vault's path, in a scratch folder."""
    make_vault(vault_dir, STALE_LOG, day="2026-11-27")
    (vault_dir / "MEMORY.md").write_text(STALE_MEMORY)
    text = (Path(__file__).parent.parent / "docs/memoryblock.md").read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert '"~/memory"' in example
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    exec(compile(example.replace('"~/memory"', repr(str(vault_dir))), "memoryblock.md", "exec"), {})
    lines = (out / "blocks.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(x)["content"] for x in lines} == {"Prefers light mode, not dark mode.", "Prefers light mode"}
    every = json.loads((out / "all-blocks.json").read_text(encoding="utf-8"))
    assert len(every) == 4


# ------------------------------------------------------------------ #18: docs/ingest.md's example is generated


def test_the_ingest_example_in_the_docs_is_current():
    from cogapp import Cog

    doc = Path(__file__).parent.parent / "docs" / "ingest.md"
    assert "USER: Hey, can you check the status of my order" in doc.read_text(encoding="utf-8")  # the input shown
    assert Cog().main(["cog", "--check", str(doc)]) == 0, "docs/ingest.md is stale: run `cog -r docs/ingest.md`"


# ------------------------------------------------------------------ qa17c NEW-1: an edited transcript


def edited(tmp_path: Path, fixture: str, old: str, new: str, name: str | None = None) -> Path:
    """The fixture as the user edited it: `old` replaced by `new`, saved under the same name."""
    text = (HERE / fixture).read_text()
    assert old in text
    path = tmp_path / (name or fixture)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(old, new))
    return path


def budgets(root: Path) -> list[str]:
    return sorted(c for c in live(root) if "budget" in c.lower())


def test_a_turn_edited_to_another_value_supersedes_what_the_turn_wrote_before(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    trip = edited(tmp_path, "edited_trip.json", "3000 euros", "3000 euros", name="a/trip.json")
    assert ingest(runner, str(trip), "--at", AT).exit_code == 0
    trip = edited(tmp_path, "edited_trip.json", "My budget is 3000 euros", "My budget is 3500 euros", name="b/trip.json")
    report = json.loads(ingest(runner, str(trip), "--at", AT, "--json").output)
    step = next(f for f in report["facts"] if "budget" in (f["content"] or ""))
    assert step["action"] == "supersede" and step["source"] == "trip.json#turn-3"
    assert step["content"] == "The user's budget is 3500 euros." and "edited" in step["why"]
    assert report["counts"]["supersede"] == 1 and "new" not in report["counts"]  # the flight, seats, hotel: known
    assert budgets(vault_dir) == ["The user's budget is 3500 euros."]
    assert "The user's flight is on Friday." in live(vault_dir)
    before = snapshot(vault_dir)
    again = json.loads(ingest(runner, str(trip), "--json").output)
    assert set(again["counts"]) == {"known"} and snapshot(vault_dir) == before


def test_an_edited_correction_replaces_the_correction_the_turn_wrote(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    assert ingest(runner, str(HERE / "edited_trip.json"), "--at", AT).exit_code == 0
    assert ingest(runner, str(HERE / "edited_fix.txt"), "--at", AT).exit_code == 0
    assert budgets(vault_dir) == ["The user's budget is 4500 euros."]
    fix = edited(tmp_path, "edited_fix.txt", "4500 euros", "5000 euros")
    report = json.loads(ingest(runner, str(fix), "--at", AT, "--json").output)
    assert report["counts"] == {"supersede": 1, "known": 1}
    step = report["facts"][0]
    assert step["source"] == "edited_fix.txt#turn-1" and step["content"] == "The user's budget is 5000 euros."
    assert budgets(vault_dir) == ["The user's budget is 5000 euros."]
    assert not any(", not " in c and "budget" in c for c in live(vault_dir))
    before = snapshot(vault_dir)
    assert json.loads(ingest(runner, str(fix), "--json").output)["counts"] == {"known": 2}
    assert snapshot(vault_dir) == before
    # the user edits it back: the newest reading wins again, and once
    back = json.loads(ingest(runner, str(HERE / "edited_fix.txt"), "--json").output)
    assert back["counts"] == {"supersede": 1, "known": 1}
    assert budgets(vault_dir) == ["The user's budget is 4500 euros."]
    assert json.loads(ingest(runner, str(HERE / "edited_fix.txt"), "--json").output)["counts"] == {"known": 2}


def test_the_qa_sequence_leaves_one_value_per_turn(vault_dir, runner, tmp_path):
    """NEW-1 as reported: trip edited 3000 -> 3500, then fix.txt, then fix.txt edited 4500 -> 5000."""
    make_vault(vault_dir)
    assert ingest(runner, str(HERE / "edited_trip.json"), "--at", AT).exit_code == 0
    trip = edited(tmp_path, "edited_trip.json", "My budget is 3000 euros", "My budget is 3500 euros")
    assert ingest(runner, str(trip), "--at", AT).exit_code == 0
    assert ingest(runner, str(HERE / "edited_fix.txt"), "--at", AT).exit_code == 0
    fix = edited(tmp_path, "edited_fix.txt", "4500 euros", "5000 euros")
    assert ingest(runner, str(fix), "--at", AT).exit_code == 0
    assert budgets(vault_dir) == ["The user's budget is 5000 euros."]
    with Vault.open(vault_dir) as v:
        sources = [e.source for e in v.timeline.live() if e.kind == "log" and "budget" in e.content]
    assert sources == ["edited_fix.txt#turn-1"]
    for path in (trip, fix):  # and again: nothing
        assert set(json.loads(ingest(runner, str(path), "--json").output)["counts"]) == {"known"}


def test_a_turn_that_left_the_transcript_leaves_its_entry_alone(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    assert ingest(runner, str(HERE / "edited_trip.json"), "--at", AT).exit_code == 0
    before = live(vault_dir)
    trip = edited(tmp_path, "edited_trip.json", "My budget is 3000 euros. My flight is on Friday.",
                  "Thanks, that is all.")
    report = json.loads(ingest(runner, str(trip), "--at", AT, "--json").output)
    assert report["counts"] == {"known": 2} and report["entries"] == []
    assert live(vault_dir) == before and "The user's budget is 3000 euros." in before


def test_a_turn_edited_to_say_something_else_entirely_is_a_new_fact(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    assert ingest(runner, str(HERE / "edited_trip.json"), "--at", AT).exit_code == 0
    trip = edited(tmp_path, "edited_trip.json", "I prefer window seats on flights.", "I hate early morning flights.")
    report = json.loads(ingest(runner, str(trip), "--at", AT, "--json").output)
    assert [f["action"] for f in report["facts"] if f["source"] == "edited_trip.json#turn-5"] == ["new"]
    assert {"The user prefers window seats on flights.", "The user hates early morning flights."} <= set(live(vault_dir))


def test_turns_shifted_by_an_inserted_turn_supersede_nothing(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    first = tmp_path / "a" / "plan.txt"
    first.parent.mkdir()
    first.write_text("USER: My flight is on Friday morning.\n\nUSER: My flight is at 10:40 in the morning.\n\n"
                     "USER: My flight gate is B12.\n")
    assert ingest(runner, str(first), "--at", AT).exit_code == 0
    before = sorted(live(vault_dir))
    second = tmp_path / "b" / "plan.txt"
    second.parent.mkdir()
    second.write_text("USER: Hello again!\n\n" + first.read_text())  # every turn one number on
    report = json.loads(ingest(runner, str(second), "--at", AT, "--json").output)
    assert report["counts"] == {"reconfirm": 3}
    assert set(before) <= set(live(vault_dir))  # each turn's fact is said again, none replaced


def test_an_edited_turn_whose_old_value_a_later_correction_replaced_writes_nothing(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    assert ingest(runner, str(HERE / "edited_trip.json"), "--at", AT).exit_code == 0
    assert ingest(runner, str(HERE / "edited_fix.txt"), "--at", AT).exit_code == 0  # 4500, not 3000
    trip = edited(tmp_path, "edited_trip.json", "My budget is 3000 euros", "My budget is 3500 euros")
    before = snapshot(vault_dir)
    for _ in range(2):
        report = json.loads(ingest(runner, str(trip), "--at", AT, "--json").output)
        step = next(f for f in report["facts"] if "budget" in f["content"])
        assert step["action"] == "overtaken" and "superseded by" in step["why"] and step["target"]
        assert report["entries"] == [] and snapshot(vault_dir) == before
    assert budgets(vault_dir) == ["The user's budget is 4500 euros."]
