"""Notes end to end through the CLI, in a real git repository: search, list, show, asof,
changes, history (recorded time sees every edit), curate and check."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memvault.cli import cli

from .conftest import git

DAY = "memory/2026-02-02.md"
LOG = """# 2026-02-02 - Umzug

Kurze Notiz vor allem anderen: Kartons bestellt.

## Was passiert ist

### Heizung
- **Vermieter**: kommt am Montag wegen der Heizung
- [x] Zählerstand fotografiert

## Log
- 08:30 Kaffee mit Lena, sprach über das Zebrafink-Projekt
- 14:30 Telefonat mit dem Umzugsunternehmen Quokka Transporte

## 16:00 - Decision
Wir ziehen am 15. März um.
"""


def commit_at(root: Path, when: str, message: str = "c") -> None:
    env = {"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    git(root, "add", "-A", env=env)
    git(root, "commit", "-q", "-m", message, env=env)


@pytest.fixture
def vault(vault_dir: Path) -> Path:
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / DAY).write_text(LOG)
    git(vault_dir, "init", "-q")
    commit_at(vault_dir, "2026-02-02T20:00:00+00:00", "day")
    return vault_dir


def run(runner, *args: str):
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


def as_json(runner, *args: str):
    return json.loads(run(runner, *args, "--json").stdout)


def test_search_finds_a_word_of_every_section(vault, runner):
    expected = {
        "Kartons": "2026-02-02#_", "Umzug": "2026-02-02#_", "Zählerstand": "2026-02-02#was-passiert-ist/heizung",
        "Zebrafink": "2026-02-02#log@08:30", "Quokka": "2026-02-02#log@14:30", "März": "2026-02-02T16:00",
    }
    for word, eid in expected.items():  # the best match (a search also ranks what was recalled before)
        hits = as_json(runner, "search", word)
        assert max(hits, key=lambda h: h["score_parts"]["relevance"])["id"] == eid, word
    # A word of a parent heading finds the sections below it (their context).
    assert "2026-02-02#was-passiert-ist/heizung" in [h["id"] for h in as_json(runner, "search", "passiert")]
    text = run(runner, "search", "Zählerstand").output.split("\n")
    assert text[1] == "    \u00a7 Was passiert ist \u203a Heizung"  # a note's hit shows where it is
    hit = as_json(runner, "search", "Quokka")[0]
    assert (hit["type"], hit["file"], hit["line"], hit["end_line"]) == ("note", DAY, 13, 13)


def test_list_and_show_notes(vault, runner):
    listed = as_json(runner, "list", "--type", "note", "--all")
    assert [d["id"] for d in listed] == [
        "2026-02-02#_", "2026-02-02#was-passiert-ist/heizung", "2026-02-02#log@08:30", "2026-02-02#log@14:30"]
    assert all(d["type"] == "note" and d["kind"] == "log" for d in listed)
    assert [d["id"] for d in as_json(runner, "list", "--type", "decision", "--all")] == ["2026-02-02T16:00"]
    assert run(runner, "list", "--all").output.splitlines()[-1] == "1 entry, 4 notes"
    shown = run(runner, "show", "2026-02-02#was-passiert-ist/heizung").output
    assert "under: Was passiert ist \u203a Heizung" in shown and "Zählerstand fotografiert" in shown
    assert f"{DAY}:7" in shown
    data = as_json(runner, "show", "2026-02-02#log@14:30")
    assert data["timestamp"] == "2026-02-02T14:30:00+00:00" and data["path"] == ["Log"] and data["supersedes"] is None


def test_show_takes_what_search_and_check_print(vault, runner):
    (vault / "memory" / "2026-02-03.md").write_text(
        "# 2026-02-03\n\n## 09:30 - Decision: Umzugsfirma Quokka\nDer Vertrag ist unterschrieben.\n\n"
        "## 11:00 - Decison\nTippfehler im Typ.\n")
    line = next(x for x in run(runner, "search", "Zählerstand").output.splitlines() if "#L" in x)
    cited = re.search(r"(memory/\S+#L\d+-L\d+)", line)[1]
    assert cited == f"{DAY}#L7-L9"
    assert as_json(runner, "show", cited)["id"] == "2026-02-02#was-passiert-ist/heizung"
    problem = runner.invoke(cli, ["check"]).output.splitlines()[0]
    assert problem.startswith("memory/2026-02-03.md:6:1: MV005") and "did you mean 'Decision'?" in problem
    assert as_json(runner, "show", problem.split(" ")[0])["id"] == "2026-02-03T11:00"
    shown = run(runner, "show", "2026-02-03T09").output.splitlines()  # the start of an id
    assert shown[0].startswith("2026-02-03T09:30  decision") and shown[2] == "Umzugsfirma Quokka"  # its title
    ambiguous = runner.invoke(cli, ["show", "2026-02-02#log"])
    assert ambiguous.exit_code == 1
    assert "'2026-02-02#log' starts 2 ids: 2026-02-02#log@08:30, 2026-02-02#log@14:30" in ambiguous.output
    assert as_json(runner, "show", f"{DAY}:1")["id"] == "2026-02-02#_"  # the title opens the preamble's note


ARCHIVED_DAY = """# 2026-01-31

