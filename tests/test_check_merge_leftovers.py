"""What a merge without memvault's driver leaves, found by `check` and repaired by `check --fix`.

Real git: a bare remote and two clones, the vault's `.gitattributes` (`memory/**/*.md merge=union`)
and no memvault driver (a plain `git pull`), or no attribute at all (conflict markers). Issue 19:
git's union merge is the documented fallback; what it leaves (an entry twice, the other machine's
entries after later ones, markers) is MV021, MV015, MV020, and a `Conflict:` line MV023.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.check import run_check
from memvault.check.fixes import fix_source
from memvault.check.leftovers import moved_id, reparsed
from memvault.check.sourcefile import load_source
from memvault.cli import cli
from memvault.config.core import Config
from memvault.entries.blocks import marker_lines, markers, union_of_markers
from memvault.vault import Vault
from memvault.write.log import init_vault, log_entry

from .helpers_check import commit, git, run_memvault, write_vault

DAY = "memory/2026-11-30.md"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
BASE = "# 2026-11-30\n\n## 08:00 - Belief\nDer Nutzer trinkt morgens Tee\n"
UNION = "memory/**/*.md merge=union\n"


# ----------------------------------------------------------------------------- git helpers


def machines(tmp_path: Path, attributes: str | None = UNION, base: str = BASE,
             files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A bare remote and two clones of a vault (`laptop`, `desktop`), without memvault's driver."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    laptop = write_vault(tmp_path / "laptop", {DAY: base, **(files or {})})
    if attributes is not None:
        (laptop / ".gitattributes").write_text(attributes, encoding="utf-8")
    git(laptop, "init", "-q", "-b", "main")
    git(laptop, "add", "-A")
    git(laptop, "commit", "-q", "--no-verify", "-m", "base")
    git(laptop, "remote", "add", "origin", str(remote))
    git(laptop, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), "desktop")
    return laptop, tmp_path / "desktop"


def append(clone: Path, text: str, rel: str = DAY, *, push: bool = False) -> None:
    with (clone / rel).open("a", encoding="utf-8", newline="") as f:
        f.write(text)
    git(clone, "commit", "-q", "--no-verify", "-am", f"{clone.name}: an entry")
    if push:
        git(clone, "push", "-q")


def pull(clone: Path) -> subprocess.CompletedProcess[str]:
    """A plain `git pull` (a merge), as on a machine where `memvault sync` never ran."""
    return git(clone, "pull", "-q", "--no-rebase", "--no-edit", check=False)


def entries(root: Path, rel: str = DAY) -> list[tuple[str, str, str]]:
    """(id, time, text) of each entry the vault reads from `rel`, in file order."""
    vault = Vault.open(root)
    return [(e.id, f"{e.timestamp:%H:%M}", e.content) for e in vault.events if e.file == rel and not e.is_note]


def check_json(runner, root: Path, *args: str) -> dict:
    result = runner.invoke(cli, ["--vault", str(root), "check", "--json", *args])
    return json.loads(result.output)


# ---------------------------------------------------------------- union: order and repeats


def test_a_union_pull_puts_the_other_machines_entry_after_a_later_one_and_fix_sorts_it(tmp_path, runner):
    laptop, desktop = machines(tmp_path)
    append(laptop, "\n## 09:30 - Observation\nBuild auf dem Laptop wieder grün\n", push=True)
    append(desktop, "\n## 11:00 - Decision\nShip the sync feature on Friday\n")
    ids_before = {t: i for i, t, _ in entries(laptop) + entries(desktop)}
    assert pull(desktop).returncode == 0  # union: no conflict, both sides kept, ours first
    assert "<<<<<<<" not in (desktop / DAY).read_text(encoding="utf-8")

    found = check_json(runner, desktop)
    order = [p for p in found["problems"] if p["code"] == "MV015"]
    assert [(p["path"], p["line"]) for p in order] == [(DAY, _line_of(desktop, "## 09:30"))]

    result = runner.invoke(cli, ["--vault", str(desktop), "check", "--fix"])
    assert result.exit_code == 0, result.output
    after = entries(desktop)
    assert [t for _, t, _ in after] == ["08:00", "09:30", "11:00"]
    assert {t: i for i, t, _ in after} == ids_before  # no id moved
    assert run_check(Vault.open(desktop), now=NOW).problems == []


def _line_of(root: Path, prefix: str, rel: str = DAY) -> int:
    lines = (root / rel).read_text(encoding="utf-8").split("\n")
    return next(i + 1 for i, line in enumerate(lines) if line.startswith(prefix))


def test_an_entry_both_machines_added_comes_out_twice_and_fix_keeps_one(tmp_path, runner):
    laptop, desktop = machines(tmp_path)
    shared = "\n## 10:00 - Decision\nWe use Postgres for the sync server\n"
    append(laptop, "\n## 09:45 - Observation\nLaptop: tests pass\n" + shared, push=True)
    append(desktop, shared + "\n## 10:30 - Observation\nDesktop: Tests laufen durch\n")
    assert pull(desktop).returncode == 0
    text = (desktop / DAY).read_text(encoding="utf-8")
    assert text.count("We use Postgres") == 2

    found = check_json(runner, desktop)
    repeat = [p for p in found["problems"] if p["code"] == "MV021"]
    assert len(repeat) == 1 and repeat[0]["severity"] == "warning"
    assert "repeats the section on line" in repeat[0]["message"]

    report = run_check(Vault.open(desktop), fix=True, now=NOW)
    assert "MV021" in report.fixed[DAY]
    assert report.problems == []
    got = entries(desktop)
    assert [t for _, t, _ in got] == ["08:00", "09:45", "10:00", "10:30"]
    assert (desktop / DAY).read_text(encoding="utf-8").count("We use Postgres") == 1


def test_a_repeat_whose_drop_would_renumber_an_entry_is_left_with_the_reason(tmp_path):
    text = ("# 2026-11-30\n\n## 10:00 - Decision\nUse Postgres\n\n## 10:00 - Decision\nUse Postgres\n\n"
            "## 10:00 - Observation\nDeploy lief um zehn\n")
    root = write_vault(tmp_path / "v", {DAY: text})
    report = run_check(Vault.open(root), fix=True, now=NOW)
    assert report.fixed == {}
    assert (root / DAY).read_text(encoding="utf-8") == text  # untouched
    left = [d for d in report.left or [] if d["code"] == "MV021"]
    assert left and left[0]["path"] == DAY and "move the id 2026-11-30T10:00-2" in left[0]["why"]


def test_a_repeat_that_a_reference_names_is_not_dropped(tmp_path):
    text = ("# 2026-11-30\n\n## 10:00 - Belief\nDer Server läuft auf Hetzner\n\n"
            "## 10:00 - Belief\nDer Server läuft auf Hetzner\n")
    fix = "# 2026-12-01\n\n## 09:00 - Correction\nIt runs on AWS now\nSupersedes: 2026-11-30T10:00-2\n"
    root = write_vault(tmp_path / "v", {DAY: text, "memory/2026-12-01.md": fix})
    report = run_check(Vault.open(root), fix=True, now=NOW)
    assert DAY not in report.fixed
    left = [d for d in report.left or [] if d["code"] == "MV021"]
    assert left and "which something refers to" in left[0]["why"]


def test_an_order_fix_that_would_swap_two_notes_ids_is_left_with_the_reason(tmp_path, runner):
    text = ("# 2026-11-30\n\n## 10:00 - Observation\nLater\n\n## Notes\n- first note\n\n"
            "## 09:00 - Observation\nEarlier, appended by the other machine\n\n## Notes\n- second note\n")
    root = write_vault(tmp_path / "v", {DAY: text})
    src = load_source(DAY, text.encode(), Config())
    assert fix_source(src, Config()) == (text, [])
    result = runner.invoke(cli, ["--vault", str(root), "check", "--fix"])
    assert "MV015" in result.output and "would move the id" in result.output
    assert (root / DAY).read_text(encoding="utf-8") == text


def test_same_minute_entries_from_two_machines_keep_their_order_and_ids(tmp_path):
    laptop, desktop = machines(tmp_path)
    append(laptop, "\n## 12:00 - Observation\nLaptop zuerst\n\n## 09:00 - Observation\nlaptop backfill\n",
           push=True)
    append(desktop, "\n## 12:00 - Observation\nDesktop second\n")
    assert pull(desktop).returncode == 0
    before = entries(desktop)
    run_check(Vault.open(desktop), fix=True, now=NOW)
    after = entries(desktop)
    assert sorted(before) == sorted(after)  # every (id, time, text) as it was: ids kept
    assert [t for _, t, _ in after] == sorted(t for _, t, _ in after)


def test_entries_logged_on_two_machines_pulled_without_the_driver_are_whole_after_fix(tmp_path, monkeypatch):
    """The issue's fallback end to end: `memvault log` on two clones of a vault with a remote (so
    every entry has its machine's `Id:`), the second clone merging with a plain `git pull`."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    laptop = init_vault(tmp_path / "laptop", timezone="UTC")
    git(laptop, "branch", "-M", "main")
    git(laptop, "remote", "add", "origin", str(remote))
    git(laptop, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), "desktop")
    desktop = tmp_path / "desktop"
    assert "merge=union" in (desktop / ".gitattributes").read_text(encoding="utf-8")
    assert git(desktop, "config", "--get", "merge.memvault.driver", check=False).returncode != 0  # no driver

    def log(clone: Path, machine: str, hhmm: str, text: str) -> str:
        monkeypatch.setenv("MEMVAULT_MACHINE", machine)
        hh, mm = map(int, hhmm.split(":"))
        ev = log_entry(Vault.open(clone), text, at=datetime(2026, 11, 30, hh, mm, tzinfo=UTC))
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "--no-verify", "-m", f"{machine}: {text}")
        return ev.id

    ids = [log(laptop, "laptop", "09:00", "Kunde Müller will das Angebot bis Freitag"),
           log(laptop, "laptop", "14:30", "Sent the offer to Müller")]
    git(laptop, "push", "-q")
    ids += [log(desktop, "desktop", "10:15", "Printer in room 2 is broken again"),
            log(desktop, "desktop", "14:30", "Drucker repariert, Toner war leer")]
    assert all(i.endswith(("-laptop", "-desktop")) for i in ids)
    assert pull(desktop).returncode == 0
    # both sides added the day's file: union wrote this side's entries, then the laptop's (09:00 last but one)
    assert {p.code for p in run_check(Vault.open(desktop), now=NOW).problems} == {"MV009", "MV015"}
    assert run_check(Vault.open(desktop), fix=True, now=NOW).problems == []
    got = entries(desktop)
    assert sorted(i for i, _, _ in got) == sorted(ids)  # every entry once, each with its own id
    assert [t for _, t, _ in got] == ["09:00", "10:15", "14:30", "14:30"]
    git(desktop, "commit", "-q", "--no-verify", "-am", "check --fix after a plain pull")
    git(desktop, "push", "-q")


