"""Issue 13, point 9: one rule for a file that fails to parse, whoever updates the index.

A half-edited file (front matter begun above a log that has a `---` rule further down: the
YAML swallows the entries in between) keeps its last good entries in the index. The watcher,
`memvault search`'s up-to-date check, `memvault index` and `memvault index --rebuild` all keep
them; `memvault status` shows one count and one list of files failing to parse, watcher or
not; once the file parses again its new entries replace the kept ones everywhere.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from memvault.cli import cli
from memvault.search.index import index_status, open_index
from memvault.vault import Vault
from memvault.write.log import init_vault

from .helpers_watch import contents, in_sync, index_rows, wait_for, watching

WEEK = "memory/2026-11-30.md"
GOOD = (
    "# 2026-11-30\n\n"
    "## 09:10 - Observation\nKickoff mit Jörg: Atlas-Migration startet am Montag\n\n"
    "## 11:00 - Decision\nUse Postgres for the billing service, not Redis\n\n"
    "---\n\n"
    "## 15:30 - Observation\nAnya drinks green tea in the afternoon\n"
)
HALF_EDITED = "---\ntitle: Woche 48\n" + GOOD  # the closing `---` not typed yet: the rule below closes it
FIXED = "---\ntitle: Woche 48\n---\n" + GOOD.replace("Postgres", "CockroachDB")
KEPT = {"Kickoff mit Jörg: Atlas-Migration startet am Montag", "Use Postgres for the billing service, not Redis"}
OTHERS = {
    "memory/2026-11-23.md": "# 2026-11-23\n\n## 08:00 - Observation\nStand-up moved to 9:30\n",
    "memory/2026-11-24.md": "# 2026-11-24\n\nwrote the release notes; Müller reviewed them\n",
    "memory/2026-11-25.md": "# 2026-11-25\n\n## 14:00 - Belief\nUser prefers short answers\n",
    "memory/2026-11-26.md": "# 2026-11-26\n\n## 10:00 - Observation\nDeploy window is Thursday\n",
    "memory/2026-11-27.md": "# 2026-11-27\n\n## 16:45 - Lesson\nAlways pin the base image\n",
    "notes/reading list.md": "# Reading list\n\n- Designing Data-Intensive Applications\n",
}


@pytest.fixture
def vault(vault_dir):
    init_vault(vault_dir, timezone="UTC", git=False)
    (vault_dir / "notes").mkdir(exist_ok=True)
    past = time.time() - 7200  # written a while ago (the index hashes again what changed this second)
    for rel, text in {**OTHERS, WEEK: GOOD}.items():
        (vault_dir / rel).write_text(text, encoding="utf-8")
    for path in [vault_dir / rel for rel in (*OTHERS, WEEK)] + [vault_dir / "MEMORY.md"]:
        os.utime(path, (past, past))
    return vault_dir


def holds(texts: set[str], phrase: str) -> bool:
    return any(t.startswith(phrase) for t in texts)


def holds_all(texts: set[str], phrases: set[str]) -> bool:
    return all(holds(texts, p) for p in phrases)


def files_on_disk(root) -> int:
    return index_status(Vault.open(root)).files_on_disk


def found(query: str) -> set[str]:
    """Contents of the hits of a library search over the index as it is (no refresh)."""
    with open_index(Vault.open()) as index:
        return {h.content for h in index.search(query, limit=20, record_access=False)}


def search_cli(runner, query: str) -> set[str]:
    got = runner.invoke(cli, ["search", "--json", "--no-record", query])
    assert got.exit_code == 0, got.output
    return {h["content"] for h in json.loads(got.stdout)}


def assert_status(runner, root, *, broken: bool) -> None:
    """One files line, on disk = indexed; the failing list in text and JSON, watcher or not."""
    n = files_on_disk(root)
    text = runner.invoke(cli, ["status"])
    assert text.exit_code == 0, text.output
    files_lines = [line for line in text.output.splitlines() if line.strip().startswith("files:")]
    assert files_lines == [f"  files:  {n} on disk, {n} indexed"], text.output
    failing = [line for line in text.output.splitlines() if "failing to parse" in line]
    if broken:
        assert len(failing) == 1 and WEEK in failing[0] and "keeping its last good 3 entries" in failing[0], text.output
    else:
        assert not failing, text.output
    data = json.loads(runner.invoke(cli, ["status", "--json"]).stdout)
    index = data["index"]
    assert index["files_on_disk"] == index["files_indexed"] == n
    assert list(index["broken"]) == ([WEEK] if broken else [])
    assert not index["stale"], index
    record = data["watcher"]["record"] or {}
    assert not {"files_on_disk", "files_indexed", "broken"} & set(record)  # counted once, by the index
    disk_entries = len(Vault.open(root).events)
    assert index["events_on_disk"] == disk_entries  # what the files hold now
    assert index["events_indexed"] == disk_entries + (2 if broken else 0)  # plus the two kept


def test_the_half_edit_really_loses_entries_with_an_error(vault):
    (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
    parsed = Vault.open(vault)
    assert {e.content for e in parsed.events if e.file == WEEK} == {"Anya drinks green tea in the afternoon"}
    assert any(p.severity == "error" and p.path == WEEK for p in parsed.problems)


def test_a_search_while_the_watcher_runs_keeps_the_last_good_entries(vault, runner):
    with watching(vault) as w:
        assert_status(runner, vault, broken=False)
        (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
        wait_for(lambda: any(x["event"] == "broken" for x in w.log.lines), what="the watcher to hold the file back")
        assert holds(search_cli(runner, "billing Postgres"), "Use Postgres for the billing service, not Redis")
        assert holds(search_cli(runner, "Jörg kickoff"), "Kickoff mit Jörg: Atlas-Migration startet am Montag")
        assert holds_all(contents(vault), KEPT) and holds_all(found("billing") | found("Jörg"), KEPT)
        assert_status(runner, vault, broken=True)
        wait_for(lambda: WEEK in w.record.broken, what="the watcher's record")

        (vault / WEEK).write_text(FIXED, encoding="utf-8")
        wait_for(lambda: in_sync(vault), what="the fixed file indexed")
        assert holds(search_cli(runner, "billing"), "Use CockroachDB for the billing service, not Redis")
        assert not holds(contents(vault), "Use Postgres for the billing service, not Redis")
        assert_status(runner, vault, broken=False)
        wait_for(lambda: any(x["event"] == "fixed" for x in w.log.lines), what="the watcher to say it is fixed")
        wait_for(lambda: not w.record.broken, what="the watcher's record to clear")


def test_a_search_before_the_watcher_looks_holds_the_file_back_too(vault, runner):
    with watching(vault, debounce=3.0, max_delay=3.0) as w:  # the search comes first
        (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
        assert holds(search_cli(runner, "billing"), "Use Postgres for the billing service, not Redis")
        assert holds_all(contents(vault), KEPT)
        assert_status(runner, vault, broken=True)
        wait_for(lambda: WEEK in w.record.broken, timeout=10, what="the watcher to see what the index held back")
        assert holds_all(contents(vault), KEPT)  # the watcher's own pass kept them as well
        assert not any(x["event"] == "fixed" for x in w.log.lines)


def test_without_a_watcher_search_index_and_rebuild_keep_the_same_rule(vault, runner):
    assert runner.invoke(cli, ["index"]).exit_code == 0
    (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
    past = time.time() - 3600  # saved a while ago: a file written this second is hashed again once
    os.utime(vault / WEEK, (past, past))
    assert holds(search_cli(runner, "billing"), "Use Postgres for the billing service, not Redis")
    assert holds_all(contents(vault), KEPT) and holds(contents(vault), "Anya drinks green tea in the afternoon")
    assert_status(runner, vault, broken=True)
    with open_index(Vault.open(vault)) as index:
        assert index.refresh() is None  # the up-to-date check does not read the held file again

    got = runner.invoke(cli, ["index"])
    assert got.exit_code == 0 and "kept last good" not in got.output  # nothing changed since
    got = runner.invoke(cli, ["index", "--rebuild"])
    assert got.exit_code == 0 and f"kept last good entries: {WEEK}:" in got.output, got.output
    assert holds_all(contents(vault), KEPT)
    data = json.loads(runner.invoke(cli, ["index", "--rebuild", "--json"]).stdout)
    assert list(data["held"]) == [WEEK]
    assert holds_all(found("billing") | found("Jörg"), KEPT)
    assert_status(runner, vault, broken=True)
    waited = json.loads(runner.invoke(cli, ["index", "--wait", "--json"]).stdout)
    assert list(waited["broken"]) == [WEEK] and waited["updated"] == []  # held earlier, still listed

    (vault / WEEK).write_text(FIXED, encoding="utf-8")
    assert holds(search_cli(runner, "billing"), "Use CockroachDB for the billing service, not Redis")
    assert in_sync(vault) and not holds(contents(vault), "Use Postgres for the billing service, not Redis")
    assert_status(runner, vault, broken=False)


def test_memvault_index_holds_back_and_a_further_broken_edit_stays_held(vault, runner):
    runner.invoke(cli, ["index"])
    (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
    data = json.loads(runner.invoke(cli, ["index", "--json"]).stdout)
    assert list(data["held"]) == [WEEK] and WEEK not in data["changed"]
    (vault / WEEK).write_text(HALF_EDITED + "\nnoch nicht fertig\n", encoding="utf-8")  # still typing
    data = json.loads(runner.invoke(cli, ["index", "--json"]).stdout)
    assert list(data["held"]) == [WEEK]
    assert holds_all(contents(vault), KEPT)
    assert_status(runner, vault, broken=True)


def test_a_file_held_back_and_then_deleted_leaves_nothing_behind(vault, runner):
    runner.invoke(cli, ["index"])
    (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
    search_cli(runner, "billing")
    (vault / WEEK).unlink()
    assert not search_cli(runner, "billing")
    assert not any(f == WEEK for f, _, _ in index_rows(vault))
    assert_status(runner, vault, broken=False)


def test_a_rebuild_from_nothing_reads_the_file_as_it_is(vault, runner):
    (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
    data = json.loads(runner.invoke(cli, ["index", "--rebuild", "--json"]).stdout)
    assert data["held"] == {}  # no last good version known: nothing to keep
    assert in_sync(vault)
    assert_status(runner, vault, broken=False)


def test_a_rebuild_for_damage_carries_nothing_over(vault, runner):
    runner.invoke(cli, ["index"])
    (vault / WEEK).write_text(HALF_EDITED, encoding="utf-8")
    assert holds(search_cli(runner, "billing"), "Use Postgres for the billing service, not Redis")
    with open_index(Vault.open(vault)) as index:
        db = index.db_path
    db.write_bytes(b"this is not a database" * 100)  # the old rows cannot be trusted
    assert not holds(search_cli(runner, "billing"), "Use Postgres for the billing service, not Redis")
    assert in_sync(vault)
    assert_status(runner, vault, broken=False)
