"""Regressions found by the second hands-on QA pass: each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

from memvault.cli import cli
from memvault.vault import Vault
from memvault.write import log as write

from .conftest import git


def _plain_vault(root: Path, zone: str = "UTC") -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "{zone}"\n')
    (root / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n")
    return root


def test_log_does_not_write_over_an_in_place_save_made_while_it_inserted(runner, vault_dir, monkeypatch):
    # A person's editor saving the daily log in place (it takes no memvault lock) between log's
    # read and its replace: log wrote its stale copy over the save, losing the person's edit (and
    # when it read the file mid-save, everything after the half that was written).
    _plain_vault(vault_dir)
    daily = vault_dir / "memory" / "2026-02-21.md"
    real_insert = write.insert_entry
    saves = []

    def insert_while_a_person_saves(old, event, rel, vault):
        result = real_insert(old, event, rel, vault)
        if not saves:  # the editor's in-place save lands now, once
            with open(daily, "r+", encoding="utf-8") as fh:
                text = fh.read().replace("User likes tea", "User likes green tea")
                fh.seek(0)
                fh.truncate()
                fh.write(text)
            saves.append(text)
        return result

    monkeypatch.setattr(write, "insert_entry", insert_while_a_person_saves)
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "agent note", "--json"])
    assert result.exit_code == 0, result.output
    contents = [e.content for e in Vault.open(vault_dir).events]
    assert contents == ["User likes green tea", "agent note"]


def test_log_leaves_no_trailing_whitespace_for_check_to_warn_about(runner, vault_dir):
    # `memvault log "text "` (or text piped in with trailing blanks) wrote lines that the next
    # `memvault check` flagged as MV104; a Markdown hard break and code keep their spaces.
    _plain_vault(vault_dir)
    text = "first line \nhard break  \nnext\t\n```\ncode  \n```\nlast  "
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "-"], input=text)
    assert result.exit_code == 0, result.output
    check = runner.invoke(cli, ["check", "--json"])
    assert check.exit_code == 0 and '"problems": []' in check.output, check.output
    content = Vault.open(vault_dir).get(result.output.strip()).content
    assert content == "first line\nhard break  \nnext\n```\ncode  \n```\nlast"


def test_check_fix_leaves_nothing_for_a_second_fix(runner, vault_dir):
    # Spaces at the end of an entry's last line, right before the next entry's heading, were taken
    # for a Markdown hard break: not reported; once --fix put the entries in time order the line
    # came last and a second `check` warned MV104.
    _plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-20.md").write_text(
        "# 2026-02-20\n\n## 10:00 - Belief\nfoo tea   \n## 09:00 - Observation\nbar coffee\n")
    first = runner.invoke(cli, ["check", "--json"])
    assert '"MV104"' in first.output and '"MV015"' in first.output, first.output
    runner.invoke(cli, ["check", "--fix"])
    again = runner.invoke(cli, ["check", "--json"])
    assert again.exit_code == 0 and '"problems": []' in again.output, again.output
    assert [e.content for e in Vault.open(vault_dir).events if e.file.endswith("20.md")] == ["bar coffee", "foo tea"]


def test_check_accepts_the_id_aliased_source_links_curate_writes(runner, vault_dir):
    # Two corrections logged in the same second share a heading; curate links each with its id as
    # the alias (`[[2026-02-21#10:00:05 - Correction|2026-02-21T10:00-2]]`), and the next `check`
    # warned MV402 "ambiguous" on its own output because the parser keeps only the link's target.
    _plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-22.md").write_text(
        "# 2026-02-22\n\n## 10:00:05 - Correction\nWeekly updates move to Monday mornings\n\n"
        "## 10:00:05 - Correction\nDeploys happen only on Tuesdays now\n")
    (vault_dir / "MEMORY.md").write_text("# Long-Term Memory\n\n## Notes\n")
    applied = runner.invoke(cli, ["curate", "--yes", "--at", "2026-02-23", "--json"])
    assert applied.exit_code == 0, applied.output
    memory = (vault_dir / "MEMORY.md").read_text()
    assert "|2026-02-22T10:00-2]]" in memory, memory
    check = runner.invoke(cli, ["check", "--json"])
    assert '"problems": []' in check.output, check.output
    # an alias that is no entry's id does not hide the ambiguity
    (vault_dir / "MEMORY.md").write_text(memory.replace("|2026-02-22T10:00-2]]", "|nope]]"))
    assert '"MV402"' in runner.invoke(cli, ["check", "--json"]).output


def test_log_at_a_time_the_clock_skips_writes_the_instant_it_stands_for(runner, vault_dir):
    # New York skips 02:00-03:00 on 2026-03-08: `log --at "2026-03-08 02:30"` wrote a "## 02:30"
    # heading, a time that never happened, printed in JSON as 02:30-05:00 (which is 03:30 EDT).
    _plain_vault(vault_dir, "America/New_York")
    result = runner.invoke(cli, ["log", "--at", "2026-03-08 02:30", "skipped hour"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "2026-03-08T03:30"
    assert "## 03:30 - Observation" in (vault_dir / "memory" / "2026-03-08.md").read_text()
    ev = Vault.open(vault_dir).get("2026-03-08T03:30")
    assert ev.timestamp.isoformat() == "2026-03-08T03:30:00-04:00"
    assert ev.timestamp.utcoffset().total_seconds() == -4 * 3600


def test_a_temp_file_left_by_a_killed_write_is_ignored_by_git(runner, tmp_path):
    # kill -9 during `memvault log` (or curate, check --fix) can leave `.DATE.md.XXXX.mvtmp` next
    # to the daily log: it showed up in `git status` and went in with the next `git add -A`.
    target = tmp_path / "v"
    assert runner.invoke(cli, ["init", str(target)]).exit_code == 0
    (target / "memory" / ".2026-02-21.md.k3j2h1.mvtmp").write_text("# 2026-02-21\n\n## 09:00 - Bel")
    (target / ".MEMORY.md.abc123.mvtmp").write_text("# Long-Term")
    assert git(target, "status", "--porcelain", "--untracked-files=all").strip() == ""


def test_check_fix_does_not_write_over_an_in_place_save_made_while_it_fixed(runner, vault_dir, monkeypatch):
    # Like log: `check --fix` read a daily log, fixed it, and replaced it with its fixed copy even
    # when an editor had saved the file in place meanwhile, losing that save.
    from memvault.check import fixes

    _plain_vault(vault_dir)
    daily = vault_dir / "memory" / "2026-02-21.md"
    daily.write_text("# 2026-02-21\n## 09:00 -  Belief\nUser likes tea\n")
    real_fix = fixes.fix_source
    saves = []

    def fix_while_a_person_saves(src, config):
        result = real_fix(src, config)
        if not saves and src.path.endswith("21.md"):
            with open(daily, "r+", encoding="utf-8") as fh:
                text = fh.read().replace("User likes tea", "User likes green tea")
                fh.seek(0)
                fh.truncate()
                fh.write(text)
            saves.append(text)
        return result

    monkeypatch.setattr(fixes, "fix_source", fix_while_a_person_saves)
    result = runner.invoke(cli, ["check", "--fix", "--json"])
    assert result.exit_code == 0, result.output
    assert daily.read_text() == "# 2026-02-21\n\n## 09:00 - Belief\nUser likes green tea\n"
    assert '"memory/2026-02-21.md"' in result.output  # reported as fixed: the second try was


def test_log_json_names_the_ids_a_description_or_link_resolved_to(runner, vault_dir):
    # An agent passing `--supersedes "belief about tea"` (or a [[link]]) got back only the new id,
    # file and line: which entry it had superseded took another `show`.
    _plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n\n## 09:30 - Observation\nDeploys on Friday\n")
    result = runner.invoke(cli, ["log", "--type", "correction", "--at", "2026-02-21 10:00", "--json",
                                 "--supersedes", "belief about tea", "--reconfirms", "[[2026-02-21#09:30]]",
                                 "User likes coffee, not tea"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["supersedes"] == "2026-02-21T09:00" and data["reconfirms"] == ["2026-02-21T09:30"]
    assert data["timestamp"] == "2026-02-21T10:00:00+00:00"
    vault = Vault.open(vault_dir)
    assert vault.as_dict(vault.get(data["id"]))["supersedes"] == data["supersedes"]
    assert (data["file"], data["line"], data["end_line"]) == ("memory/2026-02-21.md", 9, 12)


def test_entry_json_shows_reconfirmations_both_ways(runner, vault_dir):
    # A reconfirmation resets an entry's decay, but the JSON shape had no trace of it: neither the
    # reconfirming entry's targets nor the reconfirmed entry's reconfirmers.
    _plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-22.md").write_text(
        "# 2026-02-22\n\n## 10:00 - Observation\nStill likes tea\nReconfirms: [[2026-02-21#09:00]]\n")
    shown = json.loads(runner.invoke(cli, ["show", "2026-02-22T10:00", "--json"]).output)
    assert shown["reconfirms"] == ["2026-02-21T09:00"]
    assert shown["reconfirms_ref"] == ["[[2026-02-21#09:00]]"]
    old = json.loads(runner.invoke(cli, ["show", "2026-02-21T09:00", "--json"]).output)
    assert old["reconfirmed_by"] == ["2026-02-22T10:00"] and old["reconfirms"] == []
    before = json.loads(runner.invoke(cli, ["asof", "2026-02-21 12:00", "--json"]).output)
    assert [e["reconfirmed_by"] for e in before] == [[]]  # not yet reconfirmed then