# ----------------------------------------------------------------------- conflict markers


def conflicted(tmp_path: Path, ours: str, theirs: str, *, base: str = BASE, rel: str = DAY,
               files: dict[str, str] | None = None) -> Path:
    """The desktop clone after a plain `git pull` with no merge attribute: markers in `rel`."""
    laptop, desktop = machines(tmp_path, attributes=None, base=base, files=files)
    append(laptop, theirs, rel, push=True)
    append(desktop, ours, rel)
    assert pull(desktop).returncode != 0
    assert "<<<<<<<" in (desktop / rel).read_bytes().decode("utf-8")
    return desktop


def test_a_plain_merge_leaves_markers_check_reports_each_conflict_and_fix_keeps_both(tmp_path, runner):
    desktop = conflicted(tmp_path, "\n## 11:00 - Decision\nDesktop: we ship on Friday\n",
                         "\n## 09:30 - Observation\nLaptop: Kunde hat angerufen\n")
    start = _line_of(desktop, "<<<<<<<")
    result = runner.invoke(cli, ["--vault", str(desktop), "check"])
    assert result.exit_code == 1
    assert f"{DAY}:{start}:1: MV020 error: git conflict left by a merge" in result.output
    found = check_json(runner, desktop)
    mv020 = [p for p in found["problems"] if p["code"] == "MV020"]
    assert [(p["line"], p["severity"]) for p in mv020] == [(start, "error")]
    assert "--fix` keeps both versions" in mv020[0]["message"]

    result = runner.invoke(cli, ["--vault", str(desktop), "check", "--fix"])
    assert result.exit_code == 0, result.output
    text = (desktop / DAY).read_text(encoding="utf-8")
    assert marker_lines(text) == []
    assert [(t, c) for _, t, c in entries(desktop)] == [
        ("08:00", "Der Nutzer trinkt morgens Tee"), ("09:30", "Laptop: Kunde hat angerufen"),
        ("11:00", "Desktop: we ship on Friday")]
    git(desktop, "add", DAY)
    git(desktop, "commit", "-q", "--no-verify", "--no-edit")  # the merge can be concluded
    assert run_check(Vault.open(desktop), now=NOW).problems == []


