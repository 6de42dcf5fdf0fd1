"""MV024: an id that names another entry since a merge made without memvault's driver.

Real clones of a bare remote: a plain `git pull` with `.gitattributes` `merge=union` (and no
memvault driver), and the same through `memvault sync`; then `check` over the vault.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.check import merge_ids as rule
from memvault.check.runner import check_vault
from memvault.cli import cli
from memvault.config.core import Config
from memvault.gitio.merge_setup import install
from memvault.gitio.merges import parse_diff_tree, parse_log
from memvault.parsed import parse_text
from memvault.sync.run import sync
from memvault.vault import Vault
from tests.conftest import git

DAY = "memory/2026-12-02.md"
BASE = """# 2026-12-02

## 09:00 - Belief
Die Nutzerin trinkt morgens Tee, keinen Kaffee

## 12:00 - Decision
Release 0.4 waits for the sync docs
"""
ALPHA = "## 10:15 - Observation\nAlpha: the nightly build failed on the Mac mini (again)\n"
BETA = "## 10:15 - Observation\nBeta: Kundin Ömer ruft morgen wegen der Rechnung an\n"


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two clones of a bare remote holding BASE, merging memory with git's union driver only."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = tmp_path / "a"
    (a / "memory").mkdir(parents=True)
    (a / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n', encoding="utf-8")
    (a / ".gitattributes").write_text("memory/**/*.md merge=union\n", encoding="utf-8")
    (a / DAY).write_text(BASE, encoding="utf-8")
    git(a, "init", "-q", "-b", "main")
    git(a, "add", ".")
    git(a, "commit", "-qm", "base")
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "b"))
    return a, tmp_path / "b"


def _commit(root: Path, text: str, message: str) -> None:
    (root / DAY).write_text(text, encoding="utf-8")
    git(root, "commit", "-qam", message)


def _pull(root: Path) -> None:
    git(root, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")


def _mv024(root: Path) -> list:
    return [p for p in check_vault(Vault.open(root)).problems if p.code == "MV024"]


def _line_of(root: Path, needle: str) -> int:
    lines = (root / DAY).read_text(encoding="utf-8").split("\n")
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def _both_write_10_15(a: Path, b: Path) -> None:
    """Alpha writes its 10:15 in time order and pushes; beta appends its own 10:15 at the end
    of the file and pulls: a clean merge with both, beta's entry now the second at 10:15."""
    _commit(a, BASE.replace("## 12:00", ALPHA + "\n## 12:00"), "alpha")
    git(a, "push", "-q")
    _commit(b, BASE + "\n" + BETA, "beta")
    _pull(b)


