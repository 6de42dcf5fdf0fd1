"""Issue 17, `memvault ingest`: facts from a conversation or tool log into the vault.

CLI through CliRunner, the vault's state read back through the library; `--with` runs a real
Python script (tests/data/ingest/extractor.py).
"""

from __future__ import annotations

import json
import shlex
import sys
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.cli import cli
from memvault.entries.similarity import same_fact
from memvault.ingest.extract import extract
from memvault.ingest.transcript import read_transcript
from memvault.vault import Vault
from tests.conftest import DATA
from tests.helpers_secrets import expand

HERE = DATA / "ingest"
EXAMPLE = HERE / "protocol_example.txt"
MOVE = HERE / "move_chat.txt"
AT = "2026-02-20 18:00"
PRIOR = """# 2026-02-10

## 18:20 - Observation
User is named Jonas Weber-Öztürk and is moving to Berlin.

## 18:25 - Belief
Send Jonas reminders by SMS, never by email.
"""


def make_vault(root: Path, prior: str | None = None) -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    if prior:
        (root / "memory" / "2026-02-10.md").write_text(prior)
    return root


def ingest(runner, *args: str):
    return runner.invoke(cli, ["ingest", *args], catch_exceptions=False)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.parts}


def ingested(root: Path, source: str) -> list:
    with Vault.open(root) as v:
        return [e for e in v.timeline.events if e.source and e.source.startswith(source + "#")]


def tool(mode: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'extractor.py'))} {mode}"


# ------------------------------------------------------------------ the protocol's example


def test_the_protocol_example_writes_its_facts_the_instruction_first(vault_dir, runner):
    make_vault(vault_dir)
    result = ingest(runner, str(EXAMPLE), "--at", AT)
    assert result.exit_code == 0, result.output
    events = ingested(vault_dir, "protocol_example.txt")
    by_text = {e.content: e for e in events}
    assert set(by_text) == {
        "Always refer to the user as Dr. Anya Sharma.",
        "The user's order number is O-9987.",
        "Order O-9987: status shipped, carrier FedEx, tracking id FX555123.",
    }
    title = by_text["Always refer to the user as Dr. Anya Sharma."]
    others = [e for e in events if e is not title]
    assert title.importance == 1.0 and all(e.importance is not None and e.importance < 1.0 for e in others)
    assert title.source == "protocol_example.txt#turn-1" and "instruction" in title.tags
    assert json.loads(title.meta["metadata"])["speaker"] == "user"
    tracking = by_text["Order O-9987: status shipped, carrier FedEx, tracking id FX555123."]
    assert tracking.source == "protocol_example.txt#turn-4" and json.loads(tracking.meta["metadata"])["speaker"] == "tool"
    assert all(e.timestamp is not None and e.timestamp.isoformat().startswith("2026-02-20T18:00") for e in events)


def test_the_same_transcript_twice_writes_nothing_the_second_time(vault_dir, runner):
    make_vault(vault_dir)
    assert ingest(runner, str(EXAMPLE), "--at", AT).exit_code == 0
    before = snapshot(vault_dir)
    again = json.loads(ingest(runner, str(EXAMPLE), "--json").output)  # another time: still nothing
    assert again["counts"] == {"known": 3} and again["entries"] == []
    assert snapshot(vault_dir) == before


def test_dry_run_prints_the_entries_and_leaves_the_vault_byte_identical(vault_dir, runner):
    make_vault(vault_dir, PRIOR)
    before = snapshot(vault_dir)
    result = ingest(runner, str(EXAMPLE), "--dry-run", "--at", AT)
    assert result.exit_code == 0, result.output
    assert "## 18:00 - Observation\nAlways refer to the user as Dr. Anya Sharma.\nImportance: 1\n" in result.output
    assert "Source: protocol_example.txt#turn-4" in result.output and "nothing was written" in result.output
    assert snapshot(vault_dir) == before


# ------------------------------------------------------------------ a 50-turn conversation


