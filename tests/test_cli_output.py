"""What show, history, changes and search say (issue 14, "Options and output"): every fact the
JSON holds is in the text too, a move reads as a move, a revived entry has its category, a
lookup says why it matched, and a query with nothing to search for says so. Through the CLI
on real vaults (real git where history is involved); state checked through the library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.vault import Vault

from .conftest import git, plain_vault


def _log(root: Path, day: str, text: str) -> None:
    (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}")


def _commit(root: Path, message: str, when: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


# -- show: reconfirmations ---------------------------------------------------------------------

def test_show_text_names_what_an_entry_reconfirms_and_who_reconfirmed_it(runner, vault_dir):
    plain_vault(vault_dir, "Europe/Berlin")
    _log(vault_dir, "2026-02-22", "## 10:00 - Observation\nMag immer noch Tee, grünen vor allem\n"
                                  "Reconfirms: [[2026-02-21#09:00]]\n")
    _log(vault_dir, "2026-02-23", "## 08:30 - Belief\nstill tea, checked again\n"
                                  "Reconfirms: [[2026-02-21#09:00]]\nReconfirms: [[2026-01-01#07:00]]\n")
    confirming = runner.invoke(cli, ["show", "2026-02-22T10:00", "--no-record"])
    assert confirming.exit_code == 0, confirming.output
    assert "reconfirms: 2026-02-21T09:00\n" in confirming.output
    old = runner.invoke(cli, ["show", "2026-02-21T09:00", "--no-record"]).output
    assert "reconfirmed by: 2026-02-22T10:00, 2026-02-23T08:30\n" in old
    assert "reconfirms:" not in old
    # One reference that resolves and one that does not: the text says which were written.
    partly = runner.invoke(cli, ["show", "2026-02-23T08:30", "--no-record"]).output
    assert ("reconfirms: 2026-02-21T09:00 (as written: [[2026-02-21#09:00]], [[2026-01-01#07:00]]; "
            "1 not found)") in partly
    # The text says what the library holds.
    vault = Vault.open(vault_dir)
    assert vault.show("2026-02-21T09:00", record=False)["reconfirmed_by"] == ["2026-02-22T10:00", "2026-02-23T08:30"]
    # An entry neither reconfirming nor reconfirmed has no such lines.
    _log(vault_dir, "2026-02-24", "## 11:00 - Decision\nWir bleiben bei Kaffee im Büro\n")
    alone = runner.invoke(cli, ["show", "2026-02-24T11:00", "--no-record"]).output
    assert "reconfirm" not in alone


# -- history: a move -----------------------------------------------------------------------------

def test_history_of_a_moved_entry_says_from_where_to_where(runner, vault_dir):
    # A log moved into its year folder kept its text, and history printed it twice as was:/now:.
    plain_vault(vault_dir, "Europe/Berlin")
    _log(vault_dir, "2026-02-22", "## 10:00 - Decision\nDeploys gehen freitags raus, nicht donnerstags\n")
    git(vault_dir, "init", "-q")
    _commit(vault_dir, "two days", "2026-02-22T12:00:00+00:00")
    (vault_dir / "memory" / "2026").mkdir()
    git(vault_dir, "mv", "memory/2026-02-22.md", "memory/2026/2026-02-22.md")
    _commit(vault_dir, "into the year folder", "2026-03-01T09:00:00+00:00")
    assert Vault.open(vault_dir).find("2026-02-22T10:00").file == "memory/2026/2026-02-22.md"

    result = runner.invoke(cli, ["history", "2026-02-22T10:00"])
    assert result.exit_code == 0, result.output
    assert "moved    memory/2026/2026-02-22.md\n" in result.output
    assert "      moved from memory/2026-02-22.md:3 to memory/2026/2026-02-22.md:3\n" in result.output
    assert "was:" not in result.output and "now:" not in result.output

    commits = Vault.open(vault_dir).history("2026-02-22T10:00")["commits"]
    assert [(c["change"], c["old_file"], c["file"]) for c in commits] == [
        ("added", None, "memory/2026-02-22.md"), ("moved", "memory/2026-02-22.md", "memory/2026/2026-02-22.md")]
    assert commits[1]["old"] == commits[1]["new"]


def test_history_of_an_entry_moved_and_edited_says_both(runner, vault_dir):
    plain_vault(vault_dir, "Europe/Berlin")
    git(vault_dir, "init", "-q")
    _commit(vault_dir, "tea", "2026-02-21T12:00:00+00:00")
    (vault_dir / "memory" / "2026" / "02").mkdir(parents=True)
    git(vault_dir, "mv", "memory/2026-02-21.md", "memory/2026/02/2026-02-21.md")
    (vault_dir / "memory" / "2026" / "02" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\nKurz notiert.\n\n## 09:00 - Belief\nUser likes green tea\n")
    # Uncommitted: the working tree's item says so, and names both places too.
    out = runner.invoke(cli, ["history", "2026-02-21T09:00"]).output
    assert "edited (uncommitted) memory/2026/02/2026-02-21.md" in out
    assert "      moved from memory/2026-02-21.md:3 to memory/2026/02/2026-02-21.md:5\n" in out
    assert "was: ## 09:00 - Belief User likes tea" in out and "now: ## 09:00 - Belief User likes green tea" in out
    # An edit that only shifts the entry's lines in its own file is no move.
    _commit(vault_dir, "moved", "2026-02-22T12:00:00+00:00")
    (vault_dir / "memory" / "2026" / "02" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\nKurz notiert.\nUnd noch was.\n\n## 09:00 - Belief\nUser likes black tea\n")
    out = runner.invoke(cli, ["history", "2026-02-21T09:00"]).output
    assert out.count("moved from") == 1


# -- changes: revived ------------------------------------------------------------------------------

CORRECTION = "## 16:00 - Correction\nDoch kein Tee mehr: nur noch Kaffee\nSupersedes: [[2026-02-21#09:00]]\n"


def test_changes_names_an_entry_live_again_after_its_superseder_was_deleted(runner, vault_dir):
    plain_vault(vault_dir, "Europe/Berlin")
    _log(vault_dir, "2026-02-22", CORRECTION)
    git(vault_dir, "init", "-q")
    _commit(vault_dir, "tea, then coffee", "2026-02-22T18:00:00+00:00")
    assert Vault.open(vault_dir).show("2026-02-21T09:00", record=False)["status"] == "superseded"
    (vault_dir / "memory" / "2026-02-22.md").unlink()  # the correction was a mistake

    data = Vault.open(vault_dir).changes("2026-02-23")
    assert [(d["id"], d["status"], d["was_superseded_by"], d["superseder"]) for d in data["revived"]] == [
        ("2026-02-21T09:00", "live", "2026-02-22T16:00", "deleted")]
    assert [d["id"] for d in data["deleted"]] == ["2026-02-22T16:00"]
    result = runner.invoke(cli, ["changes", "--since", "2026-02-23"])
    assert result.exit_code == 0, result.output
    assert "Revived (live again: what superseded them went away) (1)\n" in result.output
    assert "  ^ 2026-02-21T09:00  belief      User likes tea  (2026-02-21T09:00)" \
           " <- was superseded by 2026-02-22T16:00 (deleted)\n" in result.output
    as_json = json.loads(runner.invoke(cli, ["changes", "--since", "2026-02-23", "--json"]).output)
    # Confidence decays between the two calls (a busy machine makes that visible): compare the rest.
    def steady(items):
        return [{k: v for k, v in d.items() if k != "confidence"} for d in items]
    assert steady(as_json["revived"]) == steady(json.loads(json.dumps(data["revived"])))

    # Committed, and asked across both commits with --until: the same answer.
    _commit(vault_dir, "no correction after all", "2026-02-24T09:00:00+00:00")
    between = Vault.open(vault_dir).changes("2026-02-23", "2026-02-25")
    assert [d["id"] for d in between["revived"]] == ["2026-02-21T09:00"]
    # Before the correction was written, nothing was superseded: nothing revived.
    assert Vault.open(vault_dir).changes("2026-02-21T12:00")["revived"] == []


def test_changes_names_an_entry_revived_by_an_edited_reference_and_not_one_still_superseded(runner, vault_dir):
    plain_vault(vault_dir, "Europe/Berlin")
    black = "\n## 17:00 - Belief\nKaffee schwarz\n"
    _log(vault_dir, "2026-02-22", CORRECTION + black)
    _log(vault_dir, "2026-02-23", "## 08:00 - Correction\nKaffee mit Hafermilch\nSupersedes: [[2026-02-22#17:00]]\n")
    git(vault_dir, "init", "-q")
    _commit(vault_dir, "week", "2026-02-23T18:00:00+00:00")
    # The 16:00 correction now names the 17:00 belief, whose own correction is deleted: the tea
    # belief is live again, the coffee belief is not (another entry supersedes it now).
    moved = CORRECTION.replace("[[2026-02-21#09:00]]", "[[2026-02-22#17:00]]").replace("16:00", "18:00")
    _log(vault_dir, "2026-02-22", moved + black)
    (vault_dir / "memory" / "2026-02-23.md").unlink()
    data = Vault.open(vault_dir).changes("2026-02-24")
    assert [(d["id"], d["superseder"]) for d in data["revived"]] == [("2026-02-21T09:00", "deleted")]
    assert Vault.open(vault_dir).show("2026-02-22T17:00", record=False)["status"] == "superseded"

    # The correction stays but its Supersedes: line goes: the coffee belief is live again.
    _commit(vault_dir, "rework", "2026-02-24T18:00:00+00:00")
    _log(vault_dir, "2026-02-22", moved.replace("Supersedes: [[2026-02-22#17:00]]\n", "") + black)
    edited = Vault.open(vault_dir).changes("2026-02-25")
    assert [(d["id"], d["was_superseded_by"], d["superseder"]) for d in edited["revived"]] == [
        ("2026-02-22T17:00", "2026-02-22T18:00", "edited")]
    out = runner.invoke(cli, ["changes", "--since", "2026-02-25"]).output
    assert "<- was superseded by 2026-02-22T18:00 (no longer superseding it)" in out


# -- show: why a lookup matched ---------------------------------------------------------------------

ORION_MEMORY = """# Memory

