"""`memvault log` and the library's `log_entry`: where an entry goes, what it reads back as, and
what is refused (concurrent saves by other programs: test_write_lossless.py)."""

from __future__ import annotations

import json
import multiprocessing

from memvault.cli import cli
from memvault.vault import Vault
from memvault.write.log import log_entry

from .conftest import plain_vault

# ----------------------------------------------------------------- where an entry goes


def test_log_appends_in_time_order_and_prints_the_id(runner, vault_dir):
    runner.invoke(cli, ["init", str(vault_dir), "--no-git", "--timezone", "UTC"])
    ids = []
    for when, text in [("2026-02-21 14:30", "second"), ("2026-02-21 09:15", "first"), ("2026-02-21 14:30", "third")]:
        result = runner.invoke(cli, ["log", "--at", when, "--type", "belief", text])
        assert result.exit_code == 0, result.output
        ids.append(result.output.strip())
    assert ids == ["2026-02-21T14:30", "2026-02-21T09:15", "2026-02-21T14:30-2"]
    vault = Vault.open(vault_dir)
    assert [e.content for e in vault.events] == ["first", "second", "third"]
    text = (vault_dir / "memory" / "2026-02-21.md").read_text()
    assert text.startswith("# 2026-02-21\n\n## 09:15 - Belief\nfirst\n\n## 14:30 - Belief\nsecond\n")


def _log_many(args):
    root, worker = args
    vault = Vault.open(root)
    from datetime import datetime
    from zoneinfo import ZoneInfo

    for i in range(15):
        log_entry(vault, f"worker {worker} entry {i}", at=datetime(2026, 3, 1, 10, i, tzinfo=ZoneInfo("UTC")))


def test_concurrent_loggers_lose_nothing(vault_dir):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        pool.map(_log_many, [(str(vault_dir), w) for w in range(4)])
    contents = {e.content for e in Vault.open(vault_dir).events}
    assert contents == {f"worker {w} entry {i}" for w in range(4) for i in range(15)}


def test_new_daily_logs_follow_the_vault_layout():
    from memvault.parsed import new_log_path

    assert new_log_path("2026-03-05", None) == "memory/2026-03-05.md"
    assert new_log_path("2026-03-05", "memory/2026-03-04.md") == "memory/2026-03-05.md"
    assert new_log_path("2027-01-01", "memory/2026/2026-12-31.md") == "memory/2027/2027-01-01.md"
    assert new_log_path("2026-04-01", "memory/2026/03/2026-03-31.md") == "memory/2026/04/2026-04-01.md"
    assert new_log_path("2026-04-01", "memory/notes/2026-03-31.md") == "memory/2026-04-01.md"


def test_log_into_a_nested_layout(runner, vault_dir):
    from .conftest import copy_vault

    copy_vault("obsidian", vault_dir)
    result = runner.invoke(cli, ["log", "--at", "2026-04-02 09:00", "nested"])
    assert result.exit_code == 0, result.output
    assert (vault_dir / "memory" / "2026" / "04" / "2026-04-02.md").is_file()


def test_log_never_renumbers_an_existing_entry_of_the_same_minute(runner, vault_dir):
    # `log --at 10:00:30` went in front of "## 10:00:45", which became …T10:00-2: the correction's
    # `Supersedes: …T10:00` then pointed at the new entry and the original belief came back live.
    plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-20.md").write_text(
        "# 2026-02-20\n\n## 10:00:45 - Belief\nThe original belief\n\n"
        "## 11:00 - Correction\nCorrects it\nSupersedes: 2026-02-20T10:00\n")
    result = runner.invoke(cli, ["log", "--at", "2026-02-20 10:00:30", "logged later"])
    assert result.exit_code == 0 and result.output.strip() == "2026-02-20T10:00-2"
    vault = Vault.open(vault_dir)
    assert vault.get("2026-02-20T10:00").content == "The original belief"
    assert vault.as_dict(vault.get("2026-02-20T10:00"))["superseded_by"] == "2026-02-20T11:00"
    assert vault.get("2026-02-20T10:00-2").content == "logged later"
    early = runner.invoke(cli, ["log", "--at", "2026-02-20 09:59:59", "just before"])
    assert early.output.strip() == "2026-02-20T09:59"
    in_file = sorted((e for e in Vault.open(vault_dir).events if e.file.endswith("20.md")), key=lambda e: e.line)
    assert [e.content for e in in_file] == ["just before", "The original belief", "logged later", "Corrects it"]