@pytest.fixture
def moved(vault_dir, runner) -> dict:
    make_vault(vault_dir, PRIOR)
    result = ingest(runner, str(MOVE), "--at", AT, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_move_conversation_has_fifty_turns_and_small_talk_gives_nothing(moved):
    assert moved["turns"] == 50
    turns = {f["turn"] for f in moved["facts"]}
    assert not turns & {1, 2, 19, 20, 21, 22, 30, 31, 47, 50}  # greetings, weather, thanks, goodbye


def test_the_move_conversation_writes_no_fact_twice(moved, vault_dir):
    events = ingested(vault_dir, "move_chat.txt")
    texts = [e.content for e in events]
    assert len(texts) == len(set(texts)) == moved["counts"]["new"] + moved["counts"]["reconfirm"] + moved["counts"]["supersede"]
    with Vault.open(vault_dir) as v:
        live = [e for e in events if v.timeline.status(e) == "live"]
    twice = [(a.content, b.content) for a, b in combinations(live, 2) if same_fact(a.content, b.content)]
    assert twice == []
    pref = next(e for e in events if e.content == "The user prefers movers who also pack the kitchen.")
    assert json.loads(pref.meta["metadata"])["turns"] == [7, 32]  # said twice, written once
    budget = next(e for e in events if e.content.startswith("The user's budget is 3000 euros"))
    assert json.loads(budget.meta["metadata"])["turns"] == [23, 49]


def test_what_the_vault_already_says_is_reconfirmed_not_copied(moved, vault_dir):
    events = {e.content: e for e in ingested(vault_dir, "move_chat.txt")}
    assert events["The user is named Jonas Weber-Öztürk."].reconfirms == ("2026-02-10T18:20",)
    assert events["Always send the user reminders by SMS, never by email."].reconfirms == ("2026-02-10T18:25",)
    assert moved["counts"]["reconfirm"] == 2
    with Vault.open(vault_dir) as v:
        assert v.timeline.reconfirmed_by["2026-02-10T18:25"] == [events[
            "Always send the user reminders by SMS, never by email."].id]


def test_corrections_supersede_what_they_correct_in_english_and_german(moved, vault_dir):
    events = {e.content: e for e in ingested(vault_dir, "move_chat.txt")}
    march12, march14 = events["Decided: move on March 12."], events["Decided: move on March 14."]
    old_address = events["Angabe: Meine neue Adresse ist Lindenstraße 5, 10969 Berlin."]
    new_address = events["Angabe: Meine neue Adresse ist Lindenstraße 7, 10969 Berlin."]
    assert march14.supersedes == march12.id and march14.type == "correction"
    assert new_address.supersedes == old_address.id
    with Vault.open(vault_dir) as v:
        assert v.timeline.status(march12) == "superseded" and v.timeline.status(march14) == "live"
        assert v.timeline.status(old_address) == "superseded"
    assert "Anweisung: Bitte sprich ab jetzt immer Deutsch mit mir." in events
    assert events["Vorliebe: Ich bevorzuge Termine am Vormittag."].importance == 0.9


def test_the_move_conversation_again_writes_nothing(moved, vault_dir, runner):
    before = snapshot(vault_dir)
    again = json.loads(ingest(runner, str(MOVE), "--at", AT, "--json").output)
    assert set(again["counts"]) == {"known"} and snapshot(vault_dir) == before
    check = runner.invoke(cli, ["check", "--json"])
    assert check.exit_code == 0, check.output


# ------------------------------------------------------------------ transcript shapes


PROTOCOL_TURNS = [(t.speaker, t.text) for t in read_transcript(EXAMPLE.read_text(), "x")]


def messages() -> list[dict]:
    return [
        {"role": "user", "content": "Hey, can you check the status of my order, O-9987? And please, always refer "
                                    "to me as Dr. Anya Sharma."},
        {"role": "assistant", "content": [{"type": "text", "text": "Of course, Dr. Sharma. Let me check on order "
                                                                   "O-9987 for you."}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"function": {"name": "get_order_status", "arguments": '{"order_id": "O-9987"}'}}]},
        {"role": "tool", "content": '{"status": "shipped", "carrier": "FedEx", "tracking_id": "FX555123"}'},
        {"role": "assistant", "content": "Dr. Sharma, your order O-9987 has been shipped via FedEx. The tracking "
                                         "number is FX555123."},
    ]


@pytest.mark.parametrize("shape", ["list", "object", "jsonl"])
def test_json_messages_read_as_the_same_turns(shape):
    msgs = messages()
    text = {"list": json.dumps(msgs), "object": json.dumps({"messages": msgs}),
            "jsonl": "\n".join(json.dumps(m) for m in msgs)}[shape]
    turns = read_transcript(text, "chat.json")
    assert [t.n for t in turns] == [1, 2, 3, 4, 5]
    assert [t.speaker for t in turns] == [s for s, _ in PROTOCOL_TURNS]
    assert turns[2].call and turns[2].text.startswith("get_order_status(")
    assert {f.content for f in extract(turns)} == {f.content for f in extract(read_transcript(EXAMPLE.read_text(), "x"))}


