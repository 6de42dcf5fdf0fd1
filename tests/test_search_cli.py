"""The search, index and status commands, checked through the library."""

from __future__ import annotations

import json

from memvault.cli import cli
from memvault.search import access
from memvault.search.index import open_index

from .helpers_index import entry, make_vault, write_log


def setup(vault_dir):
    vault = make_vault(vault_dir)
    write_log(vault.root, "2026-02-14", entry("10:00", "Belief", "User wants weekly updates on Friday"),
              entry("11:00", "Observation", "Talked about the garden", tags="home"))
    write_log(vault.root, "2026-02-21", entry("16:00", "Correction", "Weekly updates on Monday, not Friday",
                                              supersedes="belief about Friday updates from 2026-02-14"))
    return vault


def test_search_json_builds_the_index_and_records_access(vault_dir, runner):
    vault = setup(vault_dir)
    result = runner.invoke(cli, ["search", "--json", "friday", "updates"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert hits[0]["id"] == "2026-02-21T16:00"
    assert "2026-02-14T10:00" not in [h["id"] for h in hits]  # the belief is superseded
    hit = hits[0]
    assert hit["location"] == "memory/2026-02-21.md#L3-L5"
    assert set(hit["score_parts"]) == {"relevance", "importance", "recency", "confidence"}
    assert "**Friday**" in hit["snippet"] and hit["superseded_by"] is None
    with open_index(vault) as index:
        assert index.status().events_indexed == 3
    assert access.stats(vault.root) == {}  # searching records nothing by default
    assert runner.invoke(cli, ["search", "--record", "friday", "updates"]).exit_code == 0
    assert access.stats(vault.root)["2026-02-21T16:00"].count == 1


def test_search_all_filters_and_text(vault_dir, runner):
    setup(vault_dir)
    result = runner.invoke(cli, ["search", "--all", "--json", "friday"])
    hits = json.loads(result.output)
    assert [(h["id"], h["status"], h["superseded_by"]) for h in hits][:2] == [
        ("2026-02-21T16:00", "live", None), ("2026-02-14T10:00", "superseded", "2026-02-21T16:00")]
    result = runner.invoke(cli, ["search", "--tag", "home", "--json", "garden", "updates"])
    assert [h["id"] for h in json.loads(result.output)] == ["2026-02-14T11:00"]  # the only #home
    result = runner.invoke(cli, ["search", "--type", "correction", "--until", "2026-02-20", "updates"])
    assert result.output.strip() == "no matches"
    result = runner.invoke(cli, ["search", "--since", "2026-02-20", "updates"])
    assert "2026-02-21T16:00" in result.output and "memory/2026-02-21.md#L3-L5" in result.output


def test_search_sees_edits_without_an_explicit_index(vault_dir, runner):
    vault = setup(vault_dir)
    runner.invoke(cli, ["index"])
    write_log(vault.root, "2026-02-22", entry("09:00", "Observation", "Bought a new kettle"))
    result = runner.invoke(cli, ["search", "--json", "kettle"])
    assert [h["id"] for h in json.loads(result.output)] == ["2026-02-22T09:00"]


def test_index_and_rebuild_commands(vault_dir, runner):
    vault = setup(vault_dir)
    result = runner.invoke(cli, ["index"])
    assert result.exit_code == 0 and "index rebuilt: 2 added" in result.output  # first run builds
    assert "\r" not in result.output  # no progress bar when not on a terminal
    result = runner.invoke(cli, ["index", "--json"])
    data = json.loads(result.output)
    assert data["rebuilt"] is False and data["added"] == [] and data["events_indexed"] == 0
    result = runner.invoke(cli, ["index", "--rebuild", "--backend", "whoosh", "--json"])
    assert json.loads(result.output)["events_indexed"] == 3
    with open_index(vault, "whoosh") as index:
        assert [h.id for h in index.search("garden", record_access=False)][:1] == ["2026-02-14T11:00"]


def test_index_says_its_problems_are_the_parse_problems_and_check_counts_more(vault_dir, runner):
    # QA: `index --rebuild` said "5 problem(s), 5 error(s)" where `check` reported 12 errors and
    # 63 warnings on the same vault; index counts what parsing found, and now says so.
    from memvault.check.runner import check_vault
    from memvault.vault import Vault

    vault = setup(vault_dir)
    write_log(vault.root, "2026-02-22", "## 25:99 - Belief\nflaky build  \n\n## 10:00 - Observation\n"
              "Supersedes: an entry that never existed\npassword: Sommer2024!\n")
    result = runner.invoke(cli, ["index", "--rebuild"])
    assert result.exit_code == 0, result.output
    opened = Vault.open(vault.root)
    parsed = [p for f in opened.files.values() for p in f.problems] + opened.skipped  # what reading found
    found = check_vault(Vault.open(vault.root)).problems
    errors = sum(p.severity == "error" for p in parsed)
    assert f"parse problems in the files read: {len(parsed)} ({errors} error" in result.output
    assert "`memvault check` runs every rule" in result.output and "problem(s)" not in result.output
    assert sum(p.severity == "error" for p in found) > errors  # the secret and Supersedes: check's rules
    data = json.loads(runner.invoke(cli, ["index", "--rebuild", "--json"]).output)
    assert len(data["problems"]) == len(parsed)


def test_update_index_is_what_the_index_command_does(vault_dir):
    from memvault.search.index import update_index

    vault = setup(vault_dir)
    heard: list[tuple[int, int]] = []
    first = update_index(vault, progress=lambda done, total: heard.append((done, total)))
    assert first.rebuilt and first.events_indexed == 3 and heard and heard[-1][0] == heard[-1][1]
    assert not update_index(vault).touched
    again = update_index(vault, rebuild=True)
    assert again.rebuilt and again.reason is not None and again.events_indexed == 3


def test_status_command(vault_dir, runner):
    vault = setup(vault_dir)
    result = runner.invoke(cli, ["status", "--json"])
    data = json.loads(result.output)["index"]
    assert data["stale"] is True and data["files_on_disk"] == 2 and data["events_on_disk"] == 3
    runner.invoke(cli, ["index"])
    result = runner.invoke(cli, ["status"])
    assert "index: sqlite, up to date" in result.output
    assert "events: 3 on disk, 3 indexed" in result.output
    write_log(vault.root, "2026-02-23", entry("09:00", "Observation", "x"))
    assert "stale (1 file(s) changed" in runner.invoke(cli, ["status"]).output


def test_bad_input_is_reported(vault_dir, runner):
    setup(vault_dir)
    result = runner.invoke(cli, ["search", "--backend", "lucene", "x"])
    assert result.exit_code == 2 and "unknown index backend 'lucene'" in result.output  # a usage error
    result = runner.invoke(cli, ["search", "--limit", "0", "x"])
    assert result.exit_code == 2
    result = runner.invoke(cli, ["search", "--since", "someday", "x"])
    assert result.exit_code == 2 and "cannot read the time" in result.output
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[index]\nbackend = "nope"\n')
    assert "[index] backend must be one of 'sqlite', 'whoosh', got 'nope'" in runner.invoke(cli, ["index"]).output


def test_neighbour_only_hits_are_marked_and_not_counted_as_recalled(runner, vault_dir):
    from memvault.cli import cli
    from memvault.search import access

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-11-29.md").write_text(
        "# 2026-11-29\n\n## 10:00 - Decision\nSwitch Atlas to SQLite\n\n## 10:05 - Observation\nThe coffee machine is broken\n")
    result = runner.invoke(cli, ["search", "SQLite", "--json", "--record"])
    assert result.exit_code == 0, result.output
    hits = {h["id"]: h for h in json.loads(result.output)}
    assert hits["2026-11-29T10:00"]["matched"] is True
    if "2026-11-29T10:05" in hits:
        assert hits["2026-11-29T10:05"]["matched"] is False
    assert set(access.stats(vault_dir)) == {"2026-11-29T10:00"}
    # a hit carries the entry's full JSON shape, as list/show print it
    listed = {d["id"]: d for d in json.loads(runner.invoke(cli, ["list", "--json"]).output)}
    for key in ("confidence_0", "supersedes", "source", "links", "expires", "status"):
        assert hits["2026-11-29T10:00"][key] == listed["2026-11-29T10:00"][key]


def test_search_with_an_unknown_type_is_a_usage_error(runner, vault_dir):
    from memvault.cli import cli

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    result = runner.invoke(cli, ["search", "ci", "--type", "beliefs"])
    assert result.exit_code == 2 and "no such type" in result.output


def test_search_type_accepts_what_list_accepts(vault_dir, runner):
    # `list --type feeling` worked on a vault with a `Feeling` entry; `search --type feeling`
    # was refused (configured types only). Both now ask the library's one rule.
    from memvault.cli import cli
    from memvault.vault import Vault

    setup(vault_dir)
    write_log(vault_dir, "2026-02-22", entry("10:00", "Feeling", "Calm about the weekly updates"))
    listed = runner.invoke(cli, ["list", "--type", "feeling", "--json"])
    found = runner.invoke(cli, ["search", "weekly", "--type", "Feeling", "--json"])
    assert listed.exit_code == found.exit_code == 0, found.output
    assert [d["id"] for d in json.loads(listed.output)] == ["2026-02-22T10:00"]
    assert [h["id"] for h in json.loads(found.output)] == ["2026-02-22T10:00"]
    with Vault.open(vault_dir) as vault:
        assert vault.timeline.by_id["2026-02-22T10:00"].type == "feeling"
    for command in (["list"], ["search", "weekly"]):
        refused = runner.invoke(cli, [*command, "--type", "feelings"])
        assert refused.exit_code == 2
        assert "--type 'feelings': no such type; known: belief, correction, decision, feeling, note, observation" in refused.output


def test_bad_search_settings_name_the_key(runner, vault_dir):
    from memvault.cli import cli

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[search]\nrelevance = "high"\n')
    result = runner.invoke(cli, ["search", "x"])
    assert result.exit_code == 1 and "[search] relevance must be a number >= 0, got 'high'" in result.output
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[index]\nbackend = "elastic"\n')
    result = runner.invoke(cli, ["search", "x"])
    assert result.exit_code == 1 and "[index] backend must be one of" in result.output and "elastic" in result.output
