"""MemoryBlock export (issue 17): every block valid against the shipped draft-07 schema (checked by
jsonschema's Draft7Validator with uuid and date-time formats), stable UUIDs, SEMANTIC bullets
pointing at the EPISODIC blocks of the entries they cite, on a vault written the way people and
agents write: entries through `memvault log`'s write path, a MEMORY.md written by curate,
freeform German and English notes in oddly named files, superseded, expired and forgotten entries."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, FormatChecker

from memvault.curate.promote import apply, plan_curation
from memvault.errors import InputError
from memvault.interop import memoryblock as mb
from memvault.search import access
from memvault.vault import Vault
from memvault.write.log import init_vault, log_entry

BERLIN = ZoneInfo("Europe/Berlin")
AT = datetime(2026, 2, 23, 12, 0, tzinfo=BERLIN)
SCHEMA_FILE = Path(mb.__file__).parent / "schemas" / "memoryblock.json"

# An independent check of the two formats (jsonschema checks them only with extra packages):
# a canonical UUID, and RFC 3339 date-time with seconds and a zone.
FORMATS = FormatChecker()
FORMATS.checks("uuid", raises=ValueError)(lambda v: not isinstance(v, str) or str(uuid.UUID(v)) == v)
FORMATS.checks("date-time", raises=ValueError)(
    lambda v: not isinstance(v, str) or bool(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", v) and datetime.fromisoformat(v)))
VALIDATOR = Draft7Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")), format_checker=FORMATS)


def t(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 2, day, hour, minute, tzinfo=BERLIN)


def log(root: Path, text: str, **kw) -> str:
    return log_entry(Vault.open(root), text, **kw).id


IDEEN = """\
# Ideen für Q3 (Entwurf)

Lose Sammlung, nicht kuratiert.

## Preise
Staffelpreise für Teams ab 5 Plätzen? Anna fragen.

## Export nach Obsidian
- 2026-02-18T09:12:00Z [decision:agent:main] Export bleibt Markdown, kein eigenes Format
"""

CALL = """\
# 2026-02-19 – call with Jonas

## What happened
Jonas said the staging DB is read-only until March; use the replica for reports.

## Follow-ups
- [ ] ask ops for a read-write window
Tags: ops, staging
"""

TOMBSTONED = """\
# 2026-02-17

## 09:15 - Belief
Dana mag keinen Kaffee nach 15 Uhr
Agent-Id: assistant-v2
Forgotten: 2026-02-18T10:00+01:00, Dana hat sich korrigiert

