"""memorywire governance (spec §6): staged operations, `memvault review-queue`, decisions kept
with the reviewer and time; and the `Forgotten:`/`Metadata:` lines as the format reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.errors import InputError, NotFoundError, Refused, SecretRefused
from memvault.memorywire import MemoryStore, approve, call, reject, review_queue
from memvault.memorywire.schemas import problem
from memvault.parsed import parse_text
from memvault.vault import Vault
from memvault.write.log import init_vault
from tests.helpers_check import run_check


@pytest.fixture
def root(vault_dir: Path) -> Path:
    return init_vault(vault_dir, timezone="Europe/Berlin")


@pytest.fixture
def store(root: Path) -> MemoryStore:
    return MemoryStore(Vault.open(root))


def texts(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((root / "memory").rglob("*.md")))


def ask(content: str, **more) -> dict:
    return {"agent_id": "notes-agent", "type": "semantic", "content": content, "approval_required": True, **more}


def test_approval_required_stages_the_write_and_approve_writes_it(store, root):
    before = texts(root)
    got = call(store, "remember", ask("Die Firma zieht im Mai nach Leipzig"))
    assert problem("remember.response", got) is None
    assert got["pending_approval"] is True and got["stores"] == []
    assert got["approval_url"] == f"memvault://review-queue/{got['id']}"
    assert texts(root) == before  # nothing written while it waits
    [item] = review_queue(store)
    assert (item["id"], item["operation"], item["agent_id"], item["status"]) == (
        got["id"], "remember", "notes-agent", "pending")
    done = approve(store, got["id"], "lena@example.com", "passt")
    assert problem("governance.response", done["governance"]) is None
    assert done["governance"]["approved"] is True and done["governance"]["reviewer"] == "lena@example.com"
    written = done["result"]["id"]
    assert Vault.open(root).timeline.by_id[written].content == "Die Firma zieht im Mai nach Leipzig"
    assert review_queue(store) == []
    [decided] = review_queue(store, everything=True)
    assert decided["status"] == "approved" and decided["decision"] == done["governance"]
    with pytest.raises(Refused, match="already approved by lena@example.com"):
        approve(store, got["id"], "lena@example.com")


def test_a_server_names_its_own_approval_url(root):
    store = MemoryStore(Vault.open(root), approval_url="http://127.0.0.1:8765/v0/review-queue/")
    got = call(store, "remember", ask("Lieferung kommt Donnerstag"))
    assert got["approval_url"] == f"http://127.0.0.1:8765/v0/review-queue/{got['id']}"


def test_reject_drops_it_and_keeps_the_decision(store, root):
    before = texts(root)
    got = call(store, "remember", ask("Tom kündigt nächste Woche"))
    done = reject(store, got["id"], "chef", "Gerücht")
    assert done["governance"]["approved"] is False and done["result"] is None
    assert texts(root) == before
    [decided] = review_queue(store, everything=True)
    assert decided["status"] == "rejected" and decided["decision"]["reason"] == "Gerücht"
    with pytest.raises(NotFoundError, match="no staged operation 'q-nope'"):
        reject(store, "q-nope", "chef")
    with pytest.raises(InputError, match="--reviewer"):
        reject(store, got["id"], "  ")


def test_a_policy_in_memvault_toml_stages_forget_and_merge(root):
    config = root / "memvault.toml"
    config.write_text(config.read_text(encoding="utf-8") + '\n[memorywire]\napproval = ["forget", "merge"]\n',
                      encoding="utf-8")
    store = MemoryStore(Vault.open(root))
    kept = call(store, "remember", {"agent_id": "a", "type": "semantic", "content": "Ida spielt Cello"})
    assert kept["pending_approval"] is False  # remember is not in the policy
    staged = call(store, "forget", {"agent_id": "a", "ids": [kept["id"]]})
    assert problem("forget.response", staged) is None
    assert staged["pending_approval"] is True and staged["forgotten_ids"] == []
    tl = Vault.open(root).timeline
    assert tl.status(tl.by_id[kept["id"]]) == "live"
    done = approve(store, staged["approval_url"].rsplit("/", 1)[1], "ida")
    assert done["result"]["forgotten_ids"] == [kept["id"]]
    tl = Vault.open(root).timeline
    assert tl.status(tl.by_id[kept["id"]]) == "forgotten"


def test_what_would_be_refused_is_refused_before_it_is_staged(store):
    with pytest.raises(SecretRefused):
        call(store, "remember", ask("Token: ghp_R8sK2mQ9vL4xT7wZ1cN5bJ3hF6dG0pY2aE4u"))
    with pytest.raises(InputError, match="mass-delete"):
        call(store, "forget", {"agent_id": "a", "approval_required": True})
    assert review_queue(store) == []


def test_review_queue_cli_lists_approves_and_rejects(store, root, runner):
    first = call(store, "remember", ask("Büro ist am 24.12. geschlossen"))
    second = call(store, "remember", ask("Weihnachtsfeier fällt aus"))
    listed = runner.invoke(cli, ["review-queue", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [i["id"] for i in json.loads(listed.output)] == [first["id"], second["id"]]
    text = runner.invoke(cli, ["review-queue"]).output
    assert f"{first['id']}  remember  by notes-agent  pending" in text and "Büro ist am 24.12." in text
    ok = runner.invoke(cli, ["review-queue", "approve", first["id"], "--reviewer", "Jörg", "--json"])
    assert ok.exit_code == 0, ok.output
    written = json.loads(ok.output)["result"]["id"]
    assert written in Vault.open(root).timeline.by_id
    no = runner.invoke(cli, ["review-queue", "reject", second["id"], "--reviewer", "Jörg"])
    assert no.exit_code == 0 and f"{second['id']}: remember rejected by Jörg" in no.output
    assert runner.invoke(cli, ["review-queue"]).output.strip() == "no operations waiting for approval"
    usage = runner.invoke(cli, ["review-queue", "approve", "q-x"])
    assert usage.exit_code == 2 and "--reviewer" in usage.output
    missing = runner.invoke(cli, ["review-queue", "approve", "q-x", "--reviewer", "J", "--json"])
    assert missing.exit_code == 1 and json.loads(missing.output)["error"]["code"] == "not_found"


def test_review_queue_says_forgets_merges_and_expires_as_a_person_reads_them(store, root, runner):
    a = call(store, "remember", {"agent_id": "a", "type": "semantic", "content": "Ida spielt Cello"})
    b = call(store, "remember", {"agent_id": "a", "type": "semantic", "content": "Ida spielt das Cello"})
    call(store, "forget", {"agent_id": "bot", "ids": [a["id"]], "approval_required": True})
    call(store, "merge", {"agent_id": "bot", "canonical": a["id"], "duplicates": [b["id"]], "approval_required": True})
    call(store, "forget", {"agent_id": "bot", "filter": {"tags": ["musik", "ida"]}, "approval_required": True})
    call(store, "expire", {"agent_id": "bot", "policy": {"older_than_days": 90}, "approval_required": True})
    lines = runner.invoke(cli, ["review-queue"]).output.splitlines()
    assert lines[1::2] == [f"  {a['id']}", f"  {b['id']} into {a['id']}", "  tags musik, ida", "  older_than_days 90"]


# -- the format: Forgotten:, Agent-Id:, User-Id:, Metadata: -----------------------------------

LOG = """# 2026-03-02

