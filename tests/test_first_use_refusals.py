"""Issue 14, "wrong input refused before anything is written": each refusal through the CLI, with
what is on disk (or in git) checked afterwards."""

from __future__ import annotations

import re
from pathlib import Path

from memvault.cli import cli


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_init_with_an_unknown_zone_creates_nothing(runner, tmp_path):
    target = tmp_path / "new" / "vault"
    res = runner.invoke(cli, ["init", str(target), "--timezone", "Mars/Olympus"])
    assert res.exit_code == 2, res.output
    assert "'Mars/Olympus' is not a known IANA zone" in res.output and "nothing was created" in res.output
    assert not (tmp_path / "new").exists()


def test_init_with_an_unknown_zone_leaves_an_existing_folder_as_it_was(runner, tmp_path):
    target = tmp_path / "notes"
    target.mkdir()
    (target / "todo.txt").write_text("milk\n")
    res = runner.invoke(cli, ["init", str(target), "--timezone", "Europe/Berln"])
    assert res.exit_code == 2, res.output
    assert _tree(target) == ["todo.txt"]  # no memvault.toml, no memory/, no .git


def test_init_with_a_known_zone_writes_it_and_later_commands_work(runner, tmp_path):
    from memvault.vault import Vault

    target = tmp_path / "v"
    res = runner.invoke(cli, ["init", str(target), "--timezone", "Europe/Berlin"])
    assert res.exit_code == 0, res.output
    assert Vault.open(target).config.timezone == "Europe/Berlin"
    assert runner.invoke(cli, ["--vault", str(target), "log", "Kaffee ist alle"]).exit_code == 0