def test_a_staged_file_holding_markers_is_refused_as_the_hook_would(tmp_path, runner):
    desktop = conflicted(tmp_path, "\n## 11:00 - Decision\nShip it\n", "\n## 09:30 - Observation\nRegen\n")
    git(desktop, "add", DAY)  # what a person does who thinks the conflict is resolved
    result = runner.invoke(cli, ["--vault", str(desktop), "check", "--staged"])  # what the hook runs
    assert result.exit_code == 1
    assert f"{DAY}:{_line_of(desktop, '<<<<<<<')}:1: MV020 error" in result.output
    assert "check --fix" in result.output and DAY in result.output.split("check --fix")[-1]


def test_a_staged_memory_md_with_markers_gets_no_fix_hint(tmp_path, runner):
    memory = "# Long-Term Memory\n\n## Preferences\n\nThe user likes short answers.\n"
    desktop = conflicted(tmp_path, "Desktop: Antworten auf Deutsch.\n", "Laptop: answers in English.\n",
                         rel="MEMORY.md", files={"MEMORY.md": memory})
    git(desktop, "add", "MEMORY.md")
    result = runner.invoke(cli, ["--vault", str(desktop), "check", "--staged"])
    assert result.exit_code == 1 and "MEMORY.md:" in result.output and "MV020" in result.output
    assert "check --fix" not in result.output.replace("`memvault check --fix`", "")


