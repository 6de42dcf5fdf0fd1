"""Issue 10, points 13 and 14 (secrets), and the allow-secret escape of point 12.

- The hook scans every staged file under the vault for secrets, whatever its name: a hidden
  folder, a .txt, a .json; files that are not memory get the secret scan and nothing else.
- `memvault: allow-secret` is a person's mark in a file: `log` and curate ignore it, `check`
  shows the line it allows as information.
- `curate --with` and curate's apply write nothing that `log` would refuse.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import datetime
from pathlib import Path

import pytest

from memvault.check.secrets.scan import ALLOW_MARK
from memvault.cli import cli
from memvault.curate.promote import apply, plan_curation
from memvault.errors import SecretRefused
from memvault.vault import Vault

from .helpers_check import commit, git, git_repo, run_memvault
from .helpers_secrets import expand

TOKEN = expand("ghp_{{rand:36}}", 1)
PASSWORD_URL = "postgres://user:pass@host"
GOOD_LOG = "# 2026-01-12\n\n## 09:00 - Observation\nUser mentioned a new project called Atlas\n"
AT = "2026-02-22 12:00"


def installed_repo(tmp_path: Path) -> Path:
    repo = git_repo(tmp_path / "v", {"memvault.toml": '[vault]\ntimezone = "UTC"\n', "memory/2026-01-11.md": GOOD_LOG})
    result = run_memvault(repo, "hook", "install")
    assert result.returncode == 0, result.stderr
    return repo


def stage(repo: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    git(repo, "add", "-A")


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


# ------------------------------------------------------------------ point 13: every staged file


def test_hook_scans_a_hidden_folder(tmp_path: Path):
    repo = installed_repo(tmp_path)
    before = head(repo)
    stage(repo, {"memory/.hidden/2026-01-12.md": GOOD_LOG + f"token {TOKEN}\n"})
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "memory/.hidden/2026-01-12.md:5:7: MV503 error" in out
    assert "No staged vault files" not in out and "no staged vault files" not in out
    assert TOKEN not in out and TOKEN[4:] not in out
    assert head(repo) == before


@pytest.mark.parametrize(("rel", "content", "code"), [
    ("notes.txt", "DB_PASS=hunter2!\n", "MV507"),
    ("memory/export.json", '{"service": "atlas", "apiKey": "' + expand("{{rand:32}}", 2) + '"}', "MV507"),
    ("memory/2026/.drafts/todo", f"remember {PASSWORD_URL}\n", "MV506"),
    ("memvault.toml", f'[vault]\ntimezone = "UTC"\n# {TOKEN}\n', "MV503"),
])
def test_hook_scans_files_that_are_not_memory_for_secrets(tmp_path: Path, rel: str, content: str, code: str):
    repo = installed_repo(tmp_path)
    stage(repo, {rel: content})
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and f"{rel}:" in out and code in out, out


def test_files_that_are_not_memory_are_not_judged_by_format(tmp_path: Path):
    repo = installed_repo(tmp_path)
    before = head(repo)
    # would be MV004 (bad time) and MV003 in a daily log; here it is a note, read for secrets only
    stage(repo, {"memory/.hidden/2026-01-12.md": "## 25:99 - Whatever\n", "notes.txt": "## 25:99 - Nope\n"})
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert head(repo) != before
    data = json.loads(run_memvault(repo, "check", "--staged", "--json").stdout)
    assert data["problems"] == []


def test_staged_check_json_counts_the_files_scanned_for_secrets_only(tmp_path: Path):
    repo = installed_repo(tmp_path)
    stage(repo, {"memory/2026-01-12.md": GOOD_LOG, "a.txt": f"{TOKEN}\n", "b/c.json": "{}"})
    result = run_memvault(repo, "check", "--staged", "--json")
    data = json.loads(result.stdout)
    assert result.returncode == 1
    assert data["files_checked"] == 3 and data["secrets_only"] == 2
    assert [(p["path"], p["code"]) for p in data["problems"]] == [("a.txt", "MV503")]


def test_binary_files_symlinks_and_deletions_are_not_scanned(tmp_path: Path):
    repo = installed_repo(tmp_path)
    (repo / "old.txt").write_text("nothing secret\n")
    git(repo, "add", "old.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "old")
    os.symlink("/etc/hostname", repo / "link.txt")
    (repo / "old.txt").unlink()
    stage(repo, {"image.png": b"\x89PNG\r\n\x1a\n\x00\x00" + TOKEN.encode()})
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_renamed_file_is_scanned_under_its_new_name(tmp_path: Path):
    repo = installed_repo(tmp_path)
    (repo / "draft.txt").write_text(f"the deploy token is {TOKEN[4:30]}\n")
    git(repo, "add", "draft.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "draft")
    (repo / "memory" / ".old").mkdir(parents=True)
    git(repo, "mv", "draft.txt", "memory/.old/draft.md")
    data = json.loads(run_memvault(repo, "check", "--staged", "--json").stdout)
    assert [(p["path"], p["code"]) for p in data["problems"]] == [("memory/.old/draft.md", "MV507")]


def test_a_staged_version_is_judged_not_the_working_copy(tmp_path: Path):
    repo = installed_repo(tmp_path)
    stage(repo, {"notes.txt": f"{TOKEN}\n"})
    (repo / "notes.txt").write_text("clean now, but not staged\n")
    assert run_memvault(repo, "check", "--staged").returncode == 1


# ------------------------------------------------------------------ point 12: the allow-secret escape


def test_log_does_not_honour_the_allow_mark(runner, vault_dir: Path):
    assert runner.invoke(cli, ["init", str(vault_dir / "v"), "--no-git"]).exit_code == 0
    for text in (f"password=hunter2 <!-- {ALLOW_MARK} -->", f"{TOKEN} {ALLOW_MARK}"):
        result = runner.invoke(cli, ["--vault", str(vault_dir / "v"), "log", text])
        assert result.exit_code == 1, result.output
        assert "refusing to write the new entry" in result.output and TOKEN not in result.output
    assert not list((vault_dir / "v" / "memory").rglob("*.md"))


def test_the_library_write_does_not_honour_the_allow_mark(vault_dir: Path, runner):
    from memvault.write.log import log_entry

    assert runner.invoke(cli, ["init", str(vault_dir / "v"), "--no-git"]).exit_code == 0
    vault = Vault.open(vault_dir / "v")
    with pytest.raises(SecretRefused, match="secret"):
        log_entry(vault, f"deploy key {TOKEN} <!-- {ALLOW_MARK} -->")
    with pytest.raises(SecretRefused, match="secret"):
        log_entry(vault, "a harmless note", source=f"{PASSWORD_URL} {ALLOW_MARK}")


def test_check_shows_an_allowed_line_as_information(runner, vault_dir: Path):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text(
        f"# 2026-02-21\n\n## 09:00 - Observation\nthe shared fixture token is {TOKEN} <!-- {ALLOW_MARK} -->\n")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 0, result.output
    assert "memory/2026-02-21.md:4:" in result.output and "MV500 info" in result.output
    assert "GitHub token" in result.output and "0 errors, 0 warnings, 1 info in 1 file" in result.output
    assert TOKEN not in result.output and TOKEN[4:] not in result.output
    data = json.loads(runner.invoke(cli, ["check", "--json"]).output)
    assert data["errors"] == 0 and data["infos"] == 1
    assert [(p["code"], p["severity"], p["line"]) for p in data["problems"]] == [("MV500", "info", 4)]


def test_the_hook_lets_an_allowed_line_through_and_shows_it(tmp_path: Path):
    repo = installed_repo(tmp_path)
    stage(repo, {"memory/2026-01-12.md": GOOD_LOG + f"fixture token {TOKEN} <!-- {ALLOW_MARK} -->\n"})
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MV500 info" in result.stdout + result.stderr


# ------------------------------------------------------------------ point 14: curate writes no secret

CURATOR = """\
import json, os, sys
data = json.load(sys.stdin)
print(json.dumps({"bullets": [{"key": c["key"], "text": os.environ["FAKE_TEXT"]} for c in data["candidates"][:1]]}))
"""


@pytest.mark.parametrize("text", [
    f"The Atlas database is at {PASSWORD_URL}",
    f"Atlas deploys with {TOKEN} <!-- {ALLOW_MARK} -->",
    "Atlas db password is hunter2",
])
def test_curate_with_never_writes_a_secret(week: Path, runner, monkeypatch, tmp_path: Path, text: str):
    script = tmp_path / "curator.py"
    script.write_text(CURATOR)
    monkeypatch.setenv("FAKE_TEXT", text)
    before = (week / "MEMORY.md").read_bytes()
    result = runner.invoke(cli, ["curate", "--with", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                                 "--yes", "--at", AT])
    assert result.exit_code != 0, result.output
    assert "secret" in result.output and "nothing was changed" in result.output
    assert (week / "MEMORY.md").read_bytes() == before
    assert "hunter2" not in result.output and TOKEN not in result.output


def test_curate_apply_runs_the_scan_log_runs_on_what_it_adds(week: Path):
    vault = Vault.open(week)
    plan = plan_curation(vault, at=datetime.fromisoformat("2026-02-22T12:00:00+01:00"))
    p = next(p for p in plan.proposals if p.kind == "add")
    p.lines = (f"- Atlas database: {PASSWORD_URL} <!-- {ALLOW_MARK} -->",)  # as if a bug or a command put it there
    before = (week / "MEMORY.md").read_bytes()
    with pytest.raises(SecretRefused, match="MEMORY.md.*credentials in a URL"):
        apply(vault, plan)
    assert (week / "MEMORY.md").read_bytes() == before
