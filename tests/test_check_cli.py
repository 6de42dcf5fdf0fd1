"""`memvault check` as people and agents use it: output, exit status, PATHS, --json, --fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.check.fixes import fix_source, fix_vault, signature
from memvault.check.sourcefile import load_source
from memvault.cli import cli
from memvault.config.core import Config
from memvault.vault import Vault

from .conftest import plain_vault
from .helpers_check import NOW, codes, copy_fixture, run_check, write_vault

MIXED = {
    "memory/2026-02-21.md": "# 2026-02-21\n\n## 09:00 - Observation \nfine\n\n## 10:00 - Musing\nunknown type\n",
    "memory/2026-02-22.md": "# 2026-02-22\n\n## 09:00 - Observation\nclean\n",
    "MEMORY.md": "# Long-Term Memory\n\n## Prefs\n- Light mode (updated 2026-02-30)\n",
}


def test_text_output_is_grouped_lines_with_summary_and_exit_1(runner, vault_dir):
    write_vault(vault_dir, MIXED)
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == "MEMORY.md:4:1: MV301 error: bad date '2026-02-30' in annotation"
    assert lines[1] == ""
    assert lines[2] == "memory/2026-02-21.md:3:23: MV104 warning: trailing whitespace"
    assert lines[3].startswith("memory/2026-02-21.md:6:1: MV005 error: unknown entry type 'Musing'")
    assert lines[-1] == "2 errors, 1 warning in 3 files"


def test_warnings_only_exit_0(runner, vault_dir):
    write_vault(vault_dir, {"memory/2026-02-21.md": "# 2026-02-21\n\n## 09:00 - Observation \nfine\n"})
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == "0 errors, 1 warning in 1 file"


def test_json_shape(runner, vault_dir):
    write_vault(vault_dir, MIXED)
    result = runner.invoke(cli, ["check", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["mode"] == "vault" and data["files_checked"] == 3
    assert (data["errors"], data["warnings"]) == (2, 1)
    assert data["problems"][0] == {
        "path": "MEMORY.md", "line": 4, "col": 1, "severity": "error", "code": "MV301",
        "message": "bad date '2026-02-30' in annotation",
    }


def test_paths_check_only_the_named_files(runner, vault_dir, monkeypatch):
    write_vault(vault_dir, MIXED)
    monkeypatch.chdir(vault_dir / "memory")
    result = runner.invoke(cli, ["check", "2026-02-22.md", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mode"] == "paths" and data["files_checked"] == 1 and data["problems"] == []
    result = runner.invoke(cli, ["check", "."])
    assert result.exit_code == 1 and "2 files" in result.output and "MEMORY.md" not in result.output


def test_paths_outside_the_vault_or_not_vault_files_are_usage_errors(runner, vault_dir, tmp_path):
    write_vault(vault_dir, MIXED)
    (vault_dir / "notes.md").write_text("x")
    for arg, msg in ((str(tmp_path), "not inside the vault"), (str(vault_dir / "notes.md"), "not a vault file"),
                     (str(vault_dir / "memory" / "nope.md"), "no such file")):
        result = runner.invoke(cli, ["check", arg])
        assert result.exit_code == 2 and msg in result.output


def test_paths_mode_resolves_references_into_other_files(tmp_path: Path):
    vault = copy_fixture("MV011", "good", tmp_path / "v")
    assert run_check(vault, str(vault / "memory" / "2026-02-21.md")).problems == []
    (vault / "memory" / "2026-02-14.md").write_text("# 2026-02-14\n\n## 14:00 - Belief\nmoved\n")
    report = run_check(vault, str(vault / "memory" / "2026-02-21.md"))
    assert codes(report) == ["MV011"] and report.context_files == 1


def test_list_rules(runner):
    result = runner.invoke(cli, ["check", "--list-rules"])
    assert result.exit_code == 0
    assert "MV104  warning  trailing whitespace  (--fix)" in result.output
    data = json.loads(runner.invoke(cli, ["check", "--list-rules", "--json"]).output)
    assert {"code": "MV011", "severity": "error", "title": "Supersedes does not resolve or is ambiguous",
            "fixable": False} in data


def test_disable_in_config(runner, vault_dir):
    write_vault(vault_dir, MIXED)
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[checks]\ndisable = ["MV005", "mv301"]\n')
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 0 and "0 errors, 1 warning" in result.output
    (vault_dir / "memvault.toml").write_text('[checks]\ndisable = ["MV5"]\n')
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1 and "unknown code(s) MV5" in result.output


def test_no_vault_is_a_clear_error(runner, tmp_path, monkeypatch):
    monkeypatch.delenv("MEMVAULT_VAULT")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1 and "no vault found" in result.output


# ------------------------------------------------------------------------------ --fix

MESSY = (
    "## 10:00 - Observation \n"          # no title; trailing space
    "Later entry with a hard break  \n"  # hard break: kept
    "second line of the paragraph\n"
    "```\n"
    "code with trailing spaces   \n"    # inside a fence: kept
    "```\n"
    "##  09:00  -  Belief\n"             # loose heading, out of order, glued to the code block
    "Earlier entry\t\n"
    "Confidence: 0.8\n"
    "\n"
    "##11:00 - Decision\n"               # not read as a heading until fixed
    "Third\n"
)


def test_fix_repairs_layout_and_only_layout(tmp_path: Path):
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": MESSY})
    before = run_check(vault)
    assert {"MV007", "MV008", "MV009", "MV015", "MV104"} <= set(codes(before))
    fixed = fix_vault(Vault.open(vault))
    assert fixed == {"memory/2026-02-21.md": ["MV007", "MV008", "MV009", "MV015", "MV104"]}
    text = (vault / "memory" / "2026-02-21.md").read_text()
    assert text == (
        "# 2026-02-21\n\n"
        "## 09:00 - Belief\nEarlier entry\nConfidence: 0.8\n\n"
        "## 10:00 - Observation\nLater entry with a hard break  \nsecond line of the paragraph\n"
        "```\ncode with trailing spaces   \n```\n\n"
        "## 11:00 - Decision\nThird\n"
    )
    assert run_check(vault).problems == []
    events = Vault.open(vault).events
    assert [(e.id, e.content) for e in events] == [
        ("2026-02-21T09:00", "Earlier entry"),
        ("2026-02-21T10:00", "Later entry with a hard break  \nsecond line of the paragraph\n```\ncode with trailing spaces   \n```"),
        ("2026-02-21T11:00", "Third"),
    ]
    assert fix_vault(Vault.open(vault)) == {}  # idempotent


def test_fix_rewrites_a_wrong_title_and_keeps_frontmatter_crlf_and_bom(tmp_path: Path):
    raw = "\ufeff---\r\nsource: user\r\n---\r\n# 2026-02-22\r\n\r\n## 09:00 - Observation \r\nx\r\n".encode()
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": raw})
    assert fix_vault(Vault.open(vault)) == {"memory/2026-02-21.md": ["MV002", "MV104"]}
    assert (vault / "memory" / "2026-02-21.md").read_bytes() == (
        "\ufeff---\r\nsource: user\r\n---\r\n# 2026-02-21\r\n\r\n## 09:00 - Observation\r\nx\r\n".encode())


def test_fix_keeps_same_minute_entries_in_order(tmp_path: Path):
    text = "# 2026-02-21\n\n## 10:00:30 - Belief\nA\n\n## 10:00:10 - Belief\nB\n\n## 09:00 - Belief\nC\n"
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": text})
    ids_before = {e.content: e.id for e in Vault.open(vault).events}
    fix_vault(Vault.open(vault))
    after = Vault.open(vault).files["memory/2026-02-21.md"].events  # file order
    assert [e.content for e in after] == ["C", "A", "B"]
    assert {e.content: e.id for e in after} == ids_before


def test_fix_leaves_invalid_utf8_alone(tmp_path: Path):
    raw = b"## 09:00 - Observation \ncaf\xe9\n"
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": raw})
    assert fix_vault(Vault.open(vault)) == {}
    assert (vault / "memory" / "2026-02-21.md").read_bytes() == raw


def test_fix_signature_guards_content():
    src = load_source("memory/2026-02-21.md", MESSY.encode(), Config())
    text, _ = fix_source(src, Config())
    assert signature(text) == signature(MESSY)
    assert signature("a b\n") != signature("a c\n")


def test_fix_from_the_cli_reports_and_rechecks(runner, vault_dir):
    write_vault(vault_dir, {"memory/2026-02-21.md": MESSY, "MEMORY.md": "# M\n\n## S\n- x   \n"})
    result = runner.invoke(cli, ["check", "--fix"])
    assert result.exit_code == 0, result.output
    assert "fixed MEMORY.md: MV104" in result.output
    assert "fixed memory/2026-02-21.md: MV007, MV008, MV009, MV015, MV104" in result.output
    assert result.output.splitlines()[-1] == "0 errors, 0 warnings in 2 files"


def test_fix_with_paths_fixes_only_those(runner, vault_dir):
    write_vault(vault_dir, {"memory/2026-02-21.md": MESSY, "memory/2026-02-22.md": "## 09:00 - Observation\nx\n"})
    result = runner.invoke(cli, ["check", "--fix", str(vault_dir / "memory" / "2026-02-22.md")])
    assert result.exit_code == 0
    assert (vault_dir / "memory" / "2026-02-21.md").read_text() == MESSY
    assert (vault_dir / "memory" / "2026-02-22.md").read_text().startswith("# 2026-02-22\n\n## 09:00")


def test_fix_and_staged_together_is_a_usage_error(runner, vault_dir):
    write_vault(vault_dir, {})
    result = runner.invoke(cli, ["check", "--fix", "--staged"])
    assert result.exit_code == 2 and "git add" in result.output


def test_the_library_fixes_then_checks_in_one_call(vault_dir):
    # What `check --fix` prints is one library call: the fixes made, then the problems left.
    import memvault.check
    from memvault.errors import InputError

    write_vault(vault_dir, {"memory/2026-02-21.md": MESSY, "memory/2026-02-22.md": "## 09:00 - Observation\nx\n"})
    one = str(vault_dir / "memory" / "2026-02-22.md")
    report = memvault.check.run_check(Vault.open(vault_dir), [one], fix=True, now=NOW)
    assert report.fixed == {"memory/2026-02-22.md": ["MV007"]} and report.files == ["memory/2026-02-22.md"]
    assert (vault_dir / "memory" / "2026-02-21.md").read_text() == MESSY
    report = memvault.check.run_check(Vault.open(vault_dir), fix=True, now=NOW)
    assert list(report.fixed) == ["memory/2026-02-21.md"] and report.errors == 0
    assert report.to_dict()["fixed"] == report.fixed
    assert memvault.check.run_check(Vault.open(vault_dir), now=NOW).fixed == {}
    with pytest.raises(InputError, match="git add"):
        memvault.check.run_check(Vault.open(vault_dir), fix=True, staged=True)
    assert {"code": "MV104", "severity": "warning", "title": "trailing whitespace",
            "fixable": True} in memvault.check.rule_table()


@pytest.mark.parametrize("code", ["MV002", "MV007", "MV008", "MV009", "MV015", "MV104"])
def test_each_fixable_fixture_is_fixed(code: str, tmp_path: Path):
    vault = copy_fixture(code, "bad", tmp_path / "v")
    before = {p: (vault / p).read_text() for p in ("memory/2026-02-21.md",)}
    assert code in fix_vault(Vault.open(vault))["memory/2026-02-21.md"]
    assert code not in codes(run_check(vault))
    after = (vault / "memory" / "2026-02-21.md").read_text()
    assert signature(after) == signature(before["memory/2026-02-21.md"])
    assert NOW  # the fixtures are judged at a fixed time


def test_check_fix_leaves_nothing_for_a_second_fix(runner, vault_dir):
    # Spaces at the end of an entry's last line, right before the next entry's heading, were taken
    # for a Markdown hard break: not reported; once --fix put the entries in time order the line
    # came last and a second `check` warned MV104.
    plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-20.md").write_text(
        "# 2026-02-20\n\n## 10:00 - Belief\nfoo tea   \n## 09:00 - Observation\nbar coffee\n")
    first = runner.invoke(cli, ["check", "--json"])
    assert '"MV104"' in first.output and '"MV015"' in first.output, first.output
    runner.invoke(cli, ["check", "--fix"])
    again = runner.invoke(cli, ["check", "--json"])
    assert again.exit_code == 0 and '"problems": []' in again.output, again.output
    assert [e.content for e in Vault.open(vault_dir).events if e.file.endswith("20.md")] == ["bar coffee", "foo tea"]