@pytest.mark.slow
def test_the_hook_refuses_a_commit_holding_markers(tmp_path):
    desktop = conflicted(tmp_path, "\n## 11:00 - Decision\nShip it\n", "\n## 09:30 - Observation\nRegen\n")
    assert run_memvault(desktop, "hook", "install").returncode == 0
    git(desktop, "add", DAY)  # what a person does who thinks the conflict is resolved
    refused = commit(desktop)
    assert refused.returncode != 0
    assert "MV020" in refused.stdout + refused.stderr
    assert git(desktop, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0  # not concluded


def test_markers_in_memory_md_are_reported_and_never_fixed(tmp_path, runner):
    memory = "# Long-Term Memory\n\n## Preferences\n\nThe user likes short answers.\n"
    desktop = conflicted(tmp_path, "Desktop: Antworten auf Deutsch.\n", "Laptop: answers in English.\n",
                         rel="MEMORY.md", files={"MEMORY.md": memory})
    before = (desktop / "MEMORY.md").read_bytes()
    found = check_json(runner, desktop, "--fix")
    mv020 = [p for p in found["problems"] if p["code"] == "MV020"]
    assert len(mv020) == 1 and mv020[0]["path"] == "MEMORY.md"
    assert "never repaired automatically" in mv020[0]["message"]
    assert (desktop / "MEMORY.md").read_bytes() == before
    left = [d for d in found["left_by_fix"] if d["code"] == "MV020"]
    assert left and "the prose is yours to choose" in left[0]["why"]


def test_a_crlf_log_with_markers_is_fixed_and_stays_crlf(tmp_path):
    base = BASE.replace("\n", "\r\n")
    desktop = conflicted(tmp_path, "\r\n## 11:00 - Decision\r\nDesktop: Umzug am Freitag\r\n",
                         "\r\n## 09:30 - Observation\r\nLaptop: the movers called\r\n", base=base)
    report = run_check(Vault.open(desktop), fix=True, now=NOW)
    assert "MV020" in report.fixed[DAY]
    raw = (desktop / DAY).read_bytes()
    assert b"<<<<<<<" not in raw and b">>>>>>>" not in raw
    assert raw.count(b"\n") == raw.count(b"\r\n")  # every line ending still CRLF
    assert [t for _, t, _ in entries(desktop)] == ["08:00", "09:30", "11:00"]
    assert report.problems == []


def test_an_entry_edited_on_both_machines_keeps_both_versions_of_its_text(tmp_path):
    laptop, desktop = machines(tmp_path, attributes=None)
    (laptop / DAY).write_text(BASE.replace("morgens Tee", "morgens Kaffee"), encoding="utf-8")
    git(laptop, "commit", "-q", "--no-verify", "-am", "laptop edit")
    git(laptop, "push", "-q")
    (desktop / DAY).write_text(BASE.replace("Der Nutzer trinkt morgens Tee", "The user drinks green tea"),
                               encoding="utf-8")
    git(desktop, "commit", "-q", "--no-verify", "-am", "desktop edit")
    assert pull(desktop).returncode != 0
    report = run_check(Vault.open(desktop), fix=True, now=NOW)
    assert report.fixed == {DAY: ["MV020"]}
    text = (desktop / DAY).read_text(encoding="utf-8")
    assert "The user drinks green tea" in text and "Der Nutzer trinkt morgens Kaffee" in text
    assert marker_lines(text) == []


def test_diff3_markers_drop_the_ancestors_version(tmp_path):
    text = ("# 2026-11-30\n\n## 08:00 - Belief\n<<<<<<< ours\nUser likes tea\n||||||| base\nUser likes water\n"
            "=======\nNutzer mag Kaffee\n>>>>>>> theirs\n")
    assert union_of_markers(text) == "# 2026-11-30\n\n## 08:00 - Belief\nUser likes tea\nNutzer mag Kaffee\n"
    root = write_vault(tmp_path / "v", {DAY: text})
    problems = run_check(Vault.open(root), now=NOW).problems
    assert [p.line for p in problems if p.code == "MV020"] == [4]
    message = next(p.message for p in problems if p.code == "MV020")
    assert "line 5 is this side's version, line 9 is the other's (line 7 is the common ancestor's)" in message


def test_a_conflict_where_one_side_deleted_says_so(tmp_path):
    text = "# 2026-11-30\n\n## 08:00 - Belief\n<<<<<<< HEAD\n=======\nNutzer mag Kaffee\n>>>>>>> theirs\n"
    root = write_vault(tmp_path / "v", {DAY: text})
    message = next(p.message for p in run_check(Vault.open(root), now=NOW).problems if p.code == "MV020")
    assert "nothing is this side's version, line 6 is the other's" in message


def test_a_stray_marker_or_an_unfinished_conflict_is_reported_and_left(tmp_path):
    stray = "# 2026-11-30\n\n## 08:00 - Belief\nUser likes tea\n>>>>>>> origin/main\n"
    unfinished = "# 2026-11-29\n\n## 08:00 - Belief\n<<<<<<< HEAD\nUser likes tea\n=======\nUser likes coffee\n"
    root = write_vault(tmp_path / "v", {DAY: stray, "memory/2026-11-29.md": unfinished})
    report = run_check(Vault.open(root), fix=True, now=NOW)
    assert report.fixed == {}
    found = {(p.path, p.line) for p in report.problems if p.code == "MV020"}
    assert found == {(DAY, 5), ("memory/2026-11-29.md", 4)}
    assert any("never ends" in p.message for p in report.problems)
    assert {d["path"] for d in report.left or [] if d["code"] == "MV020"} == {DAY, "memory/2026-11-29.md"}


def test_markers_inside_fenced_code_a_setext_underline_and_an_empty_table_row_are_text(tmp_path):
    text = ("# 2026-11-30\n\n## 08:00 - Observation\nHow git shows a conflict:\n\n```\n<<<<<<< HEAD\nours\n"
            "=======\ntheirs\n>>>>>>> branch\n```\n\nÜberschrift\n=======\n\n|a|b|c|d|e|f|\n|-|-|-|-|-|-|\n|||||||\n")
    assert markers(text).conflicts == () and markers(text).stray == ()
    root = write_vault(tmp_path / "v", {DAY: text})
    assert [p for p in run_check(Vault.open(root), now=NOW).problems if p.code == "MV020"] == []


def test_a_conflict_line_is_shown_with_file_and_line_in_text_and_json(tmp_path, runner):
    text = ("# 2026-11-30\n\n## 09:00 - Belief\nUser prefers tea\n\n## 09:00 - Belief\nUser prefers coffee\n"
            "Conflict: two versions: this one and the one above were edited on two machines; keep one, "
            "delete the other and this line\n")
    root = write_vault(tmp_path / "v", {DAY: text})
    result = runner.invoke(cli, ["--vault", str(root), "check"])
    assert result.exit_code == 0  # a warning
    assert f"{DAY}:8:1: MV023 warning: Conflict: two versions" in result.output
    found = check_json(runner, root)
    assert [(p["path"], p["line"], p["severity"]) for p in found["problems"]] == [(DAY, 8, "warning")]
    fixed = check_json(runner, root, "--fix")
    assert fixed["fixed"] == {} and (root / DAY).read_text(encoding="utf-8") == text


def test_moved_id_names_the_entry_that_would_change_meaning():
    config = Config()
    before = load_source(DAY, b"# 2026-11-30\n\n## 10:00 - Belief\nA\n\n## 10:00 - Belief\nB\n", config)
    after = reparsed(before, "# 2026-11-30\n\n## 10:00 - Belief\nB\n\n## 10:00 - Belief\nA\n", config)
    assert "2026-11-30T10:00" in (moved_id(before, after, frozenset()) or "")
    assert moved_id(before, before, frozenset()) is None


# -------------------------------------------------------------------- nothing may be lost

SENTENCES = ("User prefers tea", "Der Nutzer mag Kaffee", "Deploy ran green", "Kunde hat angerufen",
             "Ship on Friday", "Umzug nach Köln geplant", "PR #42 merged", "Ärger mit dem Drucker")
TYPES = ("Observation", "Decision", "Belief", "Correction")


@st.composite
def two_sides(draw):
    """(base entries, ours, theirs): entries as (minute, type, text), a minute used once (the same
    entry may be on both sides: both machines got it), each line of a text its own (git's union
    shares a line two sides' new text has in common: docs/decisions.md)."""
    minutes = draw(st.lists(st.integers(6 * 60, 23 * 60 + 59), min_size=1, max_size=12, unique=True))
    made = [(m, draw(st.sampled_from(TYPES)), f"{draw(st.sampled_from(SENTENCES))} ({n})"
             + draw(st.sampled_from(("", f"\n\nMehr dazu ({n})", f"\n- a list item ({n})"))))
            for n, m in enumerate(minutes)]
    where = [draw(st.sampled_from(("base", "ours", "theirs", "both"))) for _ in made]
    base = [e for e, w in zip(made, where, strict=True) if w == "base"]
    ours = [e for e, w in zip(made, where, strict=True) if w in ("ours", "both")]
    theirs = [e for e, w in zip(made, where, strict=True) if w in ("theirs", "both")]
    return sorted(base), ours, theirs


def render(entries_: list[tuple[int, str, str]]) -> str:
    return "# 2026-11-30\n" + "".join(f"\n## {m // 60:02d}:{m % 60:02d} - {t}\n{x}\n" for m, t, x in entries_)


def git_merge_file(base: str, ours: str, theirs: str, *, union: bool) -> str:
    """git's three-way merge of one file: with `--union` (the vault's `.gitattributes`), or without
    (conflict markers, as a merge with no attribute leaves them)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8")
            paths.append(str(path))
        flags = ["--union"] if union else []
        out = subprocess.run(["git", "merge-file", "-p", *flags, *paths], capture_output=True, text=True)
        assert out.returncode >= 0, out.stderr
        return out.stdout


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sides=two_sides(), appended=st.booleans(), union=st.booleans())
def test_union_of_two_appends_then_fix_keeps_every_entry_once_in_time_order(sides, appended, union):
    base, ours_new, theirs_new = sides
    # A side's new entries: appended as written (the other machine's may be earlier), or in place.
    ours = base + ours_new if appended else sorted(base + ours_new)
    theirs = base + theirs_new if appended else sorted(base + theirs_new)
    merged = git_merge_file(render(base), render(ours), render(theirs), union=union)
    with tempfile.TemporaryDirectory() as tmp:
        root = write_vault(Path(tmp) / "v", {DAY: merged})
        report = run_check(Vault.open(root), fix=True, now=NOW)
        assert report.problems == [], (merged, report.problems)
        got = [(e.timestamp.hour * 60 + e.timestamp.minute, e.type.capitalize(), e.content)
               for e in Vault.open(root).events if not e.is_note]
    assert sorted(got) == sorted(set(base + ours + theirs))  # every entry, exactly once
    assert got == sorted(got)  # in time order