def test_chat_exports_of_chatgpt_and_claude():
    chatgpt = {"title": "Umzug", "mapping": {
        "b": {"message": {"author": {"role": "assistant"}, "create_time": 2.0,
                          "content": {"content_type": "text", "parts": ["Noted, SMS only."]}}},
        "root": {"message": None},
        "a": {"message": {"author": {"role": "user"}, "create_time": 1.0,
                          "content": {"content_type": "text", "parts": ["Please always text me, never email."]}}},
        "s": {"message": {"author": {"role": "system"}, "create_time": None, "content": {"parts": [""]}}},
    }}
    claude = [{"name": "Umzug", "chat_messages": [
        {"sender": "human", "text": "Please always text me, never email."},
        {"sender": "assistant", "text": "Noted, SMS only."}]}]
    for data in (chatgpt, [chatgpt], claude):
        turns = read_transcript(json.dumps(data), "export.json")
        assert [(t.n, t.speaker, t.text) for t in turns] == [
            (1, "user", "Please always text me, never email."), (2, "agent", "Noted, SMS only.")]
    assert [f.content for f in extract(turns)] == ["Always text the user, never email."]


def test_terminal_colours_and_control_characters_never_reach_an_entry():
    coloured = "USER: \x1b[1;32mAlways\x1b[0m use the staging\x07 cluster.\r\n"
    escaped = json.dumps([{"role": "user", "content": "Always use the staging\u001b[0m\u0000 cluster."}])
    for text in (coloured, escaped):
        assert [f.content for f in extract(read_transcript(text, "t"))] == ["Always use the staging cluster."]


def test_a_tool_log_may_start_with_a_tool_call():
    log = ('[TOOL_CALL: track(tracking_id="FX555123")]\n'
           '[TOOL_OUTPUT: {"status": "delivered", "tracking_id": "FX555123", "signed_by": "A. Sharma"}]\n')
    turns = read_transcript(log, "tools.log")
    assert [(t.speaker, t.call) for t in turns] == [("agent", True), ("tool", False)]
    assert [f.content for f in extract(turns)] == ["Tracking FX555123: status delivered, signed by A. Sharma."]


def test_plain_text_is_one_turn_a_paragraph_and_bad_json_names_file_and_line(vault_dir, runner, tmp_path):
    turns = read_transcript("Hallo!\n\nBitte ruf mich ab sofort nie vor 9 Uhr an.\n", "notes.txt")
    assert [(t.n, t.speaker) for t in turns] == [(1, "user"), (2, "user")]
    assert [f.kind for f in extract(turns)] == ["instruction"]
    make_vault(vault_dir)
    bad = tmp_path / "chat.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "user", "content": \n')
    result = runner.invoke(cli, ["ingest", str(bad), "--json"])
    assert result.exit_code == 2
    error = json.loads(result.output)["error"]
    assert error["line"] == 2 and "not a JSON line" in error["message"] and error["file"] == str(bad)
    missing = runner.invoke(cli, ["ingest", str(tmp_path / "nope.txt")])
    assert missing.exit_code == 2 and "no such transcript" in missing.output


# ------------------------------------------------------------------ the built-in extractor


@pytest.mark.parametrize(("said", "kind", "content"), [
    ("USER: I always forget my keys.", None, None),
    ("USER: I'd like to check my order status.", None, None),
    ("USER: Hello! How are you? Thanks a lot, bye!", None, None),
    ("USER: Never call me before 9am.", "instruction", "Never call the user before 9am."),
    ("USER: I prefer window seats on long flights.", "preference", "The user prefers window seats on long flights."),
    ("USER: I don't like spicy food.", "preference", "The user does not like spicy food."),
    ("USER: Please call me Sam.", "name", "The user wants to be called Sam."),
    ("USER: Ich heiße Jürgen Maaß.", "name", "The user is named Jürgen Maaß."),
    ("USER: We decided to use Postgres for Atlas.", "decision", "Decided: use Postgres for Atlas."),
    ("USER: Wir haben uns für die rote Couch entschieden.", "decision",
     "Entscheidung: Wir haben uns für die rote Couch entschieden."),
    ("USER: Ich mag keinen Kaffee nach 15 Uhr.", "preference", "Vorliebe: Ich mag keinen Kaffee nach 15 Uhr."),
    ("USER: Meine Sendungsnummer ist 00340434161094042557.", "id", "The user's tracking number is 00340434161094042557."),
    ("AGENT: Let's go with the blue one?", None, None),
    ("USER: Actually, that sounds great.", None, None),
])
def test_the_rules(said, kind, content):
    facts = extract(read_transcript(said, "t"))
    if kind is None:
        assert facts == []
    else:
        assert [(f.kind, f.content) for f in facts] == [(kind, content)]


