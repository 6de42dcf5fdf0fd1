"""memorywire over a vault (issue 16): contract tests of every operation against the shipped
schemas, through the library, on real vaults with git; what lands in the Markdown is read back
from the file and by a fresh parse."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memvault.errors import InputError, NotFoundError, Refused, SecretRefused
from memvault.memorywire import MemoryStore, call, schema, schema_names
from memvault.memorywire.schemas import problem
from memvault.parsed import parse_text
from memvault.search import access
from memvault.vault import Vault
from memvault.write.log import init_vault, log_entry
from tests.conftest import git

FSM = {
    "name": "book-flight", "initial": "searching",
    "states": ["searching", "comparing", "selecting", "paying", "confirmed", "cancelled"],
    "transitions": [
        {"trigger": "found_options", "source": "searching", "dest": "comparing"},
        {"trigger": "picked", "source": "comparing", "dest": "selecting"},
        {"trigger": "cancel", "source": "*", "dest": "cancelled"},
    ],
    "current": "searching", "metadata": {"agent_id": "travel-agent-v2", "version": "1.0.0"},
}


@pytest.fixture
def root(vault_dir: Path) -> Path:
    return init_vault(vault_dir, timezone="Europe/Berlin")


@pytest.fixture
def store(root: Path) -> MemoryStore:
    return MemoryStore(Vault.open(root))


def remember(store: MemoryStore, content: str, kind: str = "semantic", **more) -> dict:
    return call(store, "remember", {"agent_id": "support-bot", "type": kind, "content": content, **more})


def fresh(root: Path) -> Vault:
    return Vault.open(root)


def entry(root: Path, entry_id: str):
    return fresh(root).timeline.by_id[entry_id]


def log_files(root: Path) -> list[Path]:
    return sorted((root / "memory").rglob("*.md"))


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


# -- schemas ----------------------------------------------------------------------------------


def test_every_schema_is_draft_2020_12_and_checks_itself():
    from jsonschema import Draft202012Validator

    assert {"remember", "recall", "forget", "merge", "expire", "governance.review", "governance.response",
            "procedure"} <= set(schema_names())
    for name in schema_names():
        body = schema(name + ".json")
        assert body["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(body)
    assert schema("remember")["$id"] == "https://memorywire.dev/schemas/v0/remember"
    with pytest.raises(NotFoundError, match="no memorywire schema 'nope'"):
        schema("nope")


def test_the_specs_own_example_of_a_procedure_is_valid():
    assert problem("procedure", FSM) is None
    assert problem("procedure", {"name": "x", "states": [], "transitions": []}) == (
        "$.states", "must not be empty")


# (op, request, the JSON path its error names): shared with the HTTP contract tests (test_serve_wire.py)
INVALID = [
    ("remember", {"type": "semantic", "content": "x"}, "$.agent_id"),
    ("remember", {"agent_id": "", "type": "semantic", "content": "x"}, "$.agent_id"),
    ("remember", {"agent_id": "a", "type": "factual", "content": "x"}, "$.type"),
    ("remember", {"agent_id": "a", "type": "semantic", "content": ""}, "$.content"),
    ("remember", {"agent_id": "a", "type": "semantic", "content": "x", "confidence": 1.5}, "$.confidence"),
    ("remember", {"agent_id": "a", "type": "semantic", "content": "x", "expires_at": "tomorrow"}, "$.expires_at"),
    ("remember", {"agent_id": "a", "type": "semantic", "content": "x", "metadata": []}, "$.metadata"),
    ("recall", {"agent_id": "a"}, "$.query"),
    ("recall", {"agent_id": "a", "query": "x", "k": 1001}, "$.k"),
    ("recall", {"agent_id": "a", "query": "x", "types": ["semantic", "factual"]}, "$.types[1]"),
    ("recall", {"agent_id": "a", "query": "x", "fusion": "sum"}, "$.fusion"),
    ("recall", {"agent_id": "a", "query": "x", "hops": 4}, "$.hops"),
    ("recall", {"agent_id": "a", "query": "x", "fresher_than_days": -1}, "$.fresher_than_days"),
    ("forget", {"ids": ["x"]}, "$.agent_id"),
    ("forget", {"agent_id": "a", "ids": [3]}, "$.ids[0]"),
    ("forget", {"agent_id": "a", "ids": ["x"], "hard_delete": "yes"}, "$.hard_delete"),
    ("merge", {"agent_id": "a", "canonical": "x", "duplicates": []}, "$.duplicates"),
    ("merge", {"agent_id": "a", "canonical": "x", "duplicates": ["y"], "strategy": "newest"}, "$.strategy"),
    ("expire", {"agent_id": "a", "policy": {"older_than_days": 0}}, "$.policy.older_than_days"),
    ("expire", {"agent_id": "a", "policy": {"type": "factual"}}, "$.policy.type"),
    ("expire", {"agent_id": "a", "action": "delete"}, "$.action"),
]


@pytest.mark.parametrize(("op", "request_", "path"), INVALID)
def test_an_invalid_request_is_a_usage_error_naming_its_json_path(store, op, request_, path):
    with pytest.raises(InputError) as caught:
        call(store, op, request_)
    assert str(caught.value).startswith(f"{op} request {path}: ")


def test_a_request_that_is_not_an_object_and_an_unknown_operation(store):
    with pytest.raises(InputError, match=r"remember request \$: must be a JSON object"):
        call(store, "remember", ["content"])
    with pytest.raises(NotFoundError, match="no memorywire operation 'store'"):
        call(store, "store", {})


# -- remember -----------------------------------------------------------------------------------


def test_remember_appends_an_entry_that_reads_back_as_the_request(store, root):
    got = remember(store, "Kunde 12345 möchte E-Mails statt Anrufe", user_id="customer-12345", confidence=0.95,
                   source="session:2026-12-01-a", metadata={"tags": ["crm", "kontakt"], "channel": "chat"})
    assert problem("remember.response", got) is None
    assert got["stores"] == ["memvault"] and got["pending_approval"] is False and got["approval_url"] is None
    path, text = log_files(root)[0], log_files(root)[0].read_text(encoding="utf-8")
    assert f"Id: {got['id']}\nConfidence: 0.95\nTags: crm, kontakt\nSource: session:2026-12-01-a\n" \
           "Agent-Id: support-bot\nUser-Id: customer-12345\nMetadata: {\"channel\": \"chat\"}\n" in text
    parsed = parse_text(text, path.relative_to(root).as_posix(), fresh(root).config)
    ev = next(e for e in parsed.events if e.id == got["id"])
    assert (ev.type, ev.content, ev.confidence0, ev.tags, ev.source) == (
        "belief", "Kunde 12345 möchte E-Mails statt Anrufe", 0.95, ("crm", "kontakt"), "session:2026-12-01-a")
    assert ev.meta["agent-id"] == "support-bot" and ev.meta["user-id"] == "customer-12345"
    assert got["stored_at"] == int(ev.timestamp.timestamp() * 1000)
    assert not parsed.problems and not fresh(root).problems


@pytest.mark.parametrize(("kind", "entry_type", "tags"), [
    ("semantic", "belief", ()), ("episodic", "observation", ()), ("emotional", "observation", ("emotional",)),
])
def test_each_type_maps_to_an_entry_type(store, root, kind, entry_type, tags):
    got = remember(store, "Alice war nervös wegen ihres Flugs nach Lissabon", kind)
    ev = entry(root, got["id"])
    assert (ev.type, ev.tags) == (entry_type, tags)


def test_a_procedure_holds_its_fsm_json_and_recall_gives_the_json_back(store, root):
    got = remember(store, json.dumps(FSM), "procedural")
    ev = entry(root, got["id"])
    assert ev.type == "procedure" and ev.content.startswith("```json\n{") and ev.content.endswith("\n```")
    hit = call(store, "recall", {"agent_id": "a", "query": "book-flight searching", "types": ["procedural"]})
    assert [r["id"] for r in hit["results"]] == [got["id"]]
    assert json.loads(hit["results"][0]["content"]) == FSM
    with pytest.raises(InputError, match=r"remember request \$\.content\.transitions\[0\]\.trigger: is required"):
        remember(store, json.dumps({**FSM, "transitions": [{"source": "a", "dest": "b"}]}), "procedural")
    with pytest.raises(InputError, match=r"remember request \$\.content: a procedural memory is FSM JSON"):
        remember(store, "first search, then compare", "procedural")


def test_expires_at_becomes_an_expires_line_and_a_past_one_is_refused(store, root):
    later = int((datetime.now().timestamp() + 86400 * 30) * 1000)
    got = remember(store, "Die Baustelle vor dem Büro dauert noch einen Monat", "episodic", expires_at=later)
    assert entry(root, got["id"]).expires.timestamp() == pytest.approx(later / 1000)
    with pytest.raises(InputError, match=r"\$\.expires_at: .* is not in the future"):
        remember(store, "schon vorbei", expires_at=1000)


def test_remember_refuses_a_secret_exactly_as_log_does(store, root):
    before = [p.read_bytes() for p in log_files(root)]
    with pytest.raises(SecretRefused):
        remember(store, "Der Deploy-Token ist ghp_R8sK2mQ9vL4xT7wZ1cN5bJ3hF6dG0pY2aE4u")
    with pytest.raises(SecretRefused):
        remember(store, "harmless", metadata={"note": 'aws_secret_access_key = "Zx9Qm2Lp7Rt4Vw8Yb3Nc6Hd1Jf5Kg0Ts2Ue4Wq7"'})
    assert [p.read_bytes() for p in log_files(root)] == before


def test_concurrent_remembers_each_land_once(root):
    from concurrent.futures import ThreadPoolExecutor

    def one(n: int) -> str:
        return remember(MemoryStore(Vault.open(root)), f"Messpunkt {n} liegt bei {n * 3} Grad")["id"]

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(one, range(24)))
    events = fresh(root).timeline.by_id
    assert all(i in events for i in ids) and len(set(ids)) == 24
    text = "".join(p.read_text(encoding="utf-8") for p in log_files(root))
    assert all(text.count(f"Id: {i}\n") == 1 for i in ids)


# -- recall -------------------------------------------------------------------------------------


def test_recall_answers_the_spec_shape_and_counts_a_recall(store, root):
    a = remember(store, "Customer 12345 prefers email over phone", user_id="customer-12345")
    remember(store, "On Tuesday customer 12345 reported a billing issue", "episodic", user_id="customer-12345")
    got = call(store, "recall", {"agent_id": "a", "query": "customer 12345 email", "k": 2})
    assert problem("recall.response", got) is None
    assert got["fusion_used"] == "rrf" and got["stores_queried"] == ["fts"]
    first = got["results"][0]
    assert first["id"] == a["id"] and first["score"] == pytest.approx(1 / 61, abs=1e-6)
    assert first["metadata"]["memvault"]["user_id"] == "customer-12345"
    assert first["supporting"] == [] and first["source_store"] == "fts"
    assert access.stats(root)[a["id"]].count == 1


def test_recall_filters_by_type_tags_agent_user_and_freshness(store, root):
    vault = fresh(root)
    old = log_entry(vault, "Lena trinkt ihren Kaffee schwarz", type="belief", at=vault.now() - timedelta(days=40))
    mine = remember(store, "Lena trinkt Kaffee mit Hafermilch", metadata={"tags": ["lena"]}, user_id="lena")
    theirs = call(store, "remember", {"agent_id": "other-bot", "type": "episodic", "content": "Lena bestellte Kaffee"})
    ask = {"agent_id": "a", "query": "Lena Kaffee", "k": 10}

    def ids(**more):
        return {r["id"] for r in call(store, "recall", {**ask, **more})["results"]}

    assert ids() == {old.id, mine["id"], theirs["id"]}
    assert ids(types=["episodic"]) == {theirs["id"]}
    assert ids(filter={"tags": ["lena"]}) == {mine["id"]}
    assert ids(filter={"agent_id": "other-bot"}) == {theirs["id"]}
    assert ids(filter={"user_id": "lena", "agent_id": "support-bot"}) == {mine["id"]}
    assert ids(fresher_than_days=7) == {mine["id"], theirs["id"]}
    with pytest.raises(InputError, match=r"\$\.filter\.agent: unknown filter key"):
        ids(filter={"agent": "x"})


def test_fusion_names_score_as_the_spec_says(store):
    remember(store, "Der Server atlas-2 steht im Rack 4")
    remember(store, "Rack 4 hat eine neue USV")
    ask = {"agent_id": "a", "query": "Rack 4 atlas", "k": 2}
    rrf = call(store, "recall", ask)["results"]
    best = call(store, "recall", {**ask, "fusion": "max"})
    weighted = call(store, "recall", {**ask, "fusion": "weighted"})
    assert [r["score"] for r in rrf] == [round(1 / 61, 6), round(1 / 62, 6)]
    assert best["fusion_used"] == "max" and [r["id"] for r in best["results"]] == [r["id"] for r in rrf]
    assert [r["score"] for r in weighted["results"]] == [r["score"] for r in best["results"]]


# -- forget -------------------------------------------------------------------------------------


def test_forget_without_ids_or_filter_is_refused(store):
    for request in ({"agent_id": "a"}, {"agent_id": "a", "ids": []}, {"agent_id": "a", "filter": {}}):
        with pytest.raises(InputError, match="mass-delete protection"):
            call(store, "forget", request)


def test_soft_forget_writes_a_tombstone_and_the_entry_leaves_recall(store, root):
    keep = remember(store, "Mia mag Erdbeeren")
    gone = remember(store, "Mia mag keine Erdbeeren mehr", user_id="mia")
    commit(root, "two memories")
    got = call(store, "forget", {"agent_id": "a", "ids": [gone["id"]], "reason": "Mia hat das korrigiert"})
    assert problem("forget.response", got) is None
    assert got["forgotten_ids"] == [gone["id"]] and got["hard_delete"] is False
    assert got["stores"] == [{"store": "memvault", "count": 1, "error": None}]
    text = log_files(root)[0].read_text(encoding="utf-8")
    assert "Mia mag keine Erdbeeren mehr" in text
    assert f"Id: {gone['id']}\nAgent-Id: support-bot\nUser-Id: mia\nForgotten: " in text and ", Mia hat das korrigiert\n" in text
    vault = fresh(root)
    ev = vault.timeline.by_id[gone["id"]]
    assert vault.timeline.status(ev) == "forgotten" and not vault.problems
    hits = call(store, "recall", {"agent_id": "a", "query": "Mia Erdbeeren", "k": 5})["results"]
    assert [h["id"] for h in hits] == [keep["id"]]
    again = call(store, "forget", {"agent_id": "a", "ids": [gone["id"]]})
    assert again["forgotten_ids"] == []  # already forgotten: nothing written twice
    assert log_files(root)[0].read_text(encoding="utf-8") == text


def test_a_forgotten_entry_is_live_as_of_before_its_tombstone(store, root, runner):
    from memvault.cli import cli

    vault = fresh(root)
    old = log_entry(vault, "Jonas fährt einen roten Kombi", type="belief", at=vault.now() - timedelta(days=2),
                    meta={"agent-id": "garage-bot"})
    call(store, "forget", {"agent_id": "a", "filter": {"agent_id": "garage-bot"}})
    vault = fresh(root)
    yesterday = vault.now() - timedelta(days=1)
    assert old.id in [d["id"] for d in vault.as_of(yesterday)]
    assert old.id not in [d["id"] for d in vault.as_of(vault.now())]
    listed = runner.invoke(cli, ["list", "--all", "--json"])
    row = next(d for d in json.loads(listed.output) if d["id"] == old.id)
    assert row["status"] == "forgotten" and row["forgotten"].startswith(vault.now().date().isoformat())
    assert old.id not in runner.invoke(cli, ["list", "--json"]).output


def test_forget_by_filter_and_refusals(store, root):
    a = remember(store, "Bob arbeitet montags remote", user_id="bob")
    b = remember(store, "Bob hat im Juli Urlaub", "episodic", user_id="bob")
    c = remember(store, "Carla leitet das Team", user_id="carla")
    got = call(store, "forget", {"agent_id": "a", "filter": {"user_id": "bob"}})
    assert sorted(got["forgotten_ids"]) == sorted([a["id"], b["id"]])
    assert fresh(root).timeline.status(entry(root, c["id"])) == "live"
    with pytest.raises(NotFoundError, match=r"\$.ids\[1\]: no entry with id 'nope'; nothing was forgotten"):
        call(store, "forget", {"agent_id": "a", "ids": [c["id"], "nope"]})
    (root / "memory" / "notes.md").write_text("# Notizen\n\nCarla mag Tee\n", encoding="utf-8")
    note = next(e.id for e in fresh(root).events if e.file == "memory/notes.md")
    with pytest.raises(Refused, match="is a note"):
        call(store, "forget", {"agent_id": "a", "ids": [note]})
    assert fresh(root).timeline.status(entry(root, c["id"])) == "live"


def test_hard_forget_removes_the_lines_and_history_shows_the_deletion(store, root):
    keep = remember(store, "Das WLAN-Passwort steht auf dem Router")
    gone = remember(store, "Der Drucker im 2. Stock ist kaputt", "episodic")
    commit(root, "memories")
    got = call(store, "forget", {"agent_id": "a", "ids": [gone["id"]], "hard_delete": True})
    assert got["forgotten_ids"] == [gone["id"]] and got["hard_delete"] is True
    text = log_files(root)[0].read_text(encoding="utf-8")
    assert "Drucker" not in text and gone["id"] not in text and text.endswith("Agent-Id: support-bot\n")
    assert keep["id"] in text and not fresh(root).problems
    commit(root, "forgotten")
    history = fresh(root).history(gone["id"])
    assert history["status"] == "deleted"
    assert [c["change"] for c in history["commits"]] == ["added", "deleted"]


def test_hard_forget_refuses_an_entry_another_one_names(store, root):
    old = remember(store, "Die Miete ist 900 Euro")
    vault = fresh(root)
    log_entry(vault, "Die Miete ist jetzt 950 Euro", type="correction", supersedes=old["id"])
    with pytest.raises(Refused, match=r"is named by .*forget it softly"):
        call(store, "forget", {"agent_id": "a", "ids": [old["id"]], "hard_delete": True})
    assert old["id"] in log_files(root)[0].read_text(encoding="utf-8")
    assert call(store, "forget", {"agent_id": "a", "ids": [old["id"]]})["forgotten_ids"] == [old["id"]]


def test_hard_forget_in_the_middle_keeps_the_file_tidy(store, root):
    ids = [remember(store, f"Punkt {n}: Regal {n} ist voll")["id"] for n in range(3)]
    call(store, "forget", {"agent_id": "a", "ids": [ids[1]], "hard_delete": True})
    text = log_files(root)[0].read_text(encoding="utf-8")
    assert "Regal 1" not in text and "\n\n\n" not in text
    assert [e.id for e in fresh(root).events] == [ids[0], ids[2]]


# -- merge --------------------------------------------------------------------------------------


def test_merge_keep_canonical_points_the_duplicates_to_it(store, root):
    c = remember(store, "Alice ist allergisch gegen Erdnüsse", confidence=0.8)
    d1 = remember(store, "Alice hat eine Erdnussallergie", confidence=0.9)
    d2 = remember(store, "Alice verträgt keine Erdnüsse")
    got = call(store, "merge", {"agent_id": "a", "canonical": c["id"], "duplicates": [d1["id"], d2["id"]]})
    assert problem("merge.response", got) is None
    assert got == {"canonical": c["id"], "merged_count": 2, "strategy_used": "keep_canonical",
                   "stores": ["memvault"], "pending_approval": False, "approval_url": None}
    vault = fresh(root)
    tl = vault.timeline
    assert tl.status(tl.by_id[c["id"]]) == "live"
    for d in (d1, d2):
        assert tl.status(tl.by_id[d["id"]]) == "forgotten"
        assert tl.by_id[d["id"]].meta["forgotten"].endswith(f", merged into {c['id']}")
    assert not vault.problems


def test_merge_content_writes_a_superseding_entry_with_the_union(store, root):
    c = remember(store, "Projekt Atlas startet im März", confidence=0.7, metadata={"owner": "dana", "tags": ["atlas"]})
    d = remember(store, "Atlas hat ein Budget von 40k", confidence=0.9, metadata={"owner": "eve", "budget": 40000})
    got = call(store, "merge", {"agent_id": "curator", "canonical": c["id"], "duplicates": [d["id"]],
                                "strategy": "merge_content"})
    vault = fresh(root)
    tl = vault.timeline
    new = tl.by_id[got["canonical"]]
    assert got["canonical"] not in (c["id"], d["id"])
    assert new.content == "Projekt Atlas startet im März\n\nAtlas hat ein Budget von 40k"
    assert new.confidence0 == 0.9 and new.meta["agent-id"] == "curator" and "atlas" in new.tags
    assert json.loads(new.meta["metadata"]) == {"owner": "eve", "budget": 40000}
    assert tl.supersedes[new.id] == c["id"] and tl.status(tl.by_id[c["id"]]) == "superseded"
    assert tl.status(tl.by_id[d["id"]]) == "forgotten" and not vault.problems


def test_merge_keep_highest_confidence(store, root):
    c = remember(store, "Der Zug fährt um 7:10", confidence=0.6)
    d = remember(store, "Der Zug fährt um 7:12", confidence=0.95)
    got = call(store, "merge", {"agent_id": "a", "canonical": c["id"], "duplicates": [d["id"]],
                                "strategy": "keep_highest_confidence"})
    new = entry(root, got["canonical"])
    assert (new.content, new.confidence0) == ("Der Zug fährt um 7:12", 0.95)
    same = remember(store, "Der Bus fährt um 8:00", confidence=0.99)
    low = remember(store, "Der Bus fährt um 8:05", confidence=0.5)
    kept = call(store, "merge", {"agent_id": "a", "canonical": same["id"], "duplicates": [low["id"]],
                                 "strategy": "keep_highest_confidence"})
    assert kept["canonical"] == same["id"]


def test_merge_refusals(store):
    c = remember(store, "Kai mag Jazz")
    with pytest.raises(Refused, match=r"\$\.duplicates\[0\]: .* is the canonical entry itself"):
        call(store, "merge", {"agent_id": "a", "canonical": c["id"], "duplicates": [c["id"]]})
    with pytest.raises(NotFoundError, match=r"merge request \$\.duplicates\[0\]"):
        call(store, "merge", {"agent_id": "a", "canonical": c["id"], "duplicates": ["nope"]})
    other = remember(store, "Kai hört gern Jazz")
    call(store, "forget", {"agent_id": "a", "ids": [c["id"]]})
    with pytest.raises(Refused, match=r"\$\.canonical: .* is forgotten"):
        call(store, "merge", {"agent_id": "a", "canonical": c["id"], "duplicates": [other["id"]]})
    with pytest.raises(Refused, match=r"\$\.duplicates\[0\]: .* is already forgotten"):
        call(store, "merge", {"agent_id": "a", "canonical": other["id"], "duplicates": [c["id"]]})


# -- expire -------------------------------------------------------------------------------------


def _aged(root: Path) -> dict[str, str]:
    vault = fresh(root)
    now = vault.now()
    made = {
        "old_episode": log_entry(vault, "Umzug ins neue Büro erledigt", at=now - timedelta(days=120)),
        "old_fact": log_entry(vault, "Die Kantine schließt um 14 Uhr", type="belief", at=now - timedelta(days=100)),
        "unsure": log_entry(vault, "Vielleicht kommt Tom am Freitag", type="belief", confidence=0.3,
                            at=now - timedelta(days=2)),
        "new": log_entry(vault, "Heute Stand-up um 9:30", at=now - timedelta(hours=1)),
    }
    return {k: e.id for k, e in made.items()}


def test_expire_older_than_and_type_forget_what_matches(store, root):
    ids = _aged(root)
    got = call(store, "expire", {"agent_id": "a", "policy": {"older_than_days": 90, "type": "episodic"}})
    assert problem("expire.response", got) is None
    assert got == {"matched_count": 1, "action_taken": "forget", "stores": ["memvault"]}
    tl = fresh(root).timeline
    assert [i for i in ids.values() if tl.status(tl.by_id[i]) == "forgotten"] == [ids["old_episode"]]
    assert "expired (older_than_days 90, type episodic)" in tl.by_id[ids["old_episode"]].meta["forgotten"]


def test_expire_confidence_below_reads_the_decayed_confidence(store, root):
    ids = _aged(root)
    got = call(store, "expire", {"agent_id": "a", "policy": {"confidence_below": 0.05}, "action": "archive"})
    tl = fresh(root).timeline
    gone = {i for i in ids.values() if tl.status(tl.by_id[i]) == "forgotten"}
    assert gone == {ids["old_episode"], ids["old_fact"]} and got["matched_count"] == 2  # 0.95^100 < 0.05
    assert tl.by_id[ids["old_fact"]].meta["forgotten"].split(", ", 1)[1].startswith("archived")


def test_expire_no_recall_in_days_uses_recall_tracking(store, root):
    ids = _aged(root)
    access.record(root, [ids["old_fact"]])
    got = call(store, "expire", {"agent_id": "a", "policy": {"no_recall_in_days": 30}})
    tl = fresh(root).timeline
    assert got["matched_count"] == 1 and tl.status(tl.by_id[ids["old_episode"]]) == "forgotten"
    assert tl.status(tl.by_id[ids["old_fact"]]) == "live"


def test_expire_demote_keeps_a_multiplier_out_of_the_text(store, root):
    a = remember(store, "Backup läuft nachts auf der Storage Box")
    b = remember(store, "Backup braucht 40 Minuten")
    files = [p.read_bytes() for p in log_files(root)]
    ask = {"agent_id": "a", "query": "Backup", "k": 2, "fusion": "max"}
    before = {r["id"]: r["score"] for r in call(store, "recall", ask)["results"]}
    got = call(store, "expire", {"agent_id": "a", "policy": {"type": "semantic"}, "action": "demote"})
    assert got == {"matched_count": 2, "action_taken": "demote", "stores": ["memvault"]}
    assert [p.read_bytes() for p in log_files(root)] == files
    after = {r["id"]: r["score"] for r in call(store, "recall", ask)["results"]}
    for i in (a["id"], b["id"]):
        assert after[i] == pytest.approx(before[i] * 0.25, rel=1e-3)


def test_expire_without_a_policy_is_refused(store):
    with pytest.raises(InputError, match=r"expire request \$\.policy: give at least one"):
        call(store, "expire", {"agent_id": "a"})


def test_health_and_capabilities(store):
    health = call(store, "health", {})
    assert health["status"] == "ok" and health["pending_approvals"] == 0
    assert {"semantic", "episodic", "procedural", "emotional", "fts", "recall_tracking"} <= store.capabilities
    assert isinstance(store.capabilities, set)



def test_forgetting_while_others_remember_loses_nothing(root):
    from concurrent.futures import ThreadPoolExecutor

    first = [remember(MemoryStore(Vault.open(root)), f"Altes Faktum {n} über Regal {n}")["id"] for n in range(8)]

    def work(n: int) -> str | None:
        store = MemoryStore(Vault.open(root))
        if n % 2:
            call(store, "forget", {"agent_id": "a", "ids": [first[n // 2]]})
            return None
        return remember(store, f"Neues Faktum {n} über Kiste {n}")["id"]

    with ThreadPoolExecutor(6) as pool:
        added = [i for i in pool.map(work, range(16)) if i]
    vault = fresh(root)
    tl = vault.timeline
    assert all(tl.status(tl.by_id[i]) == "live" for i in added) and len(added) == 8
    assert [tl.status(tl.by_id[i]) for i in first] == ["forgotten"] * 8
    text = "".join(p.read_text(encoding="utf-8") for p in log_files(root))
    assert all(text.count(f"Id: {i}\n") == 1 for i in added + first) and text.count("Forgotten: ") == 8
    assert not vault.problems


# -- issue 16 QA: vacuous scopes, typos, ids as `get` takes them ---------------------------------


@pytest.mark.parametrize("flt", [{"tags": []}, {"types": []}, {"tags": [], "types": []}])
def test_a_filter_that_narrows_nothing_is_no_filter_and_forget_refuses_it(store, root, flt):
    for n in range(3):
        remember(store, f"Hafen-Fakt Nummer {n}: die Fähre fährt um {7 + n} Uhr")
    before = [p.read_bytes() for p in log_files(root)]
    for hard in (False, True):
        with pytest.raises(InputError, match="mass-delete protection"):
            call(store, "forget", {"agent_id": "rogue", "filter": flt, "hard_delete": hard})
        with pytest.raises(InputError, match="mass-delete protection"):  # refused before staging too
            call(store, "forget", {"agent_id": "rogue", "filter": flt, "approval_required": True})
    assert [p.read_bytes() for p in log_files(root)] == before
    assert store.queue.items() == []


def test_recall_ands_type_and_types(store):
    remember(store, "Kiwi-Tee schmeckt Mia", "semantic")
    remember(store, "Mia trank gestern Kiwi-Tee", "episodic")
    got = call(store, "recall", {"agent_id": "a", "query": "Kiwi-Tee", "filter": {"types": ["semantic"],
                                                                                 "type": "episodic"}})
    assert got["results"] == []
    got = call(store, "recall", {"agent_id": "a", "query": "Kiwi-Tee", "filter": {"types": ["semantic", "episodic"],
                                                                                 "type": "episodic"}})
    assert [r["type"] for r in got["results"]] == ["episodic"]


@pytest.mark.parametrize("policy", [{"bogus": 1}, {"older_than_days": 3, "olderthan": 1}])
def test_expire_refuses_an_unknown_policy_key(store, root, policy):
    remember(store, "Die Kantine schließt freitags um 14 Uhr")
    before = [p.read_bytes() for p in log_files(root)]
    with pytest.raises(InputError) as caught:
        call(store, "expire", {"agent_id": "bot", "policy": policy})
    bad = next(k for k in policy if k not in ("older_than_days",))
    assert str(caught.value).startswith(f"expire request $.policy.{bad}: unknown key; known: older_than_days")
    assert [p.read_bytes() for p in log_files(root)] == before


def test_expire_under_approval_is_staged_and_approve_runs_it(store, root):
    from memvault.memorywire import approve

    gone = remember(store, "Der Zug nach Köln fällt heute aus", "episodic")
    got = call(store, "expire", {"agent_id": "bot", "policy": {"type": "episodic"}, "approval_required": True})
    assert problem("expire.response", got) is None
    assert got["pending_approval"] is True and got["matched_count"] == 0
    assert fresh(root).timeline.status(entry(root, gone["id"])) == "live"
    with pytest.raises(InputError, match="mass-delete protection"):
        call(store, "expire", {"agent_id": "bot", "policy": {}, "approval_required": True})
    done = approve(store, got["approval_url"].rsplit("/", 1)[1], "lena")
    assert done["result"]["matched_count"] == 1
    assert fresh(root).timeline.status(entry(root, gone["id"])) == "forgotten"


def test_a_staged_forget_of_an_unknown_id_is_refused_at_once(store):
    with pytest.raises(NotFoundError, match=r"\$.ids\[0\]: no entry with id 'nope'"):
        call(store, "forget", {"agent_id": "bot", "ids": ["nope"], "approval_required": True})
    assert store.queue.items() == []


def test_forget_takes_a_unique_id_start_and_a_cite_and_refuses_a_bullet(store, root):
    a = remember(store, "Ole spielt dienstags Badminton")
    b = remember(store, "Ole hat einen Hund namens Keks")
    cut = next(n for n in range(6, 26) if a["id"][:n] != b["id"][:n])
    got = call(store, "forget", {"agent_id": "a", "ids": [a["id"][:cut]]})
    assert got["forgotten_ids"] == [a["id"]]
    got = call(store, "forget", {"agent_id": "a", "ids": [b["location"]]})
    assert got["forgotten_ids"] == [b["id"]]
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n## People\n\n- Ole mag Keks\n", encoding="utf-8")
    with pytest.raises(Refused, match="is a MEMORY.md bullet"):
        call(store, "forget", {"agent_id": "a", "ids": ["MEMORY.md#L5"]})


def test_hard_forget_refuses_a_canonical_entry_a_merge_points_to(store, root):
    c = remember(store, "Ida wohnt in Bremen")
    d = remember(store, "Ida lebt in Bremen")
    call(store, "merge", {"agent_id": "a", "canonical": c["id"], "duplicates": [d["id"]]})
    with pytest.raises(Refused, match=f"{c['id']} is named by {d['id']}"):
        call(store, "forget", {"agent_id": "a", "ids": [c["id"]], "hard_delete": True})
    assert c["id"] in log_files(root)[0].read_text(encoding="utf-8")


@pytest.mark.parametrize(("request_", "said"), [
    ({"agent_id": "a", "query": "x", "k": True}, "$.k: must be an integer (got boolean)"),
    ({"agent_id": "a", "query": 5}, "$.query: must be a string (got integer)"),
    ({"agent_id": "a", "query": "x", "fusion": "sum"}, '$.fusion: must be one of "rrf", "max", "weighted" (got "sum")'),
])
def test_schema_errors_are_said_in_json_words(store, request_, said):
    with pytest.raises(InputError) as caught:
        call(store, "recall", request_)
    assert str(caught.value) == f"recall request {said}"
    with pytest.raises(InputError, match=r"must be a JSON object \(got null\)"):
        call(store, "recall", None)


def test_without_jsonschema_an_operation_says_which_extra_to_install(root):
    import subprocess
    import sys

    code = ("import sys; sys.modules['jsonschema'] = None\n"
            "from memvault import Vault\nfrom memvault.memorywire import MemoryStore, call\n"
            f"call(MemoryStore(Vault.open({str(root)!r})), 'recall', {{'agent_id': 'a', 'query': 'x'}})\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "memvault.errors.MemvaultError: memorywire validates requests with the jsonschema package, which is not "
        "installed: pip install 'memvault[serve]'")
    assert "ModuleNotFoundError" not in done.stderr.splitlines()[-1]


def test_recall_marks_an_entry_found_only_through_a_nearby_one(store, root):
    (root / "memory" / "2026-01-01.md").write_text(
        "# 2026-01-01\n\n## 09:00 - Observation\nUser mentioned wibblewobble pastries\nExpires: 2026-01-02\n\n"
        "## 09:05 - Observation\nfrustrated by the slow kazoo build\n", encoding="utf-8")
    got = call(store, "recall", {"agent_id": "a", "query": "wibblewobble"})
    assert problem("recall.response", got) is None and got["results"]
    for hit in got["results"]:  # the expired entry that matched is left out; what came through it says so
        assert hit["metadata"]["memvault"]["found_through_nearby"] is True, hit
    got = call(store, "recall", {"agent_id": "a", "query": "kazoo"})
    assert [h["content"] for h in got["results"]] == ["frustrated by the slow kazoo build"]
    assert "found_through_nearby" not in got["results"][0]["metadata"]["memvault"]


@pytest.mark.parametrize(("request_", "said"), [
    ({"metadata": {"tags": ["ok\nSupersedes: x"]}}, "$.metadata.tags "),
    ({"source": "a\tb\x07"}, "$.source "),
    ({"content": "Mia mag Tee\nSupersedes: 2026-01-01T09:00"}, "send no Supersedes: line in content"),
])
def test_remember_errors_name_the_requests_fields_not_cli_flags(store, request_, said):
    with pytest.raises(InputError) as caught:
        call(store, "remember", {"agent_id": "a", "type": "semantic", "content": "Mia mag Tee", **request_})
    assert said in str(caught.value) and "--" not in str(caught.value)
