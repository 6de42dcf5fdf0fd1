"""Issue 13, points 7 and 8: searching never changes what later searches find, and a hit
found only through its neighbours never outranks an entry that matches the query.

Through the CLI, checked through the library (access counts, Index.search, rank_events)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memvault.cli import cli
from memvault.search import access
from memvault.search.index import open_index
from memvault.search.rank import rank_events
from memvault.search.textproc import parse_query
from memvault.vault import Vault

LOGS = {
    "2025-03-03": """# 2025-03-03

## 09:10 - Observation
Met Jürgen about the Grafana dashboards, he wants alerts on p99 latency.

## 09:40 - Decision
Billing service moves to Postgres 16 next sprint. #billing

ok so the migration script lives in ops/migrate.sh, ask Zoë before running it

## 14:00 - Belief
Übergabe an das Ops-Team erst nach dem Lasttest
""",
    "2025-03-04": """# 2025-03-04

## 10:00 - Observation
Grafana alert for billing fired twice overnight; false alarm, threshold too low.

## 11:30 - Lesson
Never run migrate.sh without a snapshot. #ops
""",
}


def write_vault(root, toml: str = "") -> None:
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n' + toml)
    (root / "memory").mkdir(exist_ok=True)
    for day, text in LOGS.items():
        (root / "memory" / f"{day}.md").write_text(text)


def search_ids(runner, *args: str) -> list[str]:
    result = runner.invoke(cli, ["search", "--json", *args])
    assert result.exit_code == 0, result.output
    return [h["id"] for h in json.loads(result.stdout)]  # stderr may hold a JSON notice


# -- point 7: what counts as a recall ----------------------------------------------------------


def test_exploratory_searches_do_not_change_later_results(vault_dir, runner):
    write_vault(vault_dir)
    first = search_ids(runner, "grafana", "billing")
    for q in (["the", "of", "and"], ["migrate.sh"], ["Postgres"], ["Lasttest", "Übergabe"], ["billing"]):
        search_ids(runner, *q)
    assert search_ids(runner, "grafana", "billing") == first
    assert access.stats(vault_dir) == {}
    with Vault.open(vault_dir) as vault, open_index(vault) as index:
        assert [h.id for h in index.search("grafana billing")] == first
    assert access.stats(vault_dir) == {}


def test_record_counts_only_the_first_matching_hits(vault_dir, runner):
    write_vault(vault_dir)
    ids = search_ids(runner, "--record", "grafana", "billing", "postgres")
    assert len(ids) >= 4
    assert set(access.stats(vault_dir)) == set(ids[:3])  # [search] record_top = 3
    assert all(a.count == 1 for a in access.stats(vault_dir).values())


def test_a_query_without_content_words_is_never_a_recall(vault_dir, runner):
    write_vault(vault_dir, "[search]\nrecord = true\n")
    assert search_ids(runner, "the", "of", "and")  # it still finds something
    assert search_ids(runner, "--record", '"about the"')
    assert access.stats(vault_dir) == {}
    assert parse_query("the of and").content is False
    assert parse_query("#billing").content and parse_query("über die Grafana").content


def test_config_default_and_the_flag_that_overrides_it(vault_dir, runner):
    write_vault(vault_dir, "[search]\nrecord = true\nrecord_top = 1\n")
    ids = search_ids(runner, "grafana")
    assert set(access.stats(vault_dir)) == {ids[0]}
    search_ids(runner, "--no-record", "billing")
    assert set(access.stats(vault_dir)) == {ids[0]}
    with Vault.open(vault_dir) as vault, open_index(vault) as index:
        index.search("lasttest")  # the library follows the config too
        index.search("postgres", record_access=False)
    assert len(access.stats(vault_dir)) == 2


@pytest.mark.parametrize("toml, words", [
    ("record = 1", "[search] record must be true or false"),
    ("record_top = -1", "[search] record_top must be a whole number >= 0"),
    ("record_top = 2.5", "[search] record_top must be a whole number >= 0"),
])
def test_bad_record_settings_are_one_clear_error(vault_dir, runner, toml, words):
    write_vault(vault_dir, f"[search]\n{toml}\n")
    result = runner.invoke(cli, ["search", "grafana"])
    assert result.exit_code != 0 and words in result.output + (result.stderr or "")


def test_show_is_a_recall_unless_asked_not_to(vault_dir, runner):
    write_vault(vault_dir)
    assert runner.invoke(cli, ["show", "--no-record", "2025-03-04T11:30"]).exit_code == 0
    assert access.stats(vault_dir) == {}
    result = runner.invoke(cli, ["show", "memory/2025-03-04.md:6"])
    assert result.exit_code == 0 and "migrate.sh" in result.output
    assert runner.invoke(cli, ["show", "2025-03-04T11:30", "--json"]).exit_code == 0
    got = access.stats(vault_dir)
    assert set(got) == {"2025-03-04T11:30"} and got["2025-03-04T11:30"].count == 2
    # a recall makes the old entry recent again: it is what recency counts from
    with Vault.open(vault_dir) as vault, open_index(vault) as index:
        hit = next(h for h in index.search("snapshot") if h.id == "2025-03-04T11:30")
    assert hit.recency > 0.99


# -- point 8: neighbour context never pushes a match down ---------------------------------------


def weekly_story(root) -> str:
    """The demo's story: a belief corrected later; an unrelated, important and recent
    observation right after the correction (so its context holds the query's words)."""
    today = datetime.now(UTC).date().isoformat()
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory").mkdir()
    (root / "memory" / "2024-05-06.md").write_text(
        "# 2024-05-06\n\n## 14:30 - Belief\nUser wants weekly updates on Friday afternoons\n")
    (root / "memory" / f"{today}.md").write_text(
        f"# {today}\n\n## 00:00 - Correction\nUser prefers weekly updates on Monday, not Friday\n"
        "Supersedes: belief about weekly updates on Friday\n\n"
        "## 00:01 - Observation\nAnya drinks green tea, never coffee, before standups\nImportance: high\n")
    return today


def test_a_neighbour_only_hit_never_outranks_a_match(vault_dir, runner):
    today = weekly_story(vault_dir)
    result = runner.invoke(cli, ["search", "weekly", "updates", "--all", "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert [(h["id"], h["matched"]) for h in hits] == [
        (f"{today}T00:00", True), ("2024-05-06T14:30", True), (f"{today}T00:01", False)]
    text = runner.invoke(cli, ["search", "weekly", "updates", "--all"]).output
    assert text.index("Friday afternoons") < text.index("Anya") and "(found through nearby entries)" in text
    with Vault.open(vault_dir) as vault:
        with open_index(vault) as index:
            assert [h.id for h in index.search("weekly updates", include_all=True)] == [h["id"] for h in hits]
        in_memory = rank_events(vault.events, "weekly updates", vault.timeline, include_all=True)
        assert [h.id for h in in_memory] == [h["id"] for h in hits]


def test_neighbours_still_fill_the_tail(vault_dir, runner):
    today = weekly_story(vault_dir)
    hits = json.loads(runner.invoke(cli, ["search", "weekly", "updates", "--json"]).output)
    assert [(h["id"], h["matched"]) for h in hits] == [(f"{today}T00:00", True), (f"{today}T00:01", False)]
    assert [h["id"] for h in json.loads(runner.invoke(cli, ["search", "-n", "1", "weekly", "--json"]).output)] == [
        f"{today}T00:00"]


def test_asof_query_marks_context_only_hits(vault_dir, runner):
    today = weekly_story(vault_dir)
    result = runner.invoke(cli, ["asof", "now", "weekly", "updates"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    anya = next(line for line in lines if "Anya" in line)
    assert anya.endswith("(found through nearby entries)")
    assert not any(line.endswith("(found through nearby entries)") for line in lines if "Monday" in line)
    data = json.loads(runner.invoke(cli, ["asof", "now", "weekly", "updates", "--json"]).output)
    assert {d["id"]: d["matched"] for d in data} == {f"{today}T00:00": True, f"{today}T00:01": False}
