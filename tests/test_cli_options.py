"""Issue 14, "Options and output": the options every command shares, JSON errors, exit statuses.

The walk over the click group is the acceptance test: a command added later without the shared
options, or with an error that is not JSON under --json, fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from memvault.cli import cli
from memvault.vault import Vault
from tests.conftest import plain_vault

NO_VAULT = {"init", "adopt", "demo"}  # they take a DIRECTORY, not --vault
NO_JSON = {"init", "demo"}
LIMITED = {"search", "asof", "list", "changes"}  # the commands that print a list of entries take -n/--limit
WINDOWED = {"list", "search", "changes", "curate"}  # --since/--until, one check for a reversed window

# The least each command needs to get as far as opening its vault; a new command must be added.
ARGS: dict[str, list[str]] = {
    "adopt": [], "asof": ["now"], "context": [], "changes": ["--since", "yesterday"], "check": [], "curate": ["--dry-run"],
    "demo": [], "diff": ["2026-01-01", "2026-02-01"], "history": ["2026-02-14T14:30"], "hook install": [],
    "hook status": [], "index": [], "init": [], "list": [], "log": ["Tee ist gut"], "mcp": [], "search": ["tea"], "serve": [],
    "maintain": ["--dry-run"], "review": [], "review-queue": [], "show": ["2026-02-14T14:30"], "status": [], "watch": [],
}
ARGS["ingest"] = ["chat.txt", "--dry-run"]
ARGS.update({"export": ["--format", "agent-memory"], "import": ["memory.jsonl"]})  # issue 17: interop
ARGS["sync"] = []  # issue 19


def walk(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    for name, command in sorted(group.commands.items()):
        if command.hidden:  # `merge-driver`: git runs it, with git's arguments, not a person
            continue
        if isinstance(command, click.Group):
            yield from walk(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def help_text(runner, name: str) -> str:
    result = runner.invoke(cli, [*name.split(), "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def options(command: click.Command) -> set[str]:
    return {opt for p in command.params if isinstance(p, click.Option) for opt in (*p.opts, *p.secondary_opts)}


def test_the_table_of_commands_here_is_every_command():
    assert sorted(ARGS) == sorted(name for name, _ in walk())


@pytest.mark.parametrize("name", sorted(ARGS))
def test_every_command_takes_the_shared_options_where_they_apply(runner, name: str):
    command = dict(walk())[name]
    text = help_text(runner, name)
    opts = options(command)
    assert ("--vault" in text) == (name not in NO_VAULT), text
    assert ("--json" in opts) == (name not in NO_JSON), opts
    # one spelling per meaning: a limit is -n/--limit, a window of time is --since and --until
    assert ("-n" in opts) == ("--limit" in opts), opts
    if "--limit" in opts:
        assert "-n, --limit" in text or "--limit, -n" in text
    assert ("--since" in opts) == ("--until" in opts), opts


def test_the_limits_and_windows_are_where_the_docs_say(runner):
    commands = dict(walk())
    assert {n for n, c in commands.items() if "--limit" in options(c)} == LIMITED
    assert {n for n, c in commands.items() if "--since" in options(c)} == WINDOWED


@pytest.mark.parametrize("name", sorted(set(ARGS) - NO_VAULT))
def test_vault_goes_after_the_subcommand_and_its_arguments(runner, tmp_path, monkeypatch, name: str):
    # `memvault list --vault X` said "No such option '--vault'. Did you mean '--all'?". A vault
    # that is not there proves the option was read: that is the error, in JSON with --json.
    monkeypatch.delenv("MEMVAULT_VAULT")
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "nirgendwo")
    result = runner.invoke(cli, [*name.split(), *ARGS[name], "--vault", missing, "--json"])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "vault_missing" and missing in error["message"], error


@pytest.mark.parametrize("name", sorted(set(ARGS) - NO_VAULT))
def test_json_before_the_subcommand_is_the_same_as_after(runner, tmp_path, monkeypatch, name: str):
    monkeypatch.delenv("MEMVAULT_VAULT")
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "nirgendwo")
    result = runner.invoke(cli, ["--json", *name.split(), *ARGS[name], "--vault", missing])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stderr)["error"]["code"] == "vault_missing"


def test_json_before_the_subcommand_gives_json_output(runner, sample_vault):
    first = runner.invoke(cli, ["--json", "list"])
    # Confidence decays between the two calls; everything else must be the same.
    def steady(out: str) -> list[dict]:
        return [{k: v for k, v in d.items() if k not in ("confidence", "retention")} for d in json.loads(out)]
    assert first.exit_code == 0 and steady(first.stdout) == steady(runner.invoke(cli, ["list", "--json"]).stdout)
    assert json.loads(runner.invoke(cli, ["--json", "show", "2026-02-14T14:30"]).stdout)["id"] == "2026-02-14T14:30"
    for name in sorted(NO_JSON):  # a command without --json says so, in JSON, and does nothing
        result = runner.invoke(cli, ["--json", name, str(sample_vault / "neu")])
        assert result.exit_code == 2 and "has no --json" in json.loads(result.stderr)["error"]["message"]
        assert not (sample_vault / "neu").exists()


def test_vault_after_the_subcommand_reads_that_vault(runner, tmp_path, monkeypatch):
    here, there = plain_vault(tmp_path / "here"), plain_vault(tmp_path / "Ordner mit Ümlaut")
    (there / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser trinkt lieber Kaffee\n")
    monkeypatch.setenv("MEMVAULT_VAULT", str(here))
    assert "tea" in runner.invoke(cli, ["list"]).output  # $MEMVAULT_VAULT is still honoured
    listed = runner.invoke(cli, ["list", "--vault", str(there)])
    assert listed.exit_code == 0 and "Kaffee" in listed.output and "tea" not in listed.output
    found = runner.invoke(cli, ["search", "Kaffee", "--vault", str(there), "--json"])
    assert found.exit_code == 0 and [h["content"] for h in json.loads(found.stdout)] == ["User trinkt lieber Kaffee"]
    # after the subcommand wins over before it (and over the environment)
    both = runner.invoke(cli, ["--vault", str(here), "list", "--json", "--vault", str(there)])
    assert [d["content"] for d in json.loads(both.stdout)] == ["User trinkt lieber Kaffee"]
    logged = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "Milch", "--vault", str(there)])
    assert logged.exit_code == 0, logged.output
    assert [e.content for e in Vault.open(there).events][-1] == "Milch"
    assert [e.content for e in Vault.open(here).events] == ["User likes tea"]
    hook = runner.invoke(cli, ["hook", "status", "--vault", str(there), "--json"])  # a sub-group's command
    assert hook.exit_code == 1 and json.loads(hook.stderr)["error"]["code"] == "git"  # `there` has no git
    assert str(there) in json.loads(hook.stderr)["error"]["message"]


def test_asof_takes_n_like_search(runner, sample_vault):
    short = runner.invoke(cli, ["asof", "now", "-n", "2", "--json"])
    assert short.exit_code == 0, short.output
    assert len(json.loads(short.stdout)) == 2
    assert len(json.loads(runner.invoke(cli, ["asof", "now", "--json"]).stdout)) > 2


def test_curate_until_is_its_at(runner, sample_vault):
    by_at = runner.invoke(cli, ["curate", "--json", "--at", "2026-02-16"])
    by_until = runner.invoke(cli, ["curate", "--json", "--until", "2026-02-16"])
    assert by_at.exit_code == by_until.exit_code == 0, by_at.output
    assert json.loads(by_at.stdout) == json.loads(by_until.stdout)


# ---------------------------------------------------------------------------- errors


def failing(vault: Path) -> list[tuple[list[str], str, int]]:
    """(command line, code, exit status): at least one per command, and every kind of error."""
    cases: list[tuple[list[str], str, int]] = [
        ([*name.split(), *ARGS[name], "--bogus"], "usage", 2) for name in ARGS]
    cases += [
        (["show", "2026-02-99T99:99"], "not_found", 1),
        (["show", "2026-02-1"], "ambiguous", 1),
        (["history", "no-such-entry"], "not_found", 1),
        (["log", "--supersedes", "belief from 2026-02-14", "Korrektur"], "ambiguous", 1),
        (["log", "--supersedes", "something nobody wrote", "Korrektur"], "not_found", 1),
        (["log", "--at", "2026-02-10 09:00", "--supersedes", "2026-02-14T14:30", "earlier"], "refused", 1),
        (["log", "password=" + "hunter2hunter2"], "secret", 1),
        (["log", "--type", "feeling", "müde"], "usage", 2),
        (["log", "--at", "next blursday", "x"], "usage", 2),
        (["log"], "usage", 2),
        (["search", "tea", "--backend", "bogus"], "usage", 2),
        (["search", "tea", "-n", "0"], "usage", 2),
        (["asof", "not-a-revision~~"], "usage", 2),
        (["changes"], "usage", 2),
        (["diff", "2026-01-01"], "usage", 2),
        (["curate", "--dry-run", "--yes"], "usage", 2),
        (["index", "--wait", "--rebuild"], "usage", 2),
        (["hook", "uninstall"], "usage", 2),
        (["init", str(vault)], "refused", 1),
        (["adopt", str(vault)], "refused", 1),
        (["watch", "--debounce", "nan"], "usage", 2),
        (["list", "--since", "2026-02-21", "--until", "2026-02-14"], "usage", 2),
        (["changes", "--since", "2026-02-21", "--until", "2026-02-14"], "usage", 2),
        (["show", ""], "usage", 2),
        (["list", "--vault", "--all"], "usage", 2),
    ]
    return cases


def test_every_error_under_json_is_json_on_stderr_with_the_same_exit_status(runner, sample_vault):
    for args, code, status in failing(sample_vault):
        text = runner.invoke(cli, args)
        assert text.exit_code == status, (args, text.output)
        # as text: the usage banner exactly for usage errors (an ambiguous reference had one, exit 2)
        assert text.stderr.startswith("Usage:") == (status == 2) and "Error: " in text.stderr, (args, text.stderr)
        as_json = runner.invoke(cli, [*args, "--json"])
        if args[0] in NO_JSON:  # --json is not one of their options: that is the (JSON) error
            code, status = "usage", 2
        assert as_json.exit_code == status, (args, as_json.output)
        assert isinstance(as_json.exception, SystemExit), (args, as_json.exception)
        error = json.loads(as_json.stderr)["error"]
        assert error["code"] == code, (args, error)
        assert set(error) == {"code", "message", "file", "line"} and error["message"], (args, error)
        assert as_json.stdout == "", (args, as_json.stdout)


def test_an_error_about_a_place_names_its_file_and_line(runner, vault_dir):
    plain_vault(vault_dir)
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n\n[search\nrecord = true\n')
    result = runner.invoke(cli, ["list", "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "config" and error["file"].endswith("memvault.toml") and error["line"] == 4, error
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    # a daily log with a byte that is not UTF-8: logging into it would rewrite that byte
    (vault_dir / "memory" / "2026-02-21.md").write_bytes(b"# 2026-02-21\n\n## 09:00 - Belief\nUser mag Tee \xe4\n")
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "noch einer", "--json"])
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "refused", error
    assert (error["file"], error["line"]) == ("memory/2026-02-21.md", 4), error
    # a code block MEMORY.md never closes: curate says where
    (vault_dir / "MEMORY.md").write_text("# M\n\n```\nnever closed\n\n## Decisions\n")
    (vault_dir / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 14:30 - Decision\nShip the beta in März\n")
    result = runner.invoke(cli, ["curate", "--dry-run", "--at", "2026-02-22", "--json"])
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "refused" and error["line"] == 3, error
    assert error["file"].endswith("MEMORY.md"), error


def test_a_missing_vault_before_the_subcommand_is_json_too(runner, tmp_path):
    result = runner.invoke(cli, ["--vault", str(tmp_path / "gone"), "status", "--json"])
    assert result.exit_code == 1 and json.loads(result.stderr)["error"]["code"] == "vault_missing"
    result = runner.invoke(cli, ["--bogus", "status", "--json"])  # an error in the group's own options
    assert result.exit_code == 2 and json.loads(result.stderr)["error"]["code"] == "usage"


def test_json_after_a_double_dash_is_text_not_a_request(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "--", "--json"])
    assert result.exit_code == 0, result.output
    assert Vault.open(sample_vault).get(result.stdout.strip()).content == "--json"


def test_a_notice_under_json_is_a_json_line(runner, vault_dir):
    import logging

    from memvault.cli._common import VAULT_HELP  # noqa: F401 (the CLI installs its notice handler)

    plain_vault(vault_dir)

    @cli.command("notice-probe", hidden=True)
    @click.option("--json", "as_json", is_flag=True)
    def probe(as_json: bool) -> None:
        logging.getLogger("memvault").warning("rebuilt the index of Notizen/ä.md")

    try:
        result = runner.invoke(cli, ["notice-probe", "--json"])
        assert json.loads(result.stderr) == {"notice": {"message": "rebuilt the index of Notizen/ä.md"}}
        result = runner.invoke(cli, ["notice-probe"])
        assert result.stderr == "memvault: rebuilt the index of Notizen/ä.md\n"
    finally:
        del cli.commands["notice-probe"]


def test_every_error_code_is_documented_with_its_exit_status():
    import importlib
    import pkgutil

    import memvault
    from memvault.cli._errors import describe_codes
    from memvault.errors import MemvaultError

    for info in pkgutil.walk_packages(memvault.__path__, "memvault."):
        if "whoosh" not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)

    def every(cls: type[MemvaultError]) -> Iterator[type[MemvaultError]]:
        yield cls
        for sub in cls.__subclasses__():
            yield from every(sub)

    table = {code: status for code, status, _ in describe_codes()}
    assert len(table) == len(describe_codes())  # one row per code
    assert {cls.code for cls in every(MemvaultError)} <= set(table)
    assert {code for code, status in table.items() if status == 2} == {"usage"}
    doc = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()
    for code, status in table.items():
        assert f"| `{code}` | {status} |" in doc


def test_a_secret_in_an_edited_bullet_is_not_used_and_the_review_goes_on(runner, week, monkeypatch):
    # A secret is a refusal now (exit 1), no longer an InputError: the review must still catch it.
    import shlex
    import sys

    from tests.conftest import DATA

    editor = DATA / "curate_tools" / "fake_editor.py"
    monkeypatch.setenv("EDITOR", f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}")
    monkeypatch.setenv("FAKE_EDIT_RAW", "- Atlas DB password=hunter2hunter2\n")
    before = (week / "MEMORY.md").read_bytes()
    result = runner.invoke(cli, ["curate", "-i", "--at", "2026-02-22 12:00"], input="e\nn\nq\n")
    assert result.exit_code == 0, result.output
    assert "not used: refusing to write the edited bullet" in result.output and "hunter2" not in result.output
    assert "stopped; nothing was written" in result.output
    assert (week / "MEMORY.md").read_bytes() == before
