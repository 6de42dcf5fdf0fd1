"""init, list, show, check, demo and what every command shares (errors, usage, finding the vault)
through the CLI; state checked through the library. `log` is in test_write.py."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memvault.cli import cli
from memvault.vault import Vault

from .conftest import git, plain_vault


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


def test_an_os_error_is_a_message_naming_the_path_not_a_traceback(runner, vault_dir):
    # A folder where a lock file belongs (or a read-only disk): log and search used to print a
    # traceback. (A *file* where `.memvault` belongs is derived state gone wrong: it is healed,
    # tests/test_derived_heal.py.)
    plain_vault(vault_dir)
    (vault_dir / ".memvault" / "write.lock").mkdir(parents=True)
    (vault_dir / ".memvault" / "index" / "write.lock").mkdir(parents=True)
    for args, lock in ((["log", "hello there"], ".memvault/write.lock"), (["search", "tea"], ".memvault/index/write.lock")):
        result = runner.invoke(cli, args)
        assert result.exit_code == 1, (args, result.output)
        assert isinstance(result.exception, SystemExit), (args, result.exception)  # not an OSError
        assert str(vault_dir / lock) in result.output, (args, result.output)
    assert [e.content for e in Vault.open(vault_dir).events] == ["User likes tea"]


def test_a_usage_error_from_the_library_shows_the_commands_own_usage(runner, vault_dir):
    plain_vault(vault_dir)
    result = runner.invoke(cli, ["log", "--at", "next blursday", "hello"], prog_name="memvault")
    assert result.exit_code == 2
    assert "Usage: memvault log [OPTIONS] TEXT..." in result.output
    assert "Try 'memvault log --help'" in result.output
    hook = runner.invoke(cli, ["hook", "install", "--help"], prog_name="memvault")
    assert hook.exit_code == 0 and "Usage: memvault hook install" in hook.output


def _future_vault(root: Path) -> tuple[str, str, str]:
    """A belief from yesterday, a correction of it dated tomorrow, and a plain entry for tomorrow."""
    now = datetime.now(UTC)
    past, future = (now - timedelta(days=1)).date(), (now + timedelta(days=1)).date()
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory" / f"{past}.md").write_text(f"# {past}\n\n## 09:00 - Belief\nStandup is at nine\n")
    (root / "memory" / f"{future}.md").write_text(
        f"# {future}\n\n## 09:00 - Correction\nStandup moves to ten\nSupersedes: {past}T09:00\n"
        "Importance: high\n")
    return f"{past}T09:00", f"{future}T09:00", "Standup moves to ten"


def test_list_and_show_judge_live_as_of_now_like_search_and_asof(runner, vault_dir):
    # `list` showed a future-dated entry as live (and the entry it will supersede as superseded),
    # while `search` and `asof now` said the opposite.
    belief, correction, _ = _future_vault(vault_dir)
    listed = json.loads(runner.invoke(cli, ["list", "--json"]).output)
    assert [(d["id"], d["status"], d["superseded_by"]) for d in listed] == [(belief, "live", None)]
    asof_now = json.loads(runner.invoke(cli, ["asof", "now", "--json"]).output)
    assert [d["id"] for d in asof_now] == [d["id"] for d in listed]
    everything = json.loads(runner.invoke(cli, ["list", "--all", "--json"]).output)
    assert {d["id"]: d["status"] for d in everything} == {belief: "live", correction: "future"}
    shown = json.loads(runner.invoke(cli, ["show", correction, "--json"]).output)
    assert shown["status"] == "future"
    text = runner.invoke(cli, ["show", correction]).output
    assert "[future]" in text and "importance 0.9" in text
    vault = Vault.open(vault_dir)
    assert vault.timeline.status(vault.get(belief), vault.now()) == "live"


def test_list_names_the_known_types_when_given_an_unknown_one(runner, vault_dir):
    plain_vault(vault_dir)
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(day.read_text() + "\n## 10:00 - Feeling\nKept though unknown\n")
    result = runner.invoke(cli, ["list", "--type", "beliefs"])
    assert result.exit_code == 2
    assert "no such type; known: belief, correction, decision, feeling, note, observation" in result.output
    found = json.loads(runner.invoke(cli, ["list", "--type", "Belief", "--type", "feeling", "--json"]).output)
    assert [d["type"] for d in found] == ["belief", "feeling"]


def test_entry_json_shows_reconfirmations_both_ways(runner, vault_dir):
    # A reconfirmation resets an entry's decay, but the JSON shape had no trace of it: neither the
    # reconfirming entry's targets nor the reconfirmed entry's reconfirmers.
    plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-22.md").write_text(
        "# 2026-02-22\n\n## 10:00 - Observation\nStill likes tea\nReconfirms: [[2026-02-21#09:00]]\n")
    shown = json.loads(runner.invoke(cli, ["show", "2026-02-22T10:00", "--json"]).output)
    assert shown["reconfirms"] == ["2026-02-21T09:00"]
    assert shown["reconfirms_ref"] == ["[[2026-02-21#09:00]]"]
    old = json.loads(runner.invoke(cli, ["show", "2026-02-21T09:00", "--json"]).output)
    assert old["reconfirmed_by"] == ["2026-02-22T10:00"] and old["reconfirms"] == []
    before = json.loads(runner.invoke(cli, ["asof", "2026-02-21 12:00", "--json"]).output)
    assert [e["reconfirmed_by"] for e in before] == [[]]  # not yet reconfirmed then