def test_log_at_a_time_the_clock_skips_is_refused_and_the_instant_it_stands_for_is_written(runner, vault_dir):
    # New York skips 02:00-03:00 on 2026-03-08: `log --at "2026-03-08 02:30"` once wrote a "## 02:30"
    # heading, a time that never happened, then silently "## 03:30": now it is refused, naming the
    # gap (tests/test_first_use_fixa.py), and an instant given with its offset is written as itself.
    plain_vault(vault_dir, "America/New_York")
    result = runner.invoke(cli, ["log", "--at", "2026-03-08 02:30", "skipped hour"])
    assert result.exit_code == 2 and "from 02:00 straight to 03:00" in result.output
    assert not (vault_dir / "memory" / "2026-03-08.md").exists()
    result = runner.invoke(cli, ["log", "--at", "2026-03-08T02:30-05:00", "skipped hour"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "2026-03-08T03:30"
    assert "## 03:30 - Observation" in (vault_dir / "memory" / "2026-03-08.md").read_text()
    ev = Vault.open(vault_dir).get("2026-03-08T03:30")
    assert ev.timestamp.isoformat() == "2026-03-08T03:30:00-04:00"
    assert ev.timestamp.utcoffset().total_seconds() == -4 * 3600


def test_log_keeps_a_files_crlf_and_bom_and_refuses_to_mangle_bad_utf8(runner, vault_dir):
    # Logging into a CRLF file (Notepad) rewrote every line to LF; a BOM was dropped; invalid
    # UTF-8 bytes elsewhere in the file were silently replaced with U+FFFD.
    plain_vault(vault_dir)
    crlf = vault_dir / "memory" / "2026-02-20.md"
    crlf.write_bytes(b"\xef\xbb\xbf# 2026-02-20\r\n\r\n## 08:00 - Observation\r\nFrom Notepad\r\n")
    for at in ("2026-02-20 09:00", "2026-02-20 07:00"):  # appended, then inserted before
        assert runner.invoke(cli, ["log", "--at", at, "logged"]).exit_code == 0
    raw = crlf.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# 2026-02-20\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    assert [e.timestamp.hour for e in Vault.open(vault_dir).events if e.file.endswith("20.md")] == [7, 8, 9]
    bad = vault_dir / "memory" / "2026-02-19.md"
    bad.write_bytes(b"# 2026-02-19\n\n## 08:00 - Observation\nbad \xff byte\n")
    result = runner.invoke(cli, ["log", "--at", "2026-02-19 09:00", "more"])
    assert result.exit_code == 1 and "memory/2026-02-19.md:4: invalid UTF-8" in result.output
    assert bad.read_bytes() == b"# 2026-02-19\n\n## 08:00 - Observation\nbad \xff byte\n"


# ----------------------------------------------------------------- what it writes and prints


def test_log_with_metadata_and_supersedes(runner, sample_vault):
    result = runner.invoke(cli, [
        "log", "--at", "2026-02-22 10:00", "--type", "correction", "--supersedes",
        "belief about dark mode from 2026-02-14", "--confidence", "0.9", "--tags", "ui,prefs",
        "--source", "user", "--importance", "high", "--json", "Prefers light mode",
    ])
    assert result.exit_code == 0, result.output
    new_id = json.loads(result.output)["id"]
    vault = Vault.open(sample_vault)
    ev = vault.get(new_id)
    assert (ev.confidence0, ev.tags, ev.source, ev.importance) == (0.9, ("ui", "prefs"), "user", 0.9)
    assert vault.as_dict(vault.get("2026-02-14T15:00"))["superseded_by"] == new_id


def test_log_pins_a_described_reference_to_the_id_it_resolves_to(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-22 10:00", "--type", "correction",
                                 "--supersedes", "belief about dark mode from 2026-02-14", "light mode now"])
    assert result.exit_code == 0, result.output
    text = (sample_vault / "memory" / "2026-02-22.md").read_text()
    assert "Supersedes: 2026-02-14T15:00" in text
    linked = runner.invoke(cli, ["log", "--at", "2026-02-22 11:00", "--type", "correction",
                                 "--supersedes", "[[2026-02-14#10:00 - Observation]]", "not colours"])
    assert linked.exit_code == 0, linked.output
    assert "Supersedes: [[2026-02-14#10:00 - Observation]]" in (sample_vault / "memory" / "2026-02-22.md").read_text()


def test_log_expires(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-22 10:00", "--expires", "2026-03-01", "--json", "Office closed"])
    assert result.exit_code == 0, result.output
    vault = Vault.open(sample_vault)
    ev = vault.get(json.loads(result.output)["id"])
    assert ev.expires.isoformat() == "2026-03-01T00:00:00+01:00"
    from datetime import datetime
    from zoneinfo import ZoneInfo

    assert vault.timeline.status(ev, datetime(2026, 3, 1, tzinfo=ZoneInfo("Europe/Berlin"))) == "expired"


def test_log_json_names_the_ids_a_description_or_link_resolved_to(runner, vault_dir):
    # An agent passing `--supersedes "belief about tea"` (or a [[link]]) got back only the new id,
    # file and line: which entry it had superseded took another `show`.
    plain_vault(vault_dir)
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


def test_log_leaves_no_trailing_whitespace_for_check_to_warn_about(runner, vault_dir):
    # `memvault log "text "` (or text piped in with trailing blanks) wrote lines that the next
    # `memvault check` flagged as MV104; a Markdown hard break and code keep their spaces.
    plain_vault(vault_dir)
    text = "first line \nhard break  \nnext\t\n```\ncode  \n```\nlast  "
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "-"], input=text)
    assert result.exit_code == 0, result.output
    check = runner.invoke(cli, ["check", "--json"])
    assert check.exit_code == 0 and '"problems": []' in check.output, check.output
    content = Vault.open(vault_dir).get(result.output.strip()).content
    assert content == "first line\nhard break  \nnext\n```\ncode  \n```\nlast"


