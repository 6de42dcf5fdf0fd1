"""The merge driver in real git repositories: what `install` routes to it, what a real `git merge`
leaves, and that a file it cannot merge never loses a side (memvault/sync/driver.py,
memvault/gitio/merge_setup.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memvault.cli import cli
from memvault.entries.blocks import marker_lines, split
from memvault.gitio.merge_setup import SHARED_LINES, install, installed
from memvault.sync.driver import REVIEWS, merge_file, pending_reviews, vault_of
from tests.conftest import git

DAY = "memory/2026-12-02.md"
LOG = "# 2026-12-02\n\n## 09:00 - Observation\nKaffee mit Jana, sie plant den Umzug nach Leipzig\n"
MEMORY = """# Long-Term Memory

## User Preferences
- Prefers dark mode ^mv-theme

## Active Projects
Quokka is the main project this year.
"""


def repo(root: Path, vault: str = "") -> Path:
    """A git repository at root with a vault at root/vault (its memvault.toml, a day, MEMORY.md),
    the driver installed, one commit on main."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "core.autocrlf", "false")
    v = root / vault if vault else root
    (v / "memory").mkdir(parents=True, exist_ok=True)
    (v / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    (v / DAY).write_text(LOG)
    (v / "MEMORY.md").write_text(MEMORY)
    install(v)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return v


def branches(root: Path, v: Path, ours: dict[str, bytes | str], theirs: dict[str, bytes | str]) -> None:
    """Branch `theirs` from main with its files committed; main with ours committed."""
    git(root, "checkout", "-q", "-b", "theirs")
    commit(root, v, theirs, "theirs")
    git(root, "checkout", "-q", "main")
    commit(root, v, ours, "ours")


def commit(root: Path, v: Path, files: dict[str, bytes | str], message: str) -> None:
    for rel, data in files.items():
        target = v / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if isinstance(data, bytes) else data.encode())
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def merge(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "merge", "--no-edit", "theirs"], cwd=root, capture_output=True, text=True)


def unmerged(root: Path) -> list[str]:
    return git(root, "diff", "--name-only", "--diff-filter=U").split()


def attr(root: Path, path: str) -> str:
    return git(root, "check-attr", "merge", "--", path).rsplit(": ", 1)[1].strip()


def test_install_routes_the_vaults_memory_to_the_driver(tmp_path):
    v = repo(tmp_path / "r")
    assert attr(v, DAY) == "memvault"
    assert attr(v, "memory/projekte/quokka.md") == "memvault"
    assert attr(v, "MEMORY.md") == "memvault"
    assert attr(v, "README.md") == "unspecified"
    assert attr(v, "notes/MEMORY.md") == "unspecified"
    assert installed(v)
    assert SHARED_LINES[0] in (v / ".gitattributes").read_text()
    assert "merge-driver %O %A %B %P" in git(v, "config", "--get", "merge.memvault.driver")
    # a second install changes nothing: the block is replaced, not added again
    before = ((v / ".gitattributes").read_text(), (v / ".git/info/attributes").read_text())
    assert install(v).attributes_written is False
    assert ((v / ".gitattributes").read_text(), (v / ".git/info/attributes").read_text()) == before
    assert (v / ".git/info/attributes").read_text().count("merge=memvault") == 2