def test_a_correction_names_the_old_and_the_new_value():
    facts = extract(read_transcript("USER: Let's go with the 12th.\n\nUSER: No, make it the 14th, not the 12th.", "t"))
    fix = facts[-1]
    assert (fix.kind, fix.corrects, fix.value) == ("correction", "the 12th", "the 14th")


# ------------------------------------------------------------------ secrets


def test_a_secret_in_a_transcript_is_withheld_and_never_written_or_sent(vault_dir, runner, tmp_path, monkeypatch):
    make_vault(vault_dir)
    token = expand("ghp_{{rand:36}}", 7)
    chat = tmp_path / "chat.txt"
    chat.write_text(f"USER: Always deploy with my token {token} please.\nI prefer Fridays for deploys.\n\n"
                    "AGENT: Noted.\n\nUSER: Thanks!\n\nAGENT: You're welcome.\n")
    result = ingest(runner, str(chat), "--json")
    report = json.loads(result.output)
    assert report["withheld_lines"] == 1 and token not in result.output
    assert [f["content"] for f in report["facts"]] == ["The user prefers Fridays for deploys."]
    assert all(token not in p.read_text() for p in (vault_dir / "memory").glob("*.md"))
    saved = tmp_path / "request.json"
    monkeypatch.setenv("INGEST_SAVE", str(saved))
    assert ingest(runner, str(chat), "--with", tool("good"), "--dry-run").exit_code == 0
    assert token not in saved.read_text() and "line withheld" in saved.read_text()


# ------------------------------------------------------------------ --with


def test_with_a_good_command_writes_its_facts(vault_dir, runner, tmp_path, monkeypatch):
    make_vault(vault_dir)
    saved = tmp_path / "request.json"
    monkeypatch.setenv("INGEST_SAVE", str(saved))
    result = ingest(runner, str(EXAMPLE), "--with", tool("good"), "--at", AT, "--json")
    assert result.exit_code == 0, result.output
    request = json.loads(saved.read_text())
    assert request["protocol"] == "memvault-ingest/1" and request["source_id"] == "protocol_example.txt"
    assert "Dr. Anya Sharma" in request["text"] and "Source ID: protocol_example.txt" in request["prompt"]
    assert request["turns"][3] == {"turn": 4, "speaker": "tool", "source_id": "protocol_example.txt#turn-4",
                                   "text": '{"status": "shipped", "carrier": "FedEx", "tracking_id": "FX555123"}'}
    events = {e.content: e for e in ingested(vault_dir, "protocol_example.txt")}
    assert set(events) == {"The user's preferred title is Dr. Anya Sharma.",
                           "Order O-9987 was shipped via FedEx, tracking number FX555123."}  # "said hello": 0.0, left out
    title = events["The user's preferred title is Dr. Anya Sharma."]
    assert title.importance == 1.0 and title.source == "protocol_example.txt#turn-1"
    assert json.loads(title.meta["metadata"]) == {"speaker": "user", "extractor": "with"}
    assert json.loads(result.output)["counts"] == {"new": 2, "trivial": 1}


@pytest.mark.parametrize(("mode", "message"), [
    ("prose", "did not print JSON"),
    ("fail", "exited with status 3"),
    ("shape", "reply fact 2: 'importance_score' must be a number from 0.0 to 1.0"),
    ("object", "the reply must be a JSON array of fact objects"),
])
def test_with_a_bad_answer_writes_nothing(vault_dir, runner, mode, message):
    make_vault(vault_dir, PRIOR)
    before = snapshot(vault_dir)
    result = runner.invoke(cli, ["ingest", str(EXAMPLE), "--with", tool(mode), "--at", AT])
    assert result.exit_code == 1
    assert message in result.output and "nothing was written" in result.output
    if mode == "fail":
        assert "model overloaded" in result.output
    assert snapshot(vault_dir) == before


def test_with_a_slow_command_times_out(vault_dir, runner):
    make_vault(vault_dir)
    result = runner.invoke(cli, ["ingest", str(EXAMPLE), "--with", tool("slow"), "--timeout", "0.5", "--json"])
    assert result.exit_code == 1
    assert "did not answer within 0.5s (--timeout); nothing was written" in json.loads(result.output)["error"]["message"]
    assert not list((vault_dir / "memory").glob("*.md"))