## 10:30 - Observation
Heizung im Büro war kaputt, Techniker kommt Donnerstag
Source: user
"""


@pytest.fixture
def root(vault_dir: Path) -> Path:
    """A week of memory: the entries of `memvault log`, notes by hand, MEMORY.md by curate."""
    root = init_vault(vault_dir, timezone="Europe/Berlin")
    log(root, "Dana prefers dark mode in every editor", type="belief", at=t(14, 9), source="user", tags=("ui",))
    log(root, "Wir nehmen Postgres statt MySQL für Atlas", type="decision", at=t(14, 10), importance="high",
        meta={"agent-id": "planner-v2", "user-id": "dana"}, scope="project:atlas")
    log(root, "Zugangskarte für das Büro läuft ab", type="observation", at=t(15, 8), expires=t(20, 0), importance="low")
    log(root, "Build server is flaky on Fridays", type="observation", at=t(16, 11), importance=0.7,
        source="session:2026-02-16-a", scope="ci.example")
    log(root, "Dana prefers light mode now", type="correction", at=t(21, 16), supersedes="2026-02-14T09:00",
        source="user", meta={"metadata": '{"channel": "slack", "speaker": "nobody"}'})
    (root / "memory" / "2026-02-17.md").write_text(TOMBSTONED, encoding="utf-8")
    (root / "memory" / "projects").mkdir()
    ideen = root / "memory" / "projects" / "Ideen für Q3 (Entwurf).md"
    ideen.write_text(IDEEN, encoding="utf-8")
    stamp = t(12, 18).timestamp()  # never committed: dated by its modification time
    os.utime(ideen, (stamp, stamp))
    (root / "memory" / "2026-02-19 call – Jonas.md").write_text(CALL, encoding="utf-8")
    vault = Vault.open(root)
    apply(vault, plan_curation(vault, at=t(22, 12)))
    return root


def export(root: Path, **kw) -> list[dict]:
    return mb.blocks(Vault.open(root), at=kw.pop("at", AT), **kw)


def by_mid(blocks: list[dict]) -> dict[str, dict]:
    return {b["metadata"]["memvault_id"]: b for b in blocks}


def errors(block: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(block)]


# -- the schema ------------------------------------------------------------------------------


def test_the_shipped_schema_is_the_protocols_draft_07_schema():
    shipped = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert shipped == mb.schema()
    assert shipped["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(shipped)
    assert shipped["required"] == ["id", "timestamp", "type", "importance_score", "content", "embedding_vector"]
    assert shipped["properties"]["metadata"]["properties"]["speaker"]["enum"] == ["user", "agent", "system", "tool"]


def test_the_validator_rejects_what_the_schema_forbids():
    good = {"id": str(uuid.uuid4()), "timestamp": "2026-02-21T16:00:00+01:00", "type": "EPISODIC",
            "importance_score": 0.5, "content": "x", "embedding_vector": []}
    assert errors(good) == [] and mb.validate(good) == []
    for bad in ({"id": "1e9a7f0d-8b6c-4b5a-9f1e-3a4d5e6f7g8h"}, {"timestamp": "2026-02-21 16:00"},
                {"type": "WORKING"}, {"importance_score": 1.2}, {"metadata": {"speaker": "nobody"}},
                {"metadata": {"synthesized_from": ["c8a9f0e1-d2b3-4c5d-6e7f-8g9h0i1j2k3l"]}}):
        assert errors(good | bad), bad
        assert mb.validate(good | bad), bad
    assert mb.validate({k: v for k, v in good.items() if k != "embedding_vector"}) == [
        "$: 'embedding_vector' is a required property"]


def test_every_block_of_a_real_vault_is_valid(root):
    for include_all in (False, True):
        blocks = export(root, include_all=include_all)
        assert blocks
        for block in blocks:
            assert errors(block) == [], block
            assert mb.validate(block) == []
        assert len({b["id"] for b in blocks}) == len(blocks)


SAMPLES = ["seed", "curate_week", "curate_budget", "freeform/vault", "messy", "notes", "obsidian", "retention"]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_block_of_the_sample_vaults_is_valid(tmp_path, name):
    """The repository's sample vaults (real layouts, freeform logs, Obsidian, messy files), copied:
    parsing may cache file dates in `.memvault/`."""
    root = shutil.copytree(Path(__file__).parent / "data" / name, tmp_path / "v")
    vault = Vault.open(root)
    blocks = mb.blocks(vault, include_all=True)
    assert len(blocks) == len(vault.events) > 0
    assert all(errors(b) == [] for b in blocks)
    assert len({b["id"] for b in blocks}) == len(blocks)
    episodic = {b["id"] for b in blocks if b["type"] == "EPISODIC"}
    assert all(set(b["metadata"]["synthesized_from"]) <= episodic for b in blocks if b["type"] == "SEMANTIC")


# -- what is exported, and how ---------------------------------------------------------------


def test_log_entries_and_notes_are_episodic_memory_md_is_semantic(root):
    blocks = export(root)
    kinds = {b["metadata"]["file"]: set() for b in blocks}
    for b in blocks:
        kinds[b["metadata"]["file"]].add(b["type"])
    assert kinds.pop("MEMORY.md") == {"SEMANTIC"}
    assert set().union(*kinds.values()) == {"EPISODIC"}
    contents = " ".join(b["content"] for b in blocks)
    # freeform notes in odd file names, German and English, a timestamped agent bullet
    assert "Staffelpreise für Teams" in contents and "staging DB is read-only" in contents
    assert "Export bleibt Markdown" in contents
    files = {b["metadata"]["file"] for b in blocks}
    assert {"memory/projects/Ideen für Q3 (Entwurf).md", "memory/2026-02-19 call – Jonas.md"} <= files


def test_only_live_entries_by_default_every_entry_with_include_all(root):
    live = by_mid(export(root))
    everything = by_mid(export(root, include_all=True))
    gone = {mid: b["metadata"]["status"] for mid, b in everything.items() if mid not in live}
    assert gone == {"2026-02-14T09:00": "superseded", "2026-02-15T08:00": "expired", "2026-02-17T09:15": "forgotten"}
    assert all(b["metadata"]["status"] == "live" for b in live.values())
    assert everything["2026-02-17T09:15"]["metadata"]["forgotten"] == "2026-02-18T10:00:00+01:00"
    assert everything["2026-02-15T08:00"]["metadata"]["expires"] == "2026-02-20T00:00:00+01:00"
    # as of before the correction, the dark-mode belief was live and the correction not yet written
    earlier = by_mid(export(root, at=t(20, 12)))
    assert "2026-02-14T09:00" in earlier and "2026-02-21T16:00" not in earlier


def test_fields_of_an_episodic_block(root):
    blocks = by_mid(export(root))
    decision = blocks["2026-02-14T10:00"]
    assert decision["id"] == str(uuid.uuid5(uuid.UUID("1a2b33da-7a74-53d0-b87b-a3f05abed28a"), "2026-02-14T10:00"))
    assert decision["timestamp"] == "2026-02-14T10:00:00+01:00" == decision["last_accessed"]
    assert decision["content"] == "Wir nehmen Postgres statt MySQL für Atlas"
    assert decision["importance_score"] == 0.9 and decision["embedding_vector"] == []
    assert decision["source_id"] == decision["metadata"]["file"] + "#L8-L13"
    meta = decision["metadata"]
    assert meta["speaker"] == "agent" and meta["source_agent_id"] == "planner-v2" and meta["user_id"] == "dana"
    assert meta["type"] == "decision" and meta["scope"] == "project:atlas" and meta["line"] == 8
    assert meta["confidence_0"] == 1.0 and 0 < meta["confidence"] < 1  # decayed by 9 days
    correction = blocks["2026-02-21T16:00"]
    assert correction["metadata"]["speaker"] == "user" and "source_agent_id" not in correction["metadata"]
    assert correction["source_id"].startswith("memory/2026-02-21.md#L")  # `Source: user` names a speaker
    assert correction["metadata"]["entry_metadata"] == {"channel": "slack", "speaker": "nobody"}
    flaky = blocks["2026-02-16T11:00"]
    assert flaky["source_id"] == "session:2026-02-16-a" and flaky["importance_score"] == 0.7
    heating = blocks["2026-02-17T10:30"]
    assert heating["metadata"]["speaker"] == "user" and heating["importance_score"] == 0.5


def test_semantic_blocks_point_at_the_episodic_blocks_they_were_made_from(root):
    blocks = export(root)
    episodic = {b["id"]: b for b in blocks if b["type"] == "EPISODIC"}
    bullets = [b for b in blocks if b["type"] == "SEMANTIC" and b["metadata"]["sources"]]
    assert len(bullets) == 3
    for bullet in bullets:
        made_from = bullet["metadata"]["synthesized_from"]
        assert made_from and set(made_from) <= set(episodic)
        assert [episodic[i]["metadata"]["memvault_id"] for i in made_from] == bullet["metadata"]["sources"]
        assert bullet["content"] in {episodic[i]["content"] for i in made_from}
    light = next(b for b in bullets if "light mode" in b["content"])
    assert light["timestamp"] == "2026-02-21T00:00:00+01:00"  # the `(added ...)` day
    postgres = next(b for b in bullets if "Postgres" in b["content"])
    assert postgres["importance_score"] == 0.9  # the highest of what it cites


def test_a_bullet_citing_a_superseded_entry_keeps_it_as_a_source_only(root):
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8").replace(
        "## Lessons Learned\n",
        "## Lessons Learned\n- Dana switched editor themes (source: [[2026-02-14#09:00 - Belief]], "
        "[[2026-02-21#16:00 - Correction]]) ^themes\n"), encoding="utf-8")
    live = by_mid(export(root))
    themes = live["themes"]["metadata"]
    assert themes["sources"] == ["2026-02-14T09:00", "2026-02-21T16:00"]
    assert themes["synthesized_from"] == [live["2026-02-21T16:00"]["id"]]
    everything = by_mid(export(root, include_all=True))
    assert everything["themes"]["metadata"]["synthesized_from"] == [
        everything["2026-02-14T09:00"]["id"], everything["2026-02-21T16:00"]["id"]]
    assert live["themes"]["metadata"]["undated"] is True  # no (added ...) date: after its newest source
    assert live["themes"]["timestamp"] == "2026-02-21T16:00:00+01:00"


def test_last_accessed_is_the_last_recall_memvault_recorded(root):
    recalled = datetime(2026, 2, 22, 8, 30, 15, tzinfo=UTC)
    access.record(root, ["2026-02-16T11:00"], at=recalled)
    blocks = by_mid(export(root))
    assert blocks["2026-02-16T11:00"]["last_accessed"] == "2026-02-22T09:30:15+01:00"
    assert blocks["2026-02-14T10:00"]["last_accessed"] == blocks["2026-02-14T10:00"]["timestamp"]
    before = by_mid(export(root, at=t(22, 9)))  # a recall after `at` is not known as of `at`
    assert before["2026-02-16T11:00"]["last_accessed"] == "2026-02-16T11:00:00+01:00"


def test_an_empty_scope_is_a_usage_error(root):
    with pytest.raises(InputError, match="--scope needs a value"):
        export(root, scope=" ")


def test_scope_keeps_that_scope_and_what_holds_everywhere(root):
    atlas = by_mid(export(root, scope="Project:Atlas"))
    assert "2026-02-14T10:00" in atlas and "2026-02-16T11:00" not in atlas
    assert "2026-02-21T16:00" in atlas  # unscoped: holds in every scope
    bullets = [b for b in atlas.values() if b["type"] == "SEMANTIC" and b["metadata"]["sources"]]
    assert not any("flaky" in b["content"] for b in bullets)  # its source is scoped ci.example
    assert all(set(b["metadata"]["synthesized_from"]) <= {x["id"] for x in atlas.values()} for b in bullets)


# -- stable ids ------------------------------------------------------------------------------


def test_ids_are_stable_across_runs_and_unrelated_edits(root):
    first = {mid: b["id"] for mid, b in by_mid(export(root, include_all=True)).items()}
    assert first == {mid: b["id"] for mid, b in by_mid(export(root, include_all=True)).items()}
    log(root, "Früher Termin beim Zahnarzt", type="observation", at=t(21, 7))  # before the 16:00 entry
    ideen = root / "memory" / "projects" / "Ideen für Q3 (Entwurf).md"
    ideen.write_text(ideen.read_text(encoding="utf-8").replace("Anna fragen.", "Anna fragen, dann Jonas."),
                     encoding="utf-8")
    (root / "memory" / "2026-02-22.md").write_text("# 2026-02-22\n\n## 10:00 - Belief\nAnother fact\n")
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8").replace("## Notes\n", "## Notes\n- A new bullet\n"),
                      encoding="utf-8")
    after = {mid: b["id"] for mid, b in by_mid(export(root, include_all=True)).items()}
    assert {mid: after[mid] for mid in first} == first
    assert len(after) == len(first) + 3


def test_a_duplicate_id_gets_its_own_block(root):
    (root / "memory" / "2026-02-22.md").write_text(
        "# 2026-02-22\n\n## 10:00 - Belief\nFirst\nId: same\n\n## 11:00 - Belief\nSecond\nId: same\n")
    blocks = [b for b in export(root) if b["metadata"]["memvault_id"] == "same"]
    assert len(blocks) == 2 and blocks[0]["id"] == mb.block_id("same") != blocks[1]["id"]
    assert blocks[1]["metadata"]["duplicate_id"] is True and "duplicate_id" not in blocks[0]["metadata"]


def test_undated_memory_md_text_is_dated_by_the_file(root):
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8").replace(
        "## Active Projects\n", "## Active Projects\nWhat we work on, newest first.\n\n- Atlas launch in März\n"),
        encoding="utf-8")
    stamp = t(22, 18, 5).timestamp()
    os.utime(memory, (stamp, stamp))
    blocks = [b for b in export(root) if b["metadata"]["file"] == "MEMORY.md" and not b["metadata"]["sources"]]
    prose = next(b for b in blocks if b["metadata"]["type"] == "note")
    bullet = next(b for b in blocks if b["content"] == "Atlas launch in März")
    for block in (prose, bullet):
        assert block["type"] == "SEMANTIC" and block["metadata"]["synthesized_from"] == []
        assert block["timestamp"] == "2026-02-22T18:05:00+01:00" and block["metadata"]["undated"] is True
    assert prose["content"] == "What we work on, newest first."
    earlier = [b for b in export(root, at=t(22, 9)) if b["content"] == "Atlas launch in März"]
    assert earlier[0]["timestamp"] == "2026-02-22T09:00:00+01:00"  # it existed by `at`


# -- output ----------------------------------------------------------------------------------


def test_json_lines_and_array_read_back_to_the_blocks(root):
    blocks = export(root)
    lines, array = io.StringIO(), io.StringIO()
    assert mb.write_jsonl(blocks, lines) == len(blocks) == mb.write_json(blocks, array)
    assert [json.loads(line) for line in lines.getvalue().splitlines()] == blocks
    assert json.loads(array.getvalue()) == blocks
    assert "für" in lines.getvalue()  # UTF-8 text, not \\u escapes


def test_metadata_that_is_no_strict_json_is_kept_as_text(root):
    (root / "memory" / "2026-02-22.md").write_text(
        '# 2026-02-22\n\n## 10:00 - Belief\nOdd numbers\nMetadata: {"score": NaN, "big": 1e999}\n')
    block = by_mid(export(root))["2026-02-22T10:00"]
    assert block["metadata"]["entry_metadata_text"] == '{"score": NaN, "big": 1e999}'
    assert "entry_metadata" not in block["metadata"]
    out = io.StringIO()
    mb.write_jsonl([block], out)
    json.loads(out.getvalue(), parse_constant=lambda c: pytest.fail(f"{c} is no JSON"))


def test_a_line_separator_in_the_text_keeps_one_block_on_one_line():
    block = {"content": "erste\u2028zweite\u2029dritte\x85vierte\nfünfte"}
    out = io.StringIO()
    mb.write_jsonl([block, block], out)
    assert len(out.getvalue().splitlines()) == 2
    assert json.loads(out.getvalue().splitlines()[0]) == block


def test_export_writes_what_blocks_gives(root):
    out = io.StringIO()
    count = mb.export(Vault.open(root), out, scope="ci.example", at=AT)
    assert [json.loads(x) for x in out.getvalue().splitlines()] == export(root, scope="ci.example")
    assert count == len(out.getvalue().splitlines())


# -- the pure decisions ----------------------------------------------------------------------


def test_importance_speaker_and_scope_rules():
    assert [mb.importance_score(v) for v in (None, 0.9, 0.2, 0.0, 1.0, 1.5, -1)] == [0.5, 0.9, 0.2, 0.0, 1.0, 1.0, 0.0]
    assert mb.semantic_importance(None, [0.2, None, 0.7]) == 0.7 and mb.semantic_importance(0.1, [0.9]) == 0.1
    assert mb.semantic_importance(None, [None]) == 0.5
    assert [mb.speaker(s) for s in ("user", " User ", "tool", None, "session:x", "https://x.example")] == [
        "user", "user", "tool", "agent", "agent", "agent"]
    assert mb.in_scope(None, "a") and mb.in_scope("global", "a") and mb.in_scope("A", "a")
    assert not mb.in_scope("b", "a") and mb.in_scope("b", None)
    assert mb.bullet_in_scope(None, ["a", "b"], "b") and not mb.bullet_in_scope(None, ["a"], "b")
    assert mb.bullet_in_scope(None, [], "b") and not mb.bullet_in_scope("a", [None], "b")


def test_times_are_rfc3339_even_for_local_mean_time():
    lmt = datetime(1850, 1, 1, 12, 0, tzinfo=BERLIN)  # +00:53:28: no RFC 3339 offset
    assert mb.stamp(lmt) == "1850-01-01T11:06:32+00:00"
    assert mb.stamp(datetime(2026, 2, 21, 16, 0, 0, 123456, tzinfo=BERLIN)) == "2026-02-21T16:00:00+01:00"
    created = t(21, 16)
    assert mb.last_access(created, None, AT) == created
    assert mb.last_access(created, created - timedelta(days=1), AT) == created
    assert mb.last_access(created, AT, AT) == AT and mb.last_access(created, AT + timedelta(1), AT) == created


def test_block_ids_are_uuid5_of_the_memvault_id():
    assert mb.block_id("2026-02-21T16:00") == "d32e9c4f-1945-582f-816e-b6eb9c266d59"  # pinned: every machine
    assert uuid.UUID(mb.block_id("x")).version == 5
    assert mb.block_id("x", "memory/a.md#L3") != mb.block_id("x")
    assert mb.embedding_vectors(["a", "b"]) == [[], []]


@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_block_id_is_exactly_uuid5(name):
    assert mb.block_id(name) == str(uuid.uuid5(mb.NAMESPACE, name))


# -- any vault ---------------------------------------------------------------------------------

WORDS = st.sampled_from(["Dana", "mag", "Kaffee", "prefers", "light", "mode", "Büro", "Übergabe", "order",
                         "O-9987", "FedEx", "straße", "déjà", "vu", "日本", "🙂", "the", "und", "42"])
TEXT = st.lists(WORDS, min_size=1, max_size=8).map(" ".join)
ENTRY = st.fixed_dictionaries({
    "text": TEXT,
    "type": st.sampled_from(["observation", "belief", "decision", "correction"]),
    "day": st.integers(1, 20), "minute": st.integers(0, 24 * 60 - 1),
    "importance": st.sampled_from([None, "high", "medium", "low", 0.0, 0.33, 1.0]),
    "source": st.sampled_from([None, "user", "session:a b", "https://example.org/x?y=1"]),
    "scope": st.sampled_from([None, "global", "project:atlas"]),
    "agent": st.sampled_from([None, "assistant-v2", "ingest"]),
    "supersede": st.booleans(), "expires": st.sampled_from([None, 1, 30]),
})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(ENTRY, min_size=1, max_size=6), scope=st.sampled_from([None, "project:atlas"]))
def test_any_vault_exports_valid_blocks_with_unique_ids(tmp_path_factory, entries, scope):
    root = init_vault(tmp_path_factory.mktemp("v"), timezone="Europe/Berlin", git=False)
    written: list[str] = []
    for e in entries:
        when = datetime(2026, 1, e["day"], tzinfo=BERLIN) + timedelta(minutes=e["minute"])
        written.append(log(
            root, e["text"], type=e["type"], at=when, importance=e["importance"], source=e["source"], scope=e["scope"],
            meta={"agent-id": e["agent"]} if e["agent"] else None,
            expires=when + timedelta(days=e["expires"]) if e["expires"] else None,
            supersedes=written[-1] if e["supersede"] and written and e["type"] == "correction" else None,
            check_refs=False))
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n## Facts\n" + "".join(
        f"- fact {i} (source: [[{w[:10]}#{w[11:16]}]])\n" for i, w in enumerate(written)), encoding="utf-8")
    for include_all in (False, True):
        blocks = mb.blocks(Vault.open(root), scope=scope, at=datetime(2026, 1, 25, tzinfo=BERLIN),
                           include_all=include_all)
        assert all(errors(b) == [] for b in blocks)
        ids = [b["id"] for b in blocks]
        assert len(set(ids)) == len(ids)
        if include_all and scope is None:  # nothing written is lost
            assert set(written) <= {b["metadata"]["memvault_id"] for b in blocks}
        episodic = {b["id"] for b in blocks if b["type"] == "EPISODIC"}
        assert all(set(b["metadata"]["synthesized_from"]) <= episodic for b in blocks if b["type"] == "SEMANTIC")


def test_the_export_command_writes_the_same_blocks(root, runner, tmp_path):
    """`memvault export --format memoryblock`: JSON Lines on stdout or into -o FILE (atomically),
    each line a schema-valid block, the same as the library's; --json says how many."""
    from memvault.cli import cli

    expected = export(root)
    shown = runner.invoke(cli, ["--vault", str(root), "export", "--format", "memoryblock"])
    assert shown.exit_code == 0, shown.output
    lines = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [b["id"] for b in lines] == [b["id"] for b in expected]
    assert all(errors(b) == [] for b in lines)
    out = tmp_path / "blocks.jsonl"
    summary = runner.invoke(cli, ["--vault", str(root), "export", "--format", "memoryblock", "-o", str(out), "--json"])
    assert summary.exit_code == 0, summary.output
    assert json.loads(summary.stdout) == {"format": "memoryblock", "file": str(out), "text": None,
                                          "blocks": len(expected)}
    assert out.read_text(encoding="utf-8") == shown.stdout
    bad = runner.invoke(cli, ["--vault", str(root), "export", "--format", "memoryblocks"])
    assert bad.exit_code == 2 and "memoryblock" in bad.output