## Decisions
- Orion 2.0 geht am Freitag raus, nicht am Donnerstag (sources: [[orion-release]])
- Staging bleibt bis März eingefroren (sources: [[2026-02-21#09:00]])
"""


def _orion(root: Path) -> None:
    plain_vault(root, "Europe/Berlin")
    (root / "memory" / "orion-release.md").write_text(
        "# Orion release\n\n## 10:00 - Decision\nRelease am Freitag; QA signs off Thursday night\n")
    (root / "MEMORY.md").write_text(ORION_MEMORY)
    git(root, "init", "-q")
    _commit(root, "orion", "2026-02-20T12:00:00+00:00")


def test_show_says_a_bullet_stands_in_for_a_log_renamed_away(runner, vault_dir):
    _orion(vault_dir)
    before = runner.invoke(cli, ["show", "orion-release", "--no-record"])  # the log's ids start so
    assert before.exit_code == 1 and "'orion-release' starts 2 ids: orion-release#_, orion-release@10:00" in before.output
    assert "found by" not in runner.invoke(cli, ["show", "orion-release@10", "--no-record"]).output
    git(vault_dir, "mv", "memory/orion-release.md", "memory/launch-notes.md")

    result = runner.invoke(cli, ["show", "orion-release", "--no-record"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("M:decisions:orion-2-0-geht-am-freitag  decision")
    assert lines[1] == ("found by cited source: no entry has the id 'orion-release'; this is the MEMORY.md "
                        "bullet citing it as a source ([[orion-release]]); no entry answers to that source "
                        "now (its file renamed or deleted?)")
    data = json.loads(runner.invoke(cli, ["show", "orion-release", "--json", "--no-record"]).output)
    assert data["found_by"] == {"how": "cited source", "given": "orion-release", "why": lines[1].removeprefix(
        "found by cited source: ")}
    vault = Vault.open(vault_dir)
    found = vault.locate("[[orion-release]]")  # the link form, which no longer resolves, too
    assert (found.event.file, found.how) == ("MEMORY.md", "cited source")
    # The entry itself, by its new id or a description, says nothing it does not need to.
    assert vault.show("launch-notes@10:00", record=False)["found_by"] == {
        "how": "id", "given": "launch-notes@10:00", "why": None}
    described = vault.show("QA signs off", record=False)["found_by"]
    assert described["how"] == "description" and "words match it best" in described["why"]


def test_a_link_still_names_its_entry_though_a_bullet_cites_it(runner, vault_dir):
    _orion(vault_dir)
    found = Vault.open(vault_dir).locate("[[2026-02-21#09:00]]")
    assert (found.event.id, found.how, found.why) == ("2026-02-21T09:00", "reference", None)
    out = runner.invoke(cli, ["show", "[[2026-02-21#09:00]]", "--no-record"]).output
    assert out.startswith("2026-02-21T09:00  belief") and "found by" not in out
    # Two bullets citing the same gone source: named, not guessed between.
    (vault_dir / "MEMORY.md").write_text(ORION_MEMORY + "- QA am Donnerstag (sources: [[orion-release#10:00]])\n")
    (vault_dir / "memory" / "orion-release.md").unlink()
    both = runner.invoke(cli, ["show", "orion-release"])
    assert both.exit_code == 1
    assert "2 curated bullets cite it as a source: M:decisions:orion-2-0-geht-am-freitag, M:decisions:qa-am-donnerstag" \
        in both.output


# -- search: nothing to search for -------------------------------------------------------------------

def test_search_with_no_words_is_a_usage_error_saying_nothing_was_searched_for(runner, vault_dir):
    plain_vault(vault_dir)
    for query, said in (("", "the query is empty"), ("   ", "the query is empty"),
                        ("?!", "the query '?!' has no words"), ("... --- ...", "the query '... --- ...' has no words"),
                        ("type:", "the query 'type:' has no words")):
        result = runner.invoke(cli, ["search", "--", query])
        assert result.exit_code == 2, (query, result.output)
        assert f"nothing to search for: {said}" in result.output, query
        assert "no matches" not in result.output
    # The library says the same to its other callers.
    from memvault.errors import InputError
    from memvault.search.index import search_vault

    with pytest.raises(InputError, match=r"^nothing to search for: the query '¿\?' has no words$"):
        search_vault(Vault.open(vault_dir), "¿?")
    # A filter alone or a word with punctuation still searches.
    assert "2026-02-21T09:00" in runner.invoke(cli, ["search", "tea?!"]).output
    assert "2026-02-21T09:00" in runner.invoke(cli, ["search", "type:belief"]).output


def test_a_query_of_only_common_words_is_searched_as_typed_and_says_so(runner, vault_dir):
    plain_vault(vault_dir)
    _log(vault_dir, "2026-02-22", "## 10:00 - Observation\nThe Who spielen in Leipzig, and the tickets are gone\n")
    result = runner.invoke(cli, ["search", "the of and"])
    assert result.exit_code == 0, result.output
    assert "2026-02-22T10:00" in result.stdout  # the words were searched for, as typed
    note = ("note: the query has only common words (the, of, and), which a search drops when it has other "
            "words; they were searched for as typed: add a word that says what you are looking for")
    assert note in result.stderr and note not in result.stdout
    nothing = runner.invoke(cli, ["search", "whom", "yourselves"])
    assert nothing.stdout == "no matches\n" and "common words (whom, yourselves)" in nothing.stderr
    # Not for a query with a real word, a quoted phrase, or under --json (stdout stays the hit list).
    assert "note:" not in runner.invoke(cli, ["search", "the tickets"]).stderr
    assert "note:" not in runner.invoke(cli, ["search", '"and the"']).stderr
    as_json = runner.invoke(cli, ["search", "the of and", "--json"])
    assert [d["id"] for d in json.loads(as_json.stdout)] == ["2026-02-22T10:00"] and "note:" not in as_json.stderr