def test_source_names_the_transcript(vault_dir, runner):
    make_vault(vault_dir)
    assert ingest(runner, str(EXAMPLE), "--source", "session-42", "--at", AT).exit_code == 0
    assert {e.source for e in ingested(vault_dir, "session-42")} == {"session-42#turn-1", "session-42#turn-4"}
    bad = runner.invoke(cli, ["ingest", str(EXAMPLE), "--source", "a b"])
    assert bad.exit_code == 2 and "one token" in bad.output


def test_a_future_time_is_refused_before_anything_even_in_a_dry_run(vault_dir, runner):
    make_vault(vault_dir)
    for extra in ([], ["--dry-run"]):
        result = runner.invoke(cli, ["ingest", str(EXAMPLE), "--at", "tomorrow 10:00", *extra])
        assert result.exit_code != 0 and "future" in result.output.lower(), result.output
    assert not list((vault_dir / "memory").glob("*.md"))


# ------------------------------------------------------------------ against what the vault holds


def test_a_correction_supersedes_a_vault_entry_only_when_one_fits(vault_dir, runner, tmp_path):
    make_vault(vault_dir, "# 2026-02-10\n\n## 09:00 - Observation\nThe movers come on March 12.\n\n"
                          "## 09:05 - Observation\nDas Bürgeramt hat am March 12 zu.\n")
    chat = tmp_path / "fix.txt"
    chat.write_text("USER: Actually, the movers come on March 14, not March 12.\n")
    report = json.loads(ingest(runner, str(chat), "--at", AT, "--json").output)
    assert report["facts"][0]["action"] == "supersede" and report["facts"][0]["target"] == "2026-02-10T09:00"
    (fix,) = ingested(vault_dir, "fix.txt")
    assert (fix.content, fix.supersedes, fix.type) == ("The movers come on March 14.", "2026-02-10T09:00", "correction")
    with Vault.open(vault_dir) as v:
        assert v.timeline.status(v.timeline.by_id["2026-02-10T09:00"]) == "superseded"
        assert v.timeline.status(v.timeline.by_id["2026-02-10T09:05"]) == "live"


def test_a_correction_that_fits_two_entries_supersedes_neither(vault_dir, runner, tmp_path):
    make_vault(vault_dir, "# 2026-02-10\n\n## 09:00 - Observation\nThe movers come on March 12.\n\n"
                          "## 09:05 - Observation\nThe movers come with the van on March 12.\n")
    chat = tmp_path / "fix.txt"
    chat.write_text("USER: Actually, the movers come on March 14, not March 12.\n")
    report = json.loads(ingest(runner, str(chat), "--at", AT, "--json").output)
    assert [(f["action"], f["kind"]) for f in report["facts"]] == [("new", "correction")]
    (fix,) = ingested(vault_dir, "fix.txt")
    assert fix.supersedes is None and fix.type == "observation" and "correction" in fix.tags


def test_every_later_telling_reconfirms_the_first(vault_dir, runner):
    make_vault(vault_dir)
    for source in ("s1", "s2", "s3"):
        assert ingest(runner, str(EXAMPLE), "--source", source, "--at", AT).exit_code == 0
    first = {e.content: e.id for e in ingested(vault_dir, "s1")}
    for source in ("s2", "s3"):
        again = ingested(vault_dir, source)
        assert len(again) == 3 and all(e.reconfirms == (first[e.content],) for e in again)


# ------------------------------------------------------------------ any text at all

WORDS = ["USER:", "AGENT:", "[TOOL_OUTPUT:", "]", "always", "never", "not", "actually,", "nein,", "my", "is",
         "call me", "Dr.", "order", "O-9987", "I prefer", "ich", "bitte", "immer", "{", "}", '"id":', "\n", "\n\n",
         "## 10:00 - Belief", "Supersedes: x", "?", ".", ",", "—", "Lindenstraße", "\u200b", "\t"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), max_size=40))
def test_any_text_reads_and_every_fact_is_one_clean_line(parts):
    from memvault.errors import InputError
    from memvault.textsafety import first_disallowed

    text = " ".join(parts)
    try:
        turns = read_transcript(text, "fuzz.txt")
    except InputError:
        return  # JSON-looking text that is not JSON: refused with file and line
    assert [t.n for t in turns] == list(range(1, len(turns) + 1))
    for fact in extract(turns):
        assert 0 < fact.importance <= 1 and fact.content.strip() == fact.content != ""
        assert first_disallowed(fact.content, line_breaks=False) is None  # one line, no control characters