def test_log_dash_reads_the_text_from_stdin(runner, vault_dir):
    # `memvault log -` logged an entry whose whole text was "-".
    plain_vault(vault_dir)
    text = "Meeting notes:\n\n- Alice owns the API\n- ship on Tuesday\n"
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "-"], input=text)
    assert result.exit_code == 0, result.output
    assert Vault.open(vault_dir).get(result.output.strip()).content == text.strip()
    empty = runner.invoke(cli, ["log", "-"], input="")
    assert empty.exit_code == 2 and "empty" in empty.output


# ----------------------------------------------------------------- what it refuses


def test_log_refuses_bad_input_with_exit_2(runner, sample_vault):
    cases = [
        (["log", "--type", "feeling", "x"], "unknown type"),
        (["log", "--at", "next blursday", "x"], "cannot read the time"),
        (["log", "--supersedes", "belief from 2026-02-14", "x"], "ambiguous"),
        (["log", "## 09:00 - Belief"], "heading"),
        (["log", "password=" + "hunter2hunter2"], "secret"),
        (["log", "--importance", "urgent", "x"], "--importance 'urgent': use high, medium, low or a number 0-1"),
    ]
    before = sorted(p.name for p in (sample_vault / "memory").iterdir())
    for args, fragment in cases:
        result = runner.invoke(cli, args)
        assert result.exit_code in (1, 2), (args, result.output)
        assert fragment in result.output, (args, result.output)
    assert sorted(p.name for p in (sample_vault / "memory").iterdir()) == before


def test_log_refuses_to_supersede_a_later_entry(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-10 09:00", "--type", "correction",
                                 "--supersedes", "2026-02-14T14:30", "earlier"])
    assert result.exit_code == 1 and "which is later" in result.output
    assert not (sample_vault / "memory" / "2026-02-10.md").exists()


def test_log_refuses_an_explicit_id_that_check_would_reject(runner, vault_dir):
    # `log --id D1` twice wrote a duplicate id (MV010); `--id "a b"` and `--id ""` wrote ids
    # that MV207/MV205 reject, and printed a different id than the one asked for.
    plain_vault(vault_dir)
    assert runner.invoke(cli, ["log", "--id", "D1", "--at", "2026-02-21 10:00", "first"]).exit_code == 0
    # an id already used is refused (1); one that is not an id is a usage error (2)
    for bad, status in (("D1", 1), ("2026-02-21T09:00", 1), ("a b", 2), ("", 2)):
        result = runner.invoke(cli, ["log", "--id", bad, "--at", "2026-02-21 11:00", "second"])
        assert result.exit_code == status, (bad, result.output)
    dup = runner.invoke(cli, ["log", "--id", "D1", "again"])
    assert "already used by memory/2026-02-21.md:6" in dup.output
    vault = Vault.open(vault_dir)
    assert [e.id for e in vault.events] == ["2026-02-21T09:00", "D1"]
    assert vault.problems == []


def test_log_refuses_text_whose_last_line_would_turn_into_metadata(runner, vault_dir):
    # "multi\nline\nTags: fake" was logged as the text "multi\nline" with the tag "fake".
    plain_vault(vault_dir)
    before = (vault_dir / "memory" / "2026-02-21.md").read_text()
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "Deploy notes\nTags: fake"])
    assert result.exit_code == 2 and "--tags" in result.output
    assert (vault_dir / "memory" / "2026-02-21.md").read_text() == before
    ok = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "Ratio is 3:1\nNote: tags: later"])
    assert ok.exit_code == 0, ok.output
    assert Vault.open(vault_dir).get(ok.output.strip()).content == "Ratio is 3:1\nNote: tags: later"


def test_log_entry_reads_importance_as_the_command_line_gives_it(sample_vault):
    # `--importance high` was read in the CLI; the library takes the same words and numbers.
    import pytest

    from memvault.errors import InputError

    vault = Vault.open(sample_vault)
    ev = log_entry(vault, "Prefers short answers", importance="medium")
    assert ev.importance == 0.5 and Vault.open(sample_vault).get(ev.id).importance == 0.5
    assert log_entry(vault, "Also terse commit messages", importance=0.3).importance == 0.3
    with pytest.raises(InputError, match="use high, medium, low or a number 0-1"):
        log_entry(vault, "never written", importance="urgent")
    assert "never written" not in {e.content for e in Vault.open(sample_vault).events}