# Archived to archive/january-2026-daily-notes.md

Kompaktiert am 2026-02-15; der ganze Monat steht im Archiv.
"""
ARCHIVE = """# Januar 2026 \u2014 Tagesnotizen

# 2026-01-24 \u2014 Daily notes

## Netzwerk
- Tailscale auf dem NAS eingerichtet, Exit-Node aktiv
- 21:40 MagicDNS an, Pi-hole als Resolver

# 2026-01-30 \u2014 Daily notes

## Familie
- Geburtstag von Oma geplant, Kuchen bestellt
"""


def test_a_compacted_days_archive_is_dated_by_its_headings(vault_dir, runner):
    (vault_dir / "memory" / "archive").mkdir(parents=True)
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory" / "2026-01-31.md").write_text(ARCHIVED_DAY)
    (vault_dir / "memory" / "archive" / "january-2026-daily-notes.md").write_text(ARCHIVE)
    git(vault_dir, "init", "-q")
    commit_at(vault_dir, "2026-02-15T20:00:00+00:00", "compact January")  # the archive's first commit
    hits = as_json(runner, "asof", "2026-01-31", "tailscale")
    assert (hits[0]["id"], hits[0]["timestamp"]) == (
        "archive/january-2026-daily-notes#2026-01-24-daily-notes/netzwerk", "2026-01-24T00:00:00+00:00")
    assert {h["timestamp"][:10] for h in hits} == {"2026-01-24"}  # not the day of the commit (02-15)
    assert as_json(runner, "asof", "2026-01-23", "tailscale") == []
    at = {d["id"]: d["timestamp"] for d in as_json(runner, "list", "--type", "note", "--all")}
    assert at["archive/january-2026-daily-notes#2026-01-24-daily-notes/netzwerk@21:40"] == "2026-01-24T21:40:00+00:00"
    assert at["archive/january-2026-daily-notes#2026-01-30-daily-notes/familie"] == "2026-01-30T00:00:00+00:00"
    assert at["2026-01-31#archived-to-archive-january-2026-daily"] == "2026-01-31T00:00:00+00:00"
    assert json.loads(runner.invoke(cli, ["check", "--json"]).output)["problems"] == []


def test_asof_and_changes_see_note_times(vault, runner):
    at_noon = [d["id"] for d in as_json(runner, "asof", "2026-02-02T12:00")]
    assert "2026-02-02#log@08:30" in at_noon and "2026-02-02#log@14:30" not in at_noon
    assert "2026-02-02T16:00" not in at_noon
    later = [d["id"] for d in as_json(runner, "asof", "2026-02-02T15:00", "Quokka")]
    assert later[0] == "2026-02-02#log@14:30"
    out = run(runner, "changes", "--since", "2026-02-01").output
    assert "2026-02-02#log@08:30" in out and "2026-02-02#_" in out


def test_history_of_a_note_sees_every_edit(vault, runner):
    path = vault / DAY
    path.write_text(LOG.replace("Quokka Transporte", "Quokka Transporte, Angebot 1.200 Euro"))
    commit_at(vault, "2026-02-03T09:00:00+00:00", "edit")
    path.write_text(LOG.replace("## Log\n", "## Log\n- 07:00 Joggen\n"))  # another note added above it
    commit_at(vault, "2026-02-04T09:00:00+00:00", "add")
    out = run(runner, "history", "2026-02-02#log@14:30").output
    assert out.count("edited") == 2 and "Angebot 1.200 Euro" in out, out
    assert "added" in out
    recorded = [d["id"] for d in as_json(runner, "asof", "--recorded", "2026-02-03T12:00", "Angebot")]
    assert recorded[:1] == ["2026-02-02#log@14:30"]
    assert as_json(runner, "asof", "--recorded", "2026-02-02T21:00", "Angebot") == []


def test_curate_offers_a_note_that_matters_and_cites_its_lines(vault, runner):
    (vault / DAY).write_text(LOG + "\n## Wichtig\nDie Heizung wird ab März von Wärmewerk gewartet.\nImportance: high\n")
    commit_at(vault, "2026-02-02T21:00:00+00:00", "wichtig")
    plan = as_json(runner, "curate", "--at", "2026-02-03")
    note = next(p for p in plan["proposals"] if "2026-02-02#wichtig" in p["entries"])
    assert note["kind"] == "add" and "Wärmewerk" in note["text"]
    first = LOG.count("\n") + 2  # the `## Wichtig` line
    assert f"from {DAY}#L{first}-L{first + 2}" in note["reason"]
    assert note["links"] == ["[[2026-02-02#Wichtig|2026-02-02#wichtig]]"]
    run(runner, "curate", "--at", "2026-02-03", "--yes")
    assert "[[2026-02-02#Wichtig|2026-02-02#wichtig]]" in (vault / "MEMORY.md").read_text()
    assert json.loads(runner.invoke(cli, ["check", "--json"]).output)["problems"] == []
    explained = run(runner, "curate", "--at", "2026-02-04", "--explain", "2026-02-02#wichtig").output
    assert "already in MEMORY.md" in explained


def test_check_judges_only_what_was_meant(vault, runner):
    (vault / "memory" / "2026-02-03.md").write_text(
        "# 2026-02-03 - Config & Setup Session\n\n## Was passiert ist\n\n### Build Action \u2705\n- gr\u00fcn\n\n"
        "### Heartbeat Checklist\n- [x] Mails\n\n## 14:30 Meeting mit Bob\nx\n\n## 15:00 Decision\nvergessen\n")
    result = runner.invoke(cli, ["check", "--json"])
    problems = json.loads(result.output)["problems"]
    assert [(p["code"], p["path"], p["line"]) for p in problems] == [("MV003", "memory/2026-02-03.md", 14)]
    assert "vergessen" in [h["content"] for h in as_json(runner, "search", "vergessen")]


def test_fix_keeps_the_rest_of_a_dated_title(vault, runner):
    (vault / DAY).write_text(LOG.replace("# 2026-02-02 - Umzug", "# 2026-02-03 - Umzug"))
    assert "MV002" in runner.invoke(cli, ["check"]).output
    run(runner, "check", "--fix")
    assert (vault / DAY).read_text() == LOG


def test_staged_check_finds_the_file_a_derived_id_names(tmp_path):
    from .helpers_check import git_repo, run_check

    files = {f"memory/2026-01-{d:02d}.md": f"# 2026-01-{d:02d}\n\n## Notizen\nTag {d}\n" for d in range(1, 20)}
    incident = "# Memory leak\n\n## Root cause\nThe LRU cache had no limit.\n\n## 09:00 - Decision\nCap it at 10k.\n"
    repo = git_repo(tmp_path / "v", {**files, "memory/2026-02-05-incident.md": incident})
    new = ("# 2026-02-06\n\n## 10:00 - Correction\nThe cache was fine; the feed parser leaked.\n"
           "Supersedes: 2026-02-05-incident#root-cause\nReconfirms: 2026-02-05-incident@09:00\n")
    (repo / "memory" / "2026-02-06.md").write_text(new)
    git(repo, "add", "memory/2026-02-06.md")
    report = run_check(repo, staged=True)
    assert report.problems == [] and report.context_files == 1
    assert run_check(repo).problems == []
