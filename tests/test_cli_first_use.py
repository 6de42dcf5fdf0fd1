"""Issue 14, a new user's QA pass: windows, limits, notices and options as people and agents type them.

Through the CLI on real vaults; what the vault holds afterwards is read through the library.
"""

from __future__ import annotations

import json

import pytest

from memvault.cli import cli
from memvault.vault import Vault

# ---------------------------------------------------------------------------- reversed windows


@pytest.mark.parametrize("args", [
    ["list", "--since", "2026-02-21", "--until", "2026-02-14"],
    ["search", "dark mode", "--since", "2026-02-21", "--until", "2026-02-14"],
    ["changes", "--since", "2026-02-21", "--until", "2026-02-14"],
    ["curate", "--dry-run", "--since", "2026-02-21", "--until", "2026-02-14"],
])
def test_a_window_that_ends_before_it_starts_is_a_usage_error_naming_both_times(runner, sample_vault, args):
    text = runner.invoke(cli, args)
    assert text.exit_code == 2, text.output
    assert "before --since" in text.stderr and "'2026-02-14'" in text.stderr and "'2026-02-21'" in text.stderr
    assert text.stderr.startswith("Usage:")
    error = json.loads(runner.invoke(cli, [*args, "--json"]).stderr)["error"]
    assert error["code"] == "usage" and "2026-02-14" in error["message"] and "2026-02-21" in error["message"]


def test_relative_times_reversed_are_refused_and_an_equal_window_is_not(runner, sample_vault):
    result = runner.invoke(cli, ["changes", "--since", "3 days ago", "--until", "5 days ago"])
    assert result.exit_code == 2 and "'5 days ago'" in result.stderr and "'3 days ago'" in result.stderr
    # one day, both ends the same date: --since is its start, --until its end, not reversed
    same = runner.invoke(cli, ["list", "--since", "2026-02-14", "--until", "2026-02-14", "--json"])
    assert same.exit_code == 0 and {d["id"][:10] for d in json.loads(same.stdout)} == {"2026-02-14"}


def test_the_library_refuses_a_reversed_window_for_changes_too(sample_vault):
    from memvault.errors import InputError

    with Vault.open(sample_vault) as vault, pytest.raises(InputError, match="before --since"):
        vault.changes("2026-02-21", "2026-02-14")


# ---------------------------------------------------------------------------- -n/--limit


def test_list_n_shows_the_newest_entries_oldest_first(runner, sample_vault):
    everything = json.loads(runner.invoke(cli, ["list", "--json"]).stdout)
    assert len(everything) > 2
    two = runner.invoke(cli, ["list", "-n", "2", "--json"])
    assert two.exit_code == 0, two.output
    assert [d["id"] for d in json.loads(two.stdout)] == [d["id"] for d in everything][-2:]
    assert runner.invoke(cli, ["list", "--limit", "0"]).exit_code == 2


def test_changes_n_keeps_that_many_of_each_kind_and_counts_the_rest(runner, sample_vault):
    full = json.loads(runner.invoke(cli, ["changes", "--since", "2026-02-01", "--json"]).stdout)
    assert len(full["new"]) > 1
    cut = runner.invoke(cli, ["changes", "--since", "2026-02-01", "-n", "1", "--json"])
    data = json.loads(cut.stdout)
    assert data["new"] == full["new"][:1] and data["more"]["new"] == len(full["new"]) - 1
    text = runner.invoke(cli, ["changes", "--since", "2026-02-01", "--limit", "1"]).output
    assert f"New (1 of {len(full['new'])})" in text


# ---------------------------------------------------------------------------- notices


def test_only_common_words_is_a_json_notice_under_json(runner, sample_vault):
    result = runner.invoke(cli, ["search", "the", "of", "and", "--json"])
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays the hits
    notice = json.loads(result.stderr)["notice"]["message"]
    assert "common" in notice, notice
    assert "note: " in runner.invoke(cli, ["search", "the", "of", "and"]).stderr


# ---------------------------------------------------------------------------- options


def test_json_before_a_sub_groups_command(runner, sample_vault):
    from tests.conftest import git

    git(sample_vault, "init", "-q")
    before = runner.invoke(cli, ["hook", "--json", "status"])
    after = runner.invoke(cli, ["hook", "status", "--json"])
    assert before.exit_code == after.exit_code == 0, before.output
    assert json.loads(before.stdout) == json.loads(after.stdout)


def test_an_option_is_not_taken_as_the_vault(runner, sample_vault):
    result = runner.invoke(cli, ["list", "--vault", "--json"])
    assert result.exit_code == 2
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "usage" and "'--json'" in error["message"] and "--vault" in error["message"]
    assert runner.invoke(cli, ["--vault", "--all", "list"]).exit_code == 2
    # a directory that really is named so is reachable as ./--odd
    odd = sample_vault / "--odd"
    Vault  # noqa: B018 (the library reads it below)
    from tests.conftest import plain_vault

    plain_vault(odd)
    ok = runner.invoke(cli, ["list", "--json", "--vault", f"{sample_vault}/--odd"])
    assert ok.exit_code == 0 and [d["content"] for d in json.loads(ok.stdout)] == ["User likes tea"]


def test_a_missing_option_value_shows_the_usage_line(runner, sample_vault):
    for args in (["status", "--vault"], ["--vault"], ["list", "--since"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2 and result.stderr.startswith("Usage: "), (args, result.stderr)


def test_json_with_a_value_is_refused_as_json(runner, sample_vault):
    result = runner.invoke(cli, ["list", "--json=yes"])
    assert result.exit_code == 2
    assert json.loads(result.stderr)["error"]["code"] == "usage"


@pytest.mark.parametrize("command", ["show", "history"])
def test_an_empty_id_is_a_usage_error(runner, sample_vault, command):
    for spec in ("", "   "):
        text = runner.invoke(cli, [command, spec])
        assert text.exit_code == 2 and text.stderr.startswith("Usage:"), text.stderr
        error = json.loads(runner.invoke(cli, [command, spec, "--json"]).stderr)["error"]
        assert error["code"] == "usage" and "no entry named" in error["message"]