def test_adopt_with_an_unknown_zone_writes_nothing(runner, tmp_path):
    target = tmp_path / "legacy"
    (target / "memory").mkdir(parents=True)
    (target / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n")
    res = runner.invoke(cli, ["init", "--adopt", str(target), "--timezone", "Mars/Olympus"])
    assert res.exit_code != 0
    assert "Mars/Olympus" in res.output
    assert _tree(target) == ["memory", "memory/2026-02-21.md"]


# ------------------------------------------------------------------ log: future times, expiry


def _berlin_vault(root: Path) -> Path:
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    return root


def test_log_refuses_a_future_time_and_says_what_now_is_in_the_vaults_zone(runner, vault_dir):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    _berlin_vault(vault_dir)
    for when in ("tomorrow", "tomorrow 9am", "2099-01-01 10:00"):
        res = runner.invoke(cli, ["log", "--at", when, "Zahnarzttermin"])
        assert res.exit_code == 2, res.output
        said = re.search(r"in the future: now is (\d{4}-\d\d-\d\d \d\d:\d\d) in Europe/Berlin", res.output)
        assert said and "--future" in res.output, res.output
        now = datetime.strptime(said[1], "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo("Europe/Berlin"))
        assert abs((datetime.now(ZoneInfo("Europe/Berlin")) - now).total_seconds()) < 120
    assert not (vault_dir / "memory").exists()


def test_log_future_writes_a_planned_entry_that_check_then_warns_about(runner, vault_dir):
    from memvault.vault import Vault

    _berlin_vault(vault_dir)
    res = runner.invoke(cli, ["log", "--at", "2099-01-01 10:00", "--future", "--type", "decision", "Launch day"])
    assert res.exit_code == 0, res.output
    ev = Vault.open(vault_dir).get(res.output.strip())
    assert ev.timestamp.isoformat() == "2099-01-01T10:00:00+01:00" and ev.content == "Launch day"
    checked = runner.invoke(cli, ["check"])
    assert "MV016" in checked.output


def test_log_accepts_past_time_words(runner, vault_dir):
    from memvault.vault import Vault

    _berlin_vault(vault_dir)
    for when in ("today", "yesterday 9am", "3 days ago 14:30", "2 hours ago", "now", "midnight"):
        res = runner.invoke(cli, ["log", "--at", when, f"logged at {when}"])
        assert res.exit_code == 0, (when, res.output)
    assert len(Vault.open(vault_dir).events) == 6
    assert "MV016" not in runner.invoke(cli, ["check"]).output


def test_log_refuses_an_expiry_at_or_before_the_entrys_time(runner, vault_dir):
    from memvault.vault import Vault

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    res = runner.invoke(cli, ["log", "--expires", "2020-01-01", "Office closed for the holidays"])
    assert res.exit_code == 2, res.output
    assert "--expires 2020-01-01 00:00 is not after the entry's time" in res.output
    assert "would never be live" in res.output
    res = runner.invoke(cli, ["log", "--at", "2026-02-21 09:00", "--expires", "2026-02-21 09:00", "Standup moved"])
    assert res.exit_code == 2 and "would never be live" in res.output
    assert not (vault_dir / "memory").exists()
    ok = runner.invoke(cli, ["log", "--at", "2026-02-21 09:00", "--expires", "2026-02-22", "Standup moved"])
    assert ok.exit_code == 0, ok.output
    ev = Vault.open(vault_dir).get(ok.output.strip())
    assert ev.expires is not None and ev.expires.isoformat().startswith("2026-02-22T00:00")
    assert "MV208" not in runner.invoke(cli, ["check"]).output


def test_every_time_word_the_docs_list_parses():
    from datetime import UTC, datetime

    from memvault.entries.timeparse import parse_time

    doc = (Path(__file__).parents[1] / "docs" / "time-travel.md").read_text(encoding="utf-8")
    section = doc.split("## T\n", 1)[1].split("\n- `now`", 1)[1].split("For `asof`", 1)[0]
    before, units, after = re.split(r"UNIT one of | N a whole", section)
    words = ["now"] + [w for w in re.findall(r"`([^`]+)`", before + after) if not w.startswith("N ")]
    words += [f"2 {unit} ago" for unit in re.findall(r"`([^`]+)`", units)]
    now = datetime(2026, 2, 21, 12, 0, tzinfo=UTC)
    assert {"today", "tomorrow 14:00", "9:15pm", "1.5 hours ago", "noon", "2 wks ago", "2 months ago"} <= set(words)
    for word in words:
        parse_time(word, UTC, now)  # raises for a word the parser does not take


# ------------------------------------------------------------------ one rule for which types exist


def test_list_and_search_take_the_same_types_from_the_flag_and_the_query(runner, vault_dir):
    import json

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\nextra_types = ["Lesson"]\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\n## 09:00 - Feeling\nRuhig wegen der Wochenupdates\n\n"
        "## 10:00 - Belief\nWeekly updates help the team\n")
    for typ in ("feeling", "Feeling", "lesson", "note", "belief"):  # used, configured, freeform, core
        listed = runner.invoke(cli, ["list", "--type", typ, "--json"])
        flagged = runner.invoke(cli, ["search", "Wochenupdates", "weekly", "--type", typ, "--json"])
        queried = runner.invoke(cli, ["search", f"Wochenupdates weekly type:{typ}", "--json"])
        assert listed.exit_code == flagged.exit_code == queried.exit_code == 0, (typ, flagged.output, queried.output)
        want = {d["id"] for d in json.loads(listed.output)}
        assert {h["id"] for h in json.loads(flagged.output)} == want == {h["id"] for h in json.loads(queried.output)}
    for args, where in ((["list", "--type", "feelings"], "--type 'feelings'"),
                        (["search", "weekly", "--type", "feelings"], "--type 'feelings'"),
                        (["search", "weekly type:feelings"], "type:'feelings'")):
        refused = runner.invoke(cli, args)
        assert refused.exit_code == 2, refused.output
        assert f"{where}: no such type; known: belief, correction, decision, feeling, lesson, note, observation" \
            in refused.output


# ------------------------------------------------------------------ a stray line after Supersedes:

DAY = ("# 2026-02-21\n\n## 09:00 - Belief\nUser prefers dark mode\n\n"
       "## 15:30 - Belief\nUser prefers light mode after all\nSupersedes: 2026-02-21T09:00\n")
STRAY = "siehe Chat vom Nachmittag\n"


def _live(root: Path) -> set[str]:
    from memvault.vault import Vault

    with Vault.open(root) as vault:
        return {e.id for e in vault.entries()}


def test_a_stray_line_after_supersedes_is_an_error_naming_the_line(runner, vault_dir):
    import json

    from memvault.check.registry import RULES

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(DAY)
    assert _live(vault_dir) == {"2026-02-21T15:30"}
    day.write_text(DAY + STRAY)
    assert _live(vault_dir) == {"2026-02-21T09:00", "2026-02-21T15:30"}  # what the error is about
    res = runner.invoke(cli, ["check", "--json"])
    assert res.exit_code == 1, res.output
    found = [p for p in json.loads(res.output)["problems"] if p["code"] in ("MV209", "MV210")]
    assert [(p["code"], p["line"], p["severity"]) for p in found] == [("MV210", 8, "error")]
    assert "line 9 ('siehe Chat vom Nachmittag') follows it" in found[0]["message"]
    assert "supersedes nothing" in found[0]["message"] and RULES["MV210"].severity == "error"


def _hooked(tmp_path: Path, toml: str, text: str) -> Path:
    from .helpers_check import git_repo, run_memvault

    repo = git_repo(tmp_path / "v", {"memvault.toml": toml, "memory/2026-02-21.md": text})
    assert run_memvault(repo, "hook", "install").returncode == 0
    return repo


def test_the_hook_refuses_a_commit_that_strands_a_supersedes_line(tmp_path):
    from .helpers_check import commit, git

    for n, toml in enumerate(('[vault]\ntimezone = "UTC"\n', '[vault]\ntimezone = "UTC"\n[hook]\njudge = "changed-lines"\n')):
        repo = _hooked(tmp_path / str(n), toml, DAY)
        before = git(repo, "rev-parse", "HEAD").stdout
        with (repo / "memory" / "2026-02-21.md").open("a") as fh:
            fh.write(STRAY)
        git(repo, "add", "-A")
        result = commit(repo)
        assert result.returncode != 0 and "MV210 error" in result.stdout + result.stderr, (toml, result.stdout)
        assert git(repo, "rev-parse", "HEAD").stdout == before


def test_log_never_writes_a_reference_line_into_the_body(runner, vault_dir):
    from .conftest import plain_vault

    plain_vault(vault_dir)
    day = vault_dir / "memory" / "2026-02-21.md"
    before = day.read_text()
    for text in ("Tee ist aus\nSupersedes: 2026-02-21T09:00\nsagt Anna", "Not tea\nreconfirms: 2026-02-21T09:00\nok"):
        res = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", text])
        assert res.exit_code == 2 and "(check: MV210)" in res.output, res.output
    assert day.read_text() == before
    fenced = "Config example:\n```\nSupersedes: 2026-02-21T09:00\n```\nthat is all"
    assert runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", fenced]).exit_code == 0
    assert "MV210" not in runner.invoke(cli, ["check"]).output


# ------------------------------------------------------------------ check --fix on MV003

ATTEMPTS = """\
# 2026-02-21

## 09:00 - Belief
Der Build ist langsam

## 10:00 Decision
Move the nightly build to 02:00

## 9:05 decision
Keep the old runner one more week

## 14:00 — Brand Lead Gen Deep Dive
- notes from the call

## 11.30 - Belief
The dotted time stays as it is

## 16:30 Belief
Renumbering would move the next one

## 16:30 - Observation
Standup ran long
"""


def test_check_fix_repairs_plain_attempts_and_says_what_it_leaves(runner, vault_dir):
    import json

    from memvault.vault import Vault

    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(ATTEMPTS)
    res = runner.invoke(cli, ["check", "--fix"])
    assert res.exit_code == 1, res.output
    assert "fixed memory/2026-02-21.md: MV003" in res.output
    text = day.read_text()
    lines = text.split("\n")
    # repaired in place (then put in time order); every other line as it was
    assert "## 10:00 - Decision" in lines and "## 09:05 - Decision" in lines
    assert "## 14:00 — Brand Lead Gen Deep Dive" in lines  # a timed note, never an attempt
    assert "## 11.30 - Belief" in lines and "## 16:30 Belief" in lines
    assert sorted(set(ATTEMPTS.split("\n")) - set(lines)) == ["## 10:00 Decision", "## 9:05 decision"]
    with Vault.open(vault_dir) as vault:
        typed = {e.id: e.type for e in vault.events if not e.is_note}
    assert typed == {"2026-02-21T09:00": "belief", "2026-02-21T09:05": "decision", "2026-02-21T10:00": "decision",
                     "2026-02-21T16:30": "observation"}
    assert "not repaired by --fix:" in res.output
    assert "MV003: its time is not written H:MM or HH:MM" in res.output
    assert "MV003: the entry at 16:30 on line" in res.output and "would be renumbered" in res.output
    again = json.loads(runner.invoke(cli, ["check", "--fix", "--json"]).output)
    assert again["fixed"] == {} and day.read_text() == text
    assert sorted((d["code"], d["line"]) for d in again["left_by_fix"]) == sorted(
        (p["code"], p["line"]) for p in again["problems"])


# ------------------------------------------------------------------ watch --commit and the hook

TOKEN = "ghp_" + "Zk3Qp9Lm2Xv8Rt5Yw7Nb4Hc6Jd1Fg0Sa2Ty3Ui"


def test_watch_commit_unstages_what_the_hook_refused_and_status_says_so(runner, tmp_path):
    import signal

    from memvault.watch.state import read_record

    from .helpers_check import git
    from .helpers_watch import WatchProcess, wait_for

    root = tmp_path / "v"
    assert runner.invoke(cli, ["init", str(root), "--timezone", "UTC"]).exit_code == 0  # the real hook
    (root / "notes.md").write_text("my own staged work\n")
    git(root, "add", "notes.md")
    day = root / "memory" / "2026-02-21.md"
    w = WatchProcess(root, "--commit", "--quiet-period", "0.2")
    try:
        w.read_until("ready")
        day.write_text(f"# 2026-02-21\n\n## 09:15 - Observation\nDeploy mit {TOKEN} gemacht\n")
        wait_for(lambda: "unstaged" in ((read_record(root) or {}).get("commit") or {}), what="refusal recorded",
                 timeout=30)
        record = read_record(root)["commit"]
        assert "MV503" in record["error"] and record["unstaged"] == "memory/2026-02-21.md"
        assert git(root, "diff", "--cached", "--name-only").stdout.split() == ["notes.md"]  # theirs stays
        assert TOKEN in day.read_text()  # nothing lost: the working tree keeps the change
        assert git(root, "log", "--format=%s").stdout.split("\n")[0] == "memvault: new vault"
        shown = runner.invoke(cli, ["--vault", str(root), "status"])
        assert "last commit failed" in shown.output and "MV503" in shown.output
        assert "not committed, unstaged again: memory/2026-02-21.md" in shown.output
        w.proc.send_signal(signal.SIGTERM)
        assert w.finish()[0] == 0
    finally:
        if w.proc.poll() is None:
            w.proc.kill()
    after = runner.invoke(cli, ["--vault", str(root), "status"])  # the refusal outlives the watcher
    assert "not committed, unstaged again: memory/2026-02-21.md" in after.output
    assert TOKEN not in after.output


def test_init_without_git_on_the_path_creates_nothing(runner, tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    target = tmp_path / "nogit"
    res = runner.invoke(cli, ["init", str(target)])
    assert res.exit_code == 1 and "git is not installed" in res.output and "--no-git" in res.output
    assert not target.exists()
    assert runner.invoke(cli, ["init", str(target), "--no-git", "--no-hook"]).exit_code == 0
    assert (target / "memvault.toml").is_file() and not (target / ".git").exists()


def test_a_refused_watch_commit_puts_back_what_the_person_had_staged(tmp_path):
    import stat

    import pytest

    from memvault.errors import GitError
    from memvault.sync.commit import CommitRefused, commit_vault
    from memvault.vault import Vault
    from memvault.write.log import init_vault

    from .helpers_check import git

    root = init_vault(tmp_path / "v", timezone="UTC")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'nicht jetzt' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    day = root / "memory" / "2026-02-21.md"
    day.write_text("# 2026-02-21\n\n## 09:00 - Observation\nStaged by me\n")
    git(root, "add", "memory/2026-02-21.md")
    staged = git(root, "ls-files", "-s", "memory/2026-02-21.md").stdout
    day.write_text(day.read_text() + "\n## 10:00 - Observation\nWritten later\n")
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n- brand new bullet\n")
    with pytest.raises(CommitRefused, match="nicht jetzt") as refused:
        commit_vault(root, Vault.open(root).config)
    assert isinstance(refused.value, GitError) and set(refused.value.paths) == {"MEMORY.md", "memory/2026-02-21.md"}
    assert git(root, "ls-files", "-s", "memory/2026-02-21.md").stdout == staged  # their version, not the watcher's
    assert git(root, "diff", "--cached", "--name-only").stdout.split() == ["memory/2026-02-21.md"]
    assert "Written later" in day.read_text() and "brand new bullet" in (root / "MEMORY.md").read_text()


def test_check_fix_leaves_an_attempt_whose_note_something_refers_to(runner, vault_dir):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    day = vault_dir / "memory" / "2026-02-21.md"
    text = ("# 2026-02-21\n\n## 10:00 Decision\nUse Postgres\n\n"
            "## 11:00 - Decision\nUse SQLite after all\nSupersedes: 2026-02-21#10-00-decision\n")
    day.write_text(text)
    assert "MV011" not in runner.invoke(cli, ["check"]).output  # the reference names the note today
    res = runner.invoke(cli, ["check", "--fix"])
    assert day.read_text() == text
    assert "its section is referred to as the note 2026-02-21#10-00-decision" in res.output