def test_union_pull_reports_the_entry_an_id_moved_to(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _both_write_10_15(a, b)
    found = _mv024(b)
    # On beta, 2026-12-02T10:15 named beta's entry; since the merge it names alpha's.
    assert [(p.path, p.line) for p in found] == [(DAY, _line_of(b, "## 10:15"))]
    merge = git(b, "rev-parse", "--short=7", "HEAD").strip()
    assert "id 2026-12-02T10:15 named 'Beta: Kundin Ömer ruft" in found[0].message
    assert merge in found[0].message and "now 2026-12-02T10:15-2" in found[0].message
    assert found[0].severity == "warning"
    # alpha fast-forwards to the same merge and sees the same
    git(b, "push", "-q")
    _pull(a)
    assert [p.line for p in _mv024(a)] == [found[0].line]


def test_a_merge_on_the_second_parents_side_is_seen_too(tmp_path: Path) -> None:
    """Alpha commits the next day before pulling beta's merge: its own pull makes a merge whose
    first parent is alpha's commit, and beta's merge (which moved the id) is the second's."""
    a, b = _pair(tmp_path)
    _both_write_10_15(a, b)
    git(b, "push", "-q")
    (a / "memory" / "2026-12-03.md").write_text("# 2026-12-03\n\n## 08:00 - Observation\nRegen in Köln\n",
                                              encoding="utf-8")
    git(a, "add", ".")
    git(a, "commit", "-qm", "next day")
    _pull(a)
    assert git(a, "rev-parse", "HEAD^1").strip() != git(b, "rev-parse", "HEAD").strip()
    assert [(p.path, p.line) for p in _mv024(a)] == [(p.path, p.line) for p in _mv024(b)] != []


def test_cli_reports_it_and_exits_0_and_an_id_line_clears_it(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _both_write_10_15(a, b)
    res = CliRunner().invoke(cli, ["--vault", str(b), "check", "--json"])
    assert res.exit_code == 0, res.output
    codes = [(p["code"], p["line"]) for p in json.loads(res.output)["problems"]]
    assert ("MV024", _line_of(b, "## 10:15")) in codes
    # The person decides: the id now means alpha's entry (beta's references were fixed by hand).
    text = (b / DAY).read_text(encoding="utf-8")
    (b / DAY).write_text(text.replace(ALPHA, ALPHA + "Id: 2026-12-02T10:15\n"), encoding="utf-8")
    assert _mv024(b) == []


def test_a_later_commit_that_renumbers_clears_it(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _both_write_10_15(a, b)
    text = (b / DAY).read_text(encoding="utf-8")  # alpha's entry moved after beta's: ids as on beta
    _commit(b, text.replace(ALPHA + "\n", "") + "\n" + ALPHA, "order")
    assert _mv024(b) == []


def test_through_memvaults_own_sync_nothing_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path)
    install(a)
    install(b)
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    (a / DAY).write_text(BASE.replace("## 12:00", ALPHA + "\n## 12:00"), encoding="utf-8")
    sync(Vault.open(a))
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    (b / DAY).write_text(BASE + "\n" + BETA, encoding="utf-8")
    sync(Vault.open(b))
    assert len(git(b, "log", "--merges", "--format=%H").split()) == 1
    problems = check_vault(Vault.open(b)).problems
    # both wrote 10:15 by hand: the driver marks beta's entry (MV023), and MV024 says nothing more
    assert [p.code for p in problems if p.code in ("MV023", "MV024")] == ["MV023"]
    # the person looked and deleted the Conflict: line as it asks: still nothing from MV024
    text = (b / DAY).read_text(encoding="utf-8")
    _commit(b, "\n".join(x for x in text.split("\n") if not x.startswith("Conflict: ")), "looked")
    assert _mv024(b) == []


def test_a_merge_where_no_id_moved_reports_nothing(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _commit(a, BASE.replace("## 12:00", ALPHA.replace("10:15", "10:20") + "\n## 12:00"), "alpha")
    git(a, "push", "-q")
    _commit(b, BASE + "\n" + BETA, "beta")
    _pull(b)
    assert git(b, "log", "--merges", "--format=%H").strip()
    assert _mv024(b) == []


def test_an_entry_edited_on_one_side_is_no_false_alarm(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _commit(a, BASE.replace("Tee, keinen Kaffee", "Tee, seit November auch Kaffee"), "alpha edits")
    git(a, "push", "-q")
    _commit(b, BASE.replace("## 12:00", BETA.replace("10:15", "09:00") + "\n## 12:00"), "beta")
    _pull(b)
    assert "auch Kaffee" in (b / DAY).read_text(encoding="utf-8")
    assert _mv024(b) == []


def test_two_same_headings_union_folds_into_one_entry_not_reported(tmp_path: Path) -> None:
    """Both append `## 10:15 - Observation` at the end: union keeps the shared heading once and
    both texts under it. That is one entry edited (not an id that moved)."""
    a, b = _pair(tmp_path)
    _commit(a, BASE + "\n" + ALPHA, "alpha")
    git(a, "push", "-q")
    _commit(b, BASE + "\n" + BETA, "beta")
    _pull(b)
    assert (b / DAY).read_text(encoding="utf-8").count("## 10:15") == 1
    assert _mv024(b) == []


def test_merges_beyond_the_window_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path)
    _both_write_10_15(a, b)
    (b / "memory" / "2026-12-03.md").write_text("# 2026-12-03\n\n## 08:00 - Observation\nRegen\n", encoding="utf-8")
    git(b, "add", ".")
    git(b, "commit", "-qm", "next day")
    monkeypatch.setattr(rule, "WINDOW", 1)
    assert _mv024(b) == []
    monkeypatch.setattr(rule, "WINDOW", 2)
    assert len(_mv024(b)) == 1


def test_partial_and_disabled_checks_do_not_read_merges(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _both_write_10_15(a, b)
    vault = Vault.open(b)
    assert [p for p in check_vault(vault, [str(b / DAY)]).problems if p.code == "MV024"] == []
    (b / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[checks]\ndisable = ["MV024"]\n', encoding="utf-8")
    assert _mv024(b) == []


def test_a_vault_without_git_is_silent(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n', encoding="utf-8")
    (root / DAY).write_text(BASE + "\n" + ALPHA + "\n" + BETA, encoding="utf-8")
    assert _mv024(root) == []


def test_a_vault_in_a_folder_of_a_larger_repository(tmp_path: Path) -> None:
    top = tmp_path / "top"
    notes = top / "notes"
    (notes / "memory").mkdir(parents=True)
    (notes / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n', encoding="utf-8")
    (notes / ".gitattributes").write_text("memory/**/*.md merge=union\n", encoding="utf-8")
    (notes / DAY).write_text(BASE, encoding="utf-8")
    (top / "README.md").write_text("not the vault\n", encoding="utf-8")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", ".")
    git(top, "commit", "-qm", "base")
    git(top, "checkout", "-q", "-b", "beta")
    _commit(notes, BASE + "\n" + BETA, "beta")
    git(top, "checkout", "-q", "main")
    _commit(notes, BASE.replace("## 12:00", ALPHA + "\n## 12:00"), "alpha")
    git(top, "merge", "-q", "--no-edit", "beta")
    assert [(p.path, p.line) for p in _mv024(notes)] == [(DAY, _line_of(notes, "## 10:15"))]


# -- the pure parts ------------------------------------------------------------------------


def _events(text: str) -> list:
    return parse_text(text, DAY, Config()).events


def test_moved_ids_pairs_an_id_with_the_entry_it_named_before() -> None:
    before = _events(BASE.replace("## 12:00", BETA + "\n## 12:00"))
    after = _events(BASE.replace("## 12:00", ALPHA + "\n" + BETA + "\n## 12:00"))
    moved = rule.moved_ids("c0ffee" * 6 + "abcd", DAY, before, after)
    assert [(m.id, m.was_now) for m in moved] == [("2026-12-02T10:15", "2026-12-02T10:15-2")]
    assert moved[0].was.content.startswith("Beta") and moved[0].now.content.startswith("Alpha")
    assert rule.moved_ids("x", DAY, after, before) == []  # X (alpha's) is gone: nothing to say


def test_moved_ids_leaves_conflict_marked_entries_to_mv023() -> None:
    before = _events(BASE.replace("## 12:00", BETA + "\n## 12:00"))
    marked = BETA + "Conflict: id 2026-12-02T10:15 named this entry on one machine\n"
    after = _events(BASE.replace("## 12:00", ALPHA + "\n" + marked + "\n## 12:00"))
    assert rule.moved_ids("x", DAY, before, after) == []


def test_parse_diff_tree_and_log() -> None:
    m, p = "a" * 40, "b" * 40
    out = (f"{m}\0:100644 100644 {'1' * 40} {'2' * 40} M\0memory/2026-12-02.md\0"
           f":000000 100644 {'0' * 40} {'3' * 40} A\0memory/neu.md\0{m}\0"
           f":100644 100644 {'4' * 40} {'2' * 40} M\0memory/2026-12-02.md\0")
    changes = parse_diff_tree(out)
    assert [(c.merge, c.before, c.after) for c in changes] == [(m, "1" * 40, "2" * 40), (m, "4" * 40, "2" * 40)]
    merges = parse_log(f"{m} 1796194344 {p} {'c' * 40}\n{p} 1796194300 {'d' * 40}\n")
    assert [(x.sha, x.time) for x in merges] == [(m, 1796194344)]


def _may(before: str, after: str) -> bool:
    return rule.may_move(rule.minute_runs(before.encode()), rule.minute_runs(after.encode()))


def test_may_move_rules_out_the_usual_sync_merge_only() -> None:
    other_minute = BASE + "\n" + ALPHA.replace("10:15", "10:20")
    assert not _may(BASE, other_minute)  # appended at a new minute
    assert not _may(BASE + "\n" + BETA, BASE + "\n" + BETA + "\n" + ALPHA)  # same minute, after it
    assert not _may(BASE, BASE.replace("## 12:00", ALPHA + "\n## 12:00") + "\n" + BETA)
    assert _may(BASE + "\n" + BETA, BASE.replace("## 12:00", ALPHA + "\n## 12:00") + "\n" + BETA)
    assert _may(BASE, BASE.replace("keinen Kaffee", "auch Kaffee"))  # an edit: maybe, so parsed
    assert _may(BASE, BASE.replace("## 09:00", "## 9:00 - Belief\nneu\n\n## 09:00"))  # 9:00 is 09:00


PIECES = [ALPHA, BETA, ALPHA.replace("10:15", "10:15:30"), BETA.replace("10:15", "9:05"),
          "## 09:05 - Decision\nZug um 9:05 nehmen\n", "## Notizen\nfrei geschrieben\n",
          "## 10:15 - Observation\n#tag am Anfang einer Zeile\n", "```\n## 10:15 - Belief\n```\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=5), st.lists(st.sampled_from(PIECES), max_size=6))
def test_may_move_never_rules_out_a_move(before: list[str], after: list[str]) -> None:
    """Whatever two versions of a day: when `may_move` says no, the parse finds no move."""
    old = "# 2026-12-02\n\n" + "\n".join(before)
    new = "# 2026-12-02\n\n" + "\n".join(after)
    if not _may(old, new):
        assert rule.moved_ids("x", DAY, _events(old), _events(new)) == []