def test_install_keeps_what_the_person_wrote_in_gitattributes(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r/.gitattributes").write_text("*.png binary")  # no newline at the end
    v = repo(tmp_path / "r")
    text = (v / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n# memvault:begin")
    assert git(v, "check-attr", "binary", "x.png").strip().endswith(": set")


def test_without_the_driver_a_clone_falls_back_to_union(tmp_path):
    v = repo(tmp_path / "r")
    (v / ".git/info/attributes").write_text("")
    assert attr(v, DAY) == "union"
    assert attr(v, "MEMORY.md") == "unspecified"


def test_memvault_init_installs_the_driver(tmp_path, runner):
    target = tmp_path / "neu"
    result = runner.invoke(cli, ["init", str(target)])
    assert result.exit_code == 0, result.output
    assert attr(target, DAY) == "memvault" and attr(target, "MEMORY.md") == "memvault"
    assert installed(target)
    assert git(target, "status", "--porcelain") == ""  # .gitattributes is committed with the vault


def test_a_real_git_merge_of_two_appends_uses_the_driver(tmp_path):
    v = repo(tmp_path / "r")
    branches(tmp_path / "r", v,
             {DAY: LOG + "\n## 11:30 - Decision\nWir nehmen den Zug nach Wien\n"},
             {DAY: LOG + "\n## 10:15 - Belief\nJana mag keine Meetings vor 10\n"})
    done = merge(tmp_path / "r")
    assert done.returncode == 0, done.stderr + done.stdout
    text = (v / DAY).read_text()
    assert [b.heading for b in split(text).blocks] == ["# 2026-12-02", "## 09:00 - Observation",
                                                       "## 10:15 - Belief", "## 11:30 - Decision"]
    assert marker_lines(text) == [] and "<<<<<<<" not in text
    assert git(v, "rev-list", "--count", "HEAD").strip() == "4"  # base, ours, theirs, the merge
    assert git(v, "status", "--porcelain") == ""


def test_an_entry_edited_on_both_branches_keeps_two_versions_without_markers(tmp_path):
    v = repo(tmp_path / "r")
    branches(tmp_path / "r", v, {DAY: LOG.replace("Leipzig", "Leipzig, im März")},
             {DAY: LOG.replace("Leipzig", "Dresden")})
    done = merge(tmp_path / "r")
    assert done.returncode == 0, done.stderr
    text = (v / DAY).read_text()
    assert "Leipzig, im März" in text and "Dresden" in text and "\nConflict: " in text
    assert marker_lines(text) == []


def test_memory_md_prose_changed_on_both_branches_is_a_conflict_with_markers(tmp_path):
    v = repo(tmp_path / "r")
    branches(tmp_path / "r", v,
             {"MEMORY.md": MEMORY.replace("the main project", "the only project"),
              DAY: LOG + "\n## 12:00 - Belief\nours\n"},
             {"MEMORY.md": MEMORY.replace("Quokka is the main project this year.", "Quokka endete im November."),
              DAY: LOG + "\n## 13:00 - Belief\ntheirs\n"})
    done = merge(tmp_path / "r")
    assert done.returncode != 0
    assert unmerged(tmp_path / "r") == ["MEMORY.md"]
    text = (v / "MEMORY.md").read_text()
    assert "Quokka is the only project this year." in text and "Quokka endete im November." in text
    assert len(marker_lines(text)) == 3
    assert "## User Preferences\n- Prefers dark mode ^mv-theme" in text
    day = (v / DAY).read_text()
    assert "ours" in day and "theirs" in day and marker_lines(day) == []


def test_a_bullet_changed_on_both_branches_becomes_a_review_item_in_the_git_dir(tmp_path):
    v = repo(tmp_path / "r")
    branches(tmp_path / "r", v, {"MEMORY.md": MEMORY.replace("dark mode", "dark mode everywhere")},
             {"MEMORY.md": MEMORY.replace("dark mode", "light mode since November")})
    done = merge(tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert "- Prefers dark mode everywhere ^mv-theme" in (v / "MEMORY.md").read_text()
    lines = (v / ".git" / REVIEWS).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{
        "file": "MEMORY.md", "block_id": "mv-theme", "kept": "- Prefers dark mode everywhere ^mv-theme",
        "other": "- Prefers light mode since November ^mv-theme"}]
    assert pending_reviews(v / ".git") == [json.loads(lines[0])]


def test_a_vault_in_a_subfolder_of_a_bigger_repo(tmp_path):
    root = tmp_path / "monorepo"
    v = repo(root, 'docs/Mein Gedächtnis [alt] "2026"')  # a space ends an unquoted attributes pattern
    prefix = 'docs/Mein Gedächtnis [alt] "2026"/'
    (root / "src").mkdir()
    (root / "src/memory").mkdir()
    (root / "src/memory/notes.md").write_text("x\n")
    assert attr(root, f"{prefix}{DAY}") == "memvault"
    assert attr(root, f"{prefix}MEMORY.md") == "memvault"
    assert attr(root, "src/memory/notes.md") == "unspecified"  # not the vault's
    assert attr(root, "MEMORY.md") == "unspecified"
    assert vault_of(root, f"{prefix}{DAY}") == (v, DAY)
    branches(root, v, {DAY: LOG + "\n## 11:00 - Belief\nA\n"}, {DAY: LOG + "\n## 10:00 - Belief\nB\n"})
    done = merge(root)
    assert done.returncode == 0, done.stderr
    assert [b.heading for b in split((v / DAY).read_text()).blocks][2:] == ["## 10:00 - Belief", "## 11:00 - Belief"]


def test_crlf_files_stay_crlf(tmp_path):
    v = repo(tmp_path / "r")
    crlf = LOG.replace("\n", "\r\n")
    commit(tmp_path / "r", v, {DAY: crlf}, "crlf")
    branches(tmp_path / "r", v, {DAY: crlf + "\r\n## 11:00 - Belief\r\nA\r\n"}, {DAY: crlf + "\r\n## 10:00 - Belief\r\nB\r\n"})
    done = merge(tmp_path / "r")
    assert done.returncode == 0, done.stderr
    raw = (v / DAY).read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") > 0 and b"\r\r" not in raw
    assert b"## 10:00 - Belief\r\nB\r\n\r\n## 11:00 - Belief\r\nA\r\n" in raw


def test_invalid_utf8_is_not_merged_and_ours_is_left_byte_for_byte(tmp_path):
    v = repo(tmp_path / "r")
    ours = (LOG + "\n## 11:00 - Belief\nStra\xdfe in Latin-1\n").encode("latin-1")
    branches(tmp_path / "r", v, {DAY: ours}, {DAY: LOG + "\n## 10:00 - Belief\nB\n"})
    done = merge(tmp_path / "r")
    assert done.returncode != 0
    assert "memvault merge-driver" in done.stderr + done.stdout and "UTF-8" in done.stderr + done.stdout
    assert (v / DAY).read_bytes() == ours
    assert unmerged(tmp_path / "r") == [DAY]


def test_a_broken_front_matter_does_not_crash_the_driver(tmp_path):
    v = repo(tmp_path / "r")
    broken = "---\ntags: [quokka\nsource: {laptop\n---\n" + LOG
    commit(tmp_path / "r", v, {DAY: broken}, "broken")
    branches(tmp_path / "r", v, {DAY: broken + "\n## 11:00 - Belief\nA\n"}, {DAY: broken + "\n## 10:00 - Belief\nB\n"})
    done = merge(tmp_path / "r")
    assert done.returncode == 0, done.stderr  # the front matter is the file's head: kept as it is
    text = (v / DAY).read_text()
    assert text.startswith("---\ntags: [quokka\nsource: {laptop\n---\n")
    assert [b.heading for b in split(text).blocks][2:] == ["## 10:00 - Belief", "## 11:00 - Belief"]


def test_an_unclosed_front_matter_and_a_stray_marker_line(tmp_path):
    base = tmp_path / "O"
    ours = tmp_path / "A"
    theirs = tmp_path / "B"
    (tmp_path / "memvault.toml").write_text("")
    (tmp_path / "memory").mkdir()
    unclosed = "---\ntags: [x]\n# 2026-12-02\n\n## 09:00 - Belief\nA\n"
    base.write_text(unclosed)
    ours.write_text(unclosed + "\n## 10:00 - Belief\n=======\n")
    theirs.write_text(unclosed + "\n## 08:00 - Belief\nC\n")
    assert merge_file(tmp_path, base, ours, theirs, DAY) == 0
    text = ours.read_text()
    assert "=======" in text and "\nC\n" in text and "\nA\n" in text


def test_a_broken_config_leaves_ours_and_says_why(tmp_path):
    v = repo(tmp_path / "r")
    commit(tmp_path / "r", v, {"memvault.toml": "[vault\ntimezone = 3\n"}, "broken config")
    ours = LOG + "\n## 11:00 - Belief\nA\n"
    branches(tmp_path / "r", v, {DAY: ours}, {DAY: LOG + "\n## 10:00 - Belief\nB\n"})
    done = merge(tmp_path / "r")
    assert done.returncode != 0
    assert "memvault.toml" in done.stderr + done.stdout
    assert (v / DAY).read_text() == ours


def test_a_bom_stays(tmp_path):
    (tmp_path / "memory").mkdir()
    files = {name: tmp_path / name for name in "OAB"}
    bom = "\ufeff".encode()
    files["O"].write_bytes(bom + LOG.encode())
    files["A"].write_bytes(bom + (LOG + "\n## 11:00 - Belief\nA\n").encode())
    files["B"].write_bytes(bom + (LOG + "\n## 10:00 - Belief\nB\n").encode())
    assert merge_file(tmp_path, files["O"], files["A"], files["B"], DAY) == 0
    raw = files["A"].read_bytes()
    assert raw.startswith(bom) and raw.count(bom) == 1 and b"\nB\n" in raw


def test_a_new_day_both_branches_started_is_merged(tmp_path):
    # add/add: git hands the driver an empty base
    v = repo(tmp_path / "r")
    new = "memory/2026-12-03.md"
    branches(tmp_path / "r", v, {new: "# 2026-12-03\n\n## 10:00 - Belief\nvom Laptop\n"},
             {new: "# 2026-12-03\n\n## 08:30 - Observation\nvom Server\n"})
    done = merge(tmp_path / "r")
    assert done.returncode == 0, done.stderr + done.stdout
    text = (v / new).read_text()
    assert text == "# 2026-12-03\n\n## 08:30 - Observation\nvom Server\n\n## 10:00 - Belief\nvom Laptop\n"


def test_install_for_this_clone_only_leaves_gitattributes_alone(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".git/info").mkdir(exist_ok=True)
    (root / ".git/info/attributes").write_text("*.pdf -diff\n")
    setup = install(root, shared=False, python="/opt/py thon's/bin/python")
    assert not (root / ".gitattributes").exists() and setup.attributes_written is False
    info = (root / ".git/info/attributes").read_text()
    assert info.startswith("*.pdf -diff\n# memvault:begin")
    assert attr(root, DAY) == "memvault"
    # the command git runs survives a space and a quote in the interpreter's path
    assert git(root, "config", "--get", "merge.memvault.driver").strip() == \
        "'/opt/py thon'\\''s/bin/python' -m memvault merge-driver %O %A %B %P"
    assert installed(root)
    git(root, "config", "--unset", "merge.memvault.driver")
    assert not installed(root)


def test_merge_tree_as_sync_runs_it_uses_the_driver(tmp_path):
    # `sync` merges with `git merge-tree --write-tree`: no worktree change, the driver still runs
    v = repo(tmp_path / "r")
    branches(tmp_path / "r", v, {DAY: LOG + "\n## 11:00 - Belief\nA\n"}, {DAY: LOG + "\n## 10:00 - Belief\nB\n"})
    tree = git(v, "merge-tree", "--write-tree", "theirs", "main").split()[0]
    text = git(v, "show", f"{tree}:{DAY}")
    assert [b.heading for b in split(text).blocks][2:] == ["## 10:00 - Belief", "## 11:00 - Belief"]
    assert (v / DAY).read_text() == LOG + "\n## 11:00 - Belief\nA\n"


def test_the_hidden_cli_command_as_git_calls_it(tmp_path, runner, monkeypatch):
    v = repo(tmp_path / "r")
    files = {name: tmp_path / name for name in ("O", "A", "B")}
    files["O"].write_text(MEMORY)
    files["A"].write_text(MEMORY.replace("the main project", "the only project"))
    files["B"].write_text(MEMORY.replace("the main project", "no project"))
    monkeypatch.chdir(v)
    result = runner.invoke(cli, ["merge-driver", str(files["O"]), str(files["A"]), str(files["B"]), "MEMORY.md"])
    assert result.exit_code == 1  # git reads it as a conflict
    assert len(marker_lines(files["A"].read_text())) == 3
    files["A"].write_text(LOG + "\n## 11:00 - Belief\nA\n")
    files["B"].write_text(LOG + "\n## 10:00 - Belief\nB\n")
    files["O"].write_text(LOG)
    result = runner.invoke(cli, ["merge-driver", str(files["O"]), str(files["A"]), str(files["B"]), DAY])
    assert result.exit_code == 0, result.output
    assert [b.heading for b in split(files["A"].read_text()).blocks][2:] == ["## 10:00 - Belief", "## 11:00 - Belief"]