## 09:00 - Belief
Oskar mag Rooibos
Agent-Id: tea-bot
User-Id: oskar
Metadata: {"quelle": "chat", "n": 2}
Forgotten: 2026-03-05T10:00+01:00, Oskar trinkt jetzt Kaffee

## 10:00 - Observation
Forgotten: my keys again
"""


def test_the_parser_reads_the_new_lines_and_leaves_prose_alone(store):
    config = Vault.open(store.root).config
    parsed = parse_text(LOG, "memory/2026-03-02.md", config)
    first, second = parsed.events
    assert first.forgotten is not None and first.forgotten.isoformat() == "2026-03-05T10:00:00+01:00"
    assert first.meta["agent-id"] == "tea-bot" and first.meta["user-id"] == "oskar"
    assert json.loads(first.meta["metadata"]) == {"quelle": "chat", "n": 2}
    assert second.forgotten is None and second.content == "Forgotten: my keys again"
    assert not parsed.problems


def test_check_reports_a_bad_tombstone_and_bad_metadata(root):
    (root / "memory" / "2026-03-02.md").write_text(
        "# 2026-03-02\n\n## 09:00 - Belief\nOskar mag Rooibos\nForgotten: 2026-13-40, vertippt\n\n"
        "## 10:00 - Belief\nOskar mag Kaffee\nMetadata: {quelle: chat}\n", encoding="utf-8")
    codes = {(p.code, p.line) for p in run_check(root).problems}
    assert ("MV220", 5) in codes and ("MV221", 9) in codes
    tl = Vault.open(root).timeline
    assert all(tl.status(e) == "live" for e in tl.events)  # an unreadable tombstone forgets nothing
