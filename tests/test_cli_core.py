"""init, log, show, list and check through the CLI; state checked through the library."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

from memvault.cli import cli
from memvault.vault import Vault
from memvault.write.log import log_entry

from .conftest import git


def test_init_creates_a_committed_vault_and_refuses_to_overwrite(runner, tmp_path):
    target = tmp_path / "v"
    result = runner.invoke(cli, ["init", str(target), "--timezone", "Europe/Berlin"])
    assert result.exit_code == 0, result.output
    for name in ("MEMORY.md", "memvault.toml", ".gitignore", "README.md", "memory"):
        assert (target / name).exists(), name
    assert ".memvault/" in (target / ".gitignore").read_text()
    assert "# Long-Term Memory" in (target / "MEMORY.md").read_text()
    assert Vault.open(target).config.timezone == "Europe/Berlin"
    assert git(target, "log", "--oneline").count("\n") == 1
    assert git(target, "status", "--porcelain") == ""
    again = runner.invoke(cli, ["init", str(target)])
    assert again.exit_code == 1 and "already holds a vault" in again.output


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


def test_list_and_show_json_shapes(runner, sample_vault):
    result = runner.invoke(cli, ["list", "--json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.output)
    assert "2026-02-14T14:30" not in {d["id"] for d in items}  # superseded
    keys = {"id", "type", "timestamp", "content", "confidence", "confidence_0", "supersedes",
            "superseded_by", "status", "tags", "file", "line"}
    assert all(keys <= d.keys() for d in items)
    every = json.loads(runner.invoke(cli, ["list", "--all", "--json"]).output)
    old = next(d for d in every if d["id"] == "2026-02-14T14:30")
    assert old["status"] == "superseded" and old["superseded_by"] == "2026-02-21T16:00"
    assert 0 < old["confidence"] < old["confidence_0"] == 0.8
    typed = json.loads(runner.invoke(cli, ["list", "--type", "decision", "--json"]).output)
    assert [d["id"] for d in typed] == ["2026-02-21T14:30"]
    window = json.loads(runner.invoke(cli, ["list", "--since", "2026-02-21", "--until", "2026-02-21", "--json"]).output)
    assert {d["id"] for d in window} == {"2026-02-21T09:15", "2026-02-21T14:30", "2026-02-21T16:00", "M:user-preferences:prefers-light-mode"}
    shown = json.loads(runner.invoke(cli, ["show", "2026-02-21 16:00", "--json"]).output)
    assert shown["supersedes"] == "2026-02-14T14:30"
    missing = runner.invoke(cli, ["show", "1999-01-01T00:00"])
    assert missing.exit_code == 1 and "no entry" in missing.output


def test_check_exit_status(runner, sample_vault):
    ok = runner.invoke(cli, ["check"])
    assert ok.exit_code == 0 and "0 errors" in ok.output
    (sample_vault / "memory" / "2026-02-22.md").write_text("# 2026-02-22\n\n## 25:61 - Belief\nbad\n")
    bad = runner.invoke(cli, ["check"])
    assert bad.exit_code == 1
    assert "memory/2026-02-22.md:3:1: MV004 error: invalid time" in bad.output


def test_discovery_walks_up_from_cwd(sample_vault, monkeypatch, runner):
    monkeypatch.delenv("MEMVAULT_VAULT")
    monkeypatch.chdir(sample_vault / "memory")
    result = runner.invoke(cli, ["list", "--json"])
    assert result.exit_code == 0 and json.loads(result.output)
    monkeypatch.chdir(sample_vault.parent)
    result = runner.invoke(cli, ["list"])
    assert result.exit_code == 1 and "no vault found" in result.output
    explicit = runner.invoke(cli, ["--vault", str(sample_vault), "list", "--json"])
    assert explicit.exit_code == 0


def test_python_dash_m_runs(sample_vault):
    proc = subprocess.run([sys.executable, "-m", "memvault", "list", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)


def test_demo_builds_a_committed_story_and_tours_it(runner, tmp_path):
    target = tmp_path / "demo"
    result = runner.invoke(cli, ["demo", str(target)])
    assert result.exit_code == 0, result.output
    vault = Vault.open(target)
    assert vault.problems == []
    superseded = [e for e in vault.events if vault.timeline.status(e) == "superseded"]
    assert sorted(e.type for e in superseded) == ["belief", "belief", "observation"]
    assert git(target, "log", "--format=%s").count("memvault: log") == 4
    assert "$ memvault list" in result.output and "$ memvault check" in result.output
    assert "Error" not in result.output


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


def test_log_expires(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-22 10:00", "--expires", "2026-03-01", "--json", "Office closed"])
    assert result.exit_code == 0, result.output
    vault = Vault.open(sample_vault)
    ev = vault.get(json.loads(result.output)["id"])
    assert ev.expires.isoformat() == "2026-03-01T00:00:00+01:00"
    from datetime import datetime
    from zoneinfo import ZoneInfo

    assert vault.timeline.status(ev, datetime(2026, 3, 1, tzinfo=ZoneInfo("Europe/Berlin"))) == "expired"


def test_init_inside_an_existing_repository_does_not_nest_one(runner, tmp_path):
    outer = tmp_path / "notes"
    outer.mkdir()
    git(outer, "init", "-q")
    (outer / "todo.txt").write_text("mine\n")
    git(outer, "add", "todo.txt")  # the person's own staged change stays staged
    result = runner.invoke(cli, ["init", str(outer / "vault"), "--no-hook"])
    assert result.exit_code == 0, result.output
    assert not (outer / "vault" / ".git").exists()
    committed = git(outer, "show", "--name-only", "--format=", "HEAD").split()
    assert "vault/memvault.toml" in committed and "todo.txt" not in committed
    assert "A  todo.txt" in git(outer, "status", "--porcelain")


def test_demo_without_git_fails_with_a_clear_error(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no git on PATH
    result = runner.invoke(cli, ["demo", str(tmp_path / "demo")])
    assert result.exit_code == 1
    assert "git is not installed or not on PATH" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_demo_without_a_directory_uses_a_new_temporary_one(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    first = runner.invoke(cli, ["demo"])
    second = runner.invoke(cli, ["demo"])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    made = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("memvault-demo-"))
    assert len(made) == 2


def test_log_refuses_to_supersede_a_later_entry(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-10 09:00", "--type", "correction",
                                 "--supersedes", "2026-02-14T14:30", "earlier"])
    assert result.exit_code == 2 and "which is later" in result.output
    assert not (sample_vault / "memory" / "2026-02-10.md").exists()


def test_a_command_closes_the_vault_it_opened_however_it_ends(runner, sample_vault):
    # history.py once closed time travel's caches by peeking into `vault.__dict__`; now every
    # command's vault is closed with its click context, on success and on failure alike.
    import click

    from memvault.cli._common import MemvaultGroup, open_vault
    from memvault.errors import InputError

    closed: list[str] = []

    @click.group(cls=MemvaultGroup)
    def group() -> None:
        pass

    @group.command()
    @click.argument("how")
    @click.pass_context
    def probe(ctx: click.Context, how: str) -> None:
        vault = open_vault(ctx)
        vault.on_close(lambda: closed.append(how))
        assert how not in closed  # still open while the command runs
        if how == "fails":
            raise InputError("bad input")

    for how, code in (("works", 0), ("fails", 2)):
        result = runner.invoke(group, ["probe", how], obj={"vault_path": str(sample_vault)})
        assert result.exit_code == code, result.output
    assert closed == ["works", "fails"]
