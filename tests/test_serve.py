"""`memvault serve`'s operations, settings and guards through the library (no network here;
tests/test_serve_mcp.py drives the real servers with the SDK's client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.errors import InputError, NotFoundError, Refused, SecretRefused, UnsafePath
from memvault.search.index import search_vault
from memvault.serve.service import Service
from memvault.serve.settings import (
    SERVE_DEFAULTS,
    RateLimiter,
    ServeSettings,
    check_bind,
    foreign_request,
    is_loopback,
    token_ok,
)
from memvault.vault import Vault
from memvault.write.log import init_vault

MEMORY = """# Long-Term Memory

## User Preferences

- Jana trinkt lieber Tee als Kaffee
- Prefers short status updates, bullet points

## Decisions

- Atlas deploys happen on Tuesdays, never Fridays
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = init_vault(tmp_path / "Jana's Gedächtnis", timezone="Europe/Berlin", git=True)
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    return root


@pytest.fixture
def service(root: Path):
    service = Service(root)
    service.start()
    yield service
    service.stop()


def files_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "memory").rglob("*.md")))


# -- the operations -------------------------------------------------------------------------

def test_remember_writes_the_log_and_the_next_search_finds_it(service, root):
    done = service.remember("Übergabe an Kai: der Staging-Server heißt orca-7, Zugang über VPN",
                            type="observation", tags=["atlas", "staging"], importance="high", source="session-42")
    rel, lines = done["cite"].split("#")
    with Vault.open(root) as vault:
        event = vault.get(done["id"])
        assert (event.file, f"L{event.line}-L{event.end_line}") == (rel, lines)
        assert event.tags == ("atlas", "staging") and event.source == "session-42" and event.importance == 0.9
    hits = service.search("orca-7 staging")["results"]
    assert hits[0]["id"] == done["id"] and hits[0]["cite"] == done["cite"]


def test_a_file_saved_in_an_editor_becomes_searchable_through_the_watcher_inside(service, root):
    (root / "memory" / "2026-03-02.md").write_text(
        "# 2026-03-02\n\n## 10:15 - Decision\nWir nehmen Postgres statt MongoDB für das Inventar\n", encoding="utf-8")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        results = service.search("Postgres Inventar")["results"]
        if results:
            break
        time.sleep(0.05)
    assert results and results[0]["cite"] == "memory/2026-03-02.md#L3-L4"


def test_get_by_id_and_by_place_give_the_whole_entry(service, root):
    long = "Kickoff notes. " + "The retro format changes every sprint. " * 40
    done = service.remember(long)
    by_id = service.get(ref=done["id"])
    assert by_id["text"] == long.strip() and by_id["cite"] == done["cite"]
    assert service.get(ref=done["cite"])["id"] == done["id"]
    with pytest.raises(NotFoundError):
        service.get(ref="2031-01-01T00:00")


def test_get_lines_of_a_file_names_the_entries_they_hold(service, root):
    done = service.remember("Kai mag keine Meetings vor 10 Uhr")
    rel = done["cite"].split("#")[0]
    got = service.get(file=rel, start_line=1, end_line=4)
    assert got["cite"] == f"{rel}#L1-L4" and got["entries"] == [done["id"]]
    assert got["text"].split("\n") == (root / rel).read_text(encoding="utf-8").split("\n")[:4]
    assert service.get(file="MEMORY.md", start_line=5, end_line=5)["text"] == "- Jana trinkt lieber Tee als Kaffee"
    with pytest.raises(InputError, match="past its end"):
        service.get(file="MEMORY.md", start_line=500)
    with pytest.raises(InputError):
        service.get(ref="x", file="MEMORY.md")


@pytest.mark.parametrize("path", ["../outside.md", "memory/../../outside.md", "/etc/passwd", "memvault.toml",
                                  ".memvault/watch.json", "memory/./x.md", "C:/x.md", ""])
def test_get_refuses_paths_outside_the_vaults_memory_files(service, root, path):
    (root.parent / "outside.md").write_text("secret plans\n")
    with pytest.raises(Refused):
        service.get(file=path)


def test_get_refuses_symlinks_out_of_the_vault_and_within_it(service, root, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# 2026-01-01\n\n## 09:00 - Observation\nnot vault memory\n")
    (root / "memory" / "2026-01-01.md").symlink_to(outside)
    (root / "memory" / "linked").symlink_to(tmp_path)
    (root / "memory" / "2026-01-02.md").symlink_to(root / "MEMORY.md")
    for rel in ("memory/2026-01-01.md", "memory/linked/elsewhere.md", "memory/2026-01-02.md"):
        with pytest.raises(UnsafePath, match="symbolic link"):
            service.get(file=rel)


def test_remember_refuses_secrets_as_log_does_and_writes_nothing(service, root):
    before = files_text(root)
    with pytest.raises(SecretRefused):
        service.remember("Deploy-Key für Atlas: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    with pytest.raises(InputError, match="heading"):
        service.remember("## 10:00 - Decision\nsneaky second entry")
    assert files_text(root) == before


def test_asof_changes_history_reflect_the_vault(service, root):
    old = service.remember("Standup ist um 9:30", type="belief")
    new = service.remember("Standup ist jetzt um 10:00", type="correction", supersedes=old["id"])
    assert new["supersedes"] == old["id"]
    live = {d["id"] for d in service.as_of("now", "Standup")["results"]}
    assert live == {new["id"]}
    changes = service.changes("yesterday")
    assert {d["id"] for d in changes["new"]} >= {old["id"], new["id"]}
    story = service.history(old["id"])
    assert story["status"] == "superseded" and story["superseded_by"] == new["id"]
    assert [d["id"] for d in story["chain"]] == [old["id"], new["id"]]


def test_curate_preview_proposes_without_writing(service, root):
    for text in ("Jana bevorzugt asynchrone Updates per Mail", "Decision: Atlas uses Postgres 16"):
        service.remember(text, type="belief" if "Jana" in text else "decision", importance="high")
    before = (root / "MEMORY.md").read_bytes()
    plan = service.curate_preview()
    assert plan["applied"] is False and plan["proposals"] and "+" in plan["diff"]
    assert (root / "MEMORY.md").read_bytes() == before


def test_context_holds_memory_md_and_the_task_within_its_budget(service, root):
    staging = service.remember("Atlas Staging läuft auf orca-7")
    ctx = service.context("orca-7", budget=1000)
    texts = [d["text"] for d in ctx["items"]]
    assert {"Jana trinkt lieber Tee als Kaffee", "Prefers short status updates, bullet points",
            "Atlas deploys happen on Tuesdays, never Fridays", "Atlas Staging läuft auf orca-7"} == set(texts)
    assert f"- Atlas Staging läuft auf orca-7 [{staging['id']}]" in ctx["text"].split("\n")
    small = service.context("orca-7", budget=20)
    assert small["tokens"] <= 20 and len(small["items"]) < 4 and small["left_out"]


def test_resources_read_memory_md_and_todays_log(service, root):
    assert service.read_text("MEMORY.md") == MEMORY
    assert "nothing logged today" in service.today_log()
    service.remember("Heute: Release 2.1 freigegeben")
    assert "Release 2.1 freigegeben" in service.today_log()


def test_search_limits_are_checked(service):
    with pytest.raises(InputError):
        service.search("tee", limit=0)
    with pytest.raises(InputError):
        service.search("  ")


def test_a_second_server_on_the_same_vault_searches_without_a_watcher(service, root):
    second = Service(root)
    second.start()  # the first one's watcher holds the vault: no error, fresh files every search
    try:
        assert second.watcher is None and second.watcher_note.startswith("shared: another memvault watcher (pid ")
        assert "stop it" not in second.watcher_note
        (root / "memory" / "2026-03-03.md").write_text("# 2026-03-03\n\n## 08:00 - Observation\nZebrafinken\n")
        assert second.search("Zebrafinken")["results"]
    finally:
        second.stop()


# -- settings and guards --------------------------------------------------------------------

@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.8.0.1", True), ("localhost", True),
                                                ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                                ("192.168.1.20", False), ("example.org", False),
                                                ("127.1", True), ("LOCALHOST", True), ("", False),
                                                ("127.evil.example", False)])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_a_non_loopback_bind_needs_a_token():
    with pytest.raises(Refused, match="without a token"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cr3t-t0ken")
    check_bind("127.0.0.1", None)
    check_bind("127.1", None)
    with pytest.raises(InputError):
        check_bind("127.0.0.1", "  ")
    with pytest.raises(InputError, match="--host is empty"):
        check_bind("", None)


def test_settings_from_config_env_and_options():
    section = SERVE_DEFAULTS | {"port": 9000, "rate_per_minute": 5}
    s = ServeSettings.from_config(section, env={"MEMVAULT_TOKEN": "from-env"})
    assert (s.host, s.port, s.token, s.rate_per_minute) == ("127.0.0.1", 9000, "from-env", 5)
    s = ServeSettings.from_config(section, env={}, host="0.0.0.0", token="given", port=None)
    assert (s.host, s.port, s.token) == ("0.0.0.0", 9000, "given")
    with pytest.raises(Refused):
        ServeSettings.from_config(section, env={}, host="0.0.0.0")


def test_token_check():
    assert token_ok(None, None)
    assert token_ok("abc", "Bearer abc")
    assert not token_ok("abc", None)
    assert not token_ok("abc", "Bearer abd")
    assert not token_ok("abc", "Basic abc")
    assert token_ok("abc", "bearer abc") and token_ok("abc", "BEARER  abc")  # schemes are case-insensitive
    assert not token_ok("abc", "Bearerabc")


@pytest.mark.parametrize(("host", "origin", "port", "why"), [
    ("127.0.0.1:8765", None, 8765, None), ("localhost:8765", "http://localhost:8765", 8765, None),
    ("[::1]:8765", "http://127.0.0.1:8765", 8765, None), ("127.0.0.1", None, 80, None),
    ("evil.example:8765", None, 8765, "Host"), ("evil.example", None, 8765, "Host"), (None, None, 8765, "Host"),
    ("127.0.0.1:9999", None, 8765, "Host"), ("127.0.0.1:8765", "http://evil.example", 8765, "Origin"),
    ("127.0.0.1:8765", "null", 8765, "Origin"), ("127.0.0.1:8765", "https://127.0.0.1:8765", 8765, "Origin"),
])
def test_foreign_requests(host, origin, port, why):
    said = foreign_request(host, origin, port)
    assert (said or "").split(" ")[0] == (why or "")


def test_rate_limiter_says_how_long_until_a_slot_frees():
    now = [0.0]
    limiter = RateLimiter(5, clock=lambda: now[0])
    assert [limiter.wait("a") for _ in range(5)] == [0.0] * 5
    assert limiter.wait("a") == pytest.approx(12.0)  # 5 a minute: one every 12 s
    now[0] += 11.0
    assert limiter.wait("a") == pytest.approx(1.0)
    now[0] += 1.0
    assert limiter.wait("a") == 0.0


def test_rate_limiter_is_a_bucket_per_client():
    now = [0.0]
    limiter = RateLimiter(3, clock=lambda: now[0])
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("b")
    now[0] += 20  # a minute holds 3: one comes back every 20 s
    assert limiter.allow("a") and not limiter.allow("a")
    assert all(RateLimiter(0).allow("a") for _ in range(1000))


# -- the CLI --------------------------------------------------------------------------------

def test_serve_refuses_a_public_bind_without_a_token(runner, root, monkeypatch):
    from memvault.cli import cli

    monkeypatch.delenv("MEMVAULT_TOKEN", raising=False)
    result = runner.invoke(cli, ["--vault", str(root), "serve", "--host", "0.0.0.0"])
    assert result.exit_code == 1 and "without a token" in result.output


def test_serve_reads_its_config_table(runner, root):
    from memvault.cli import cli

    (root / "memvault.toml").write_text((root / "memvault.toml").read_text() + '\n[serve]\nhost = "0.0.0.0"\n')
    result = runner.invoke(cli, ["--vault", str(root), "serve"], env={"MEMVAULT_TOKEN": ""})
    assert result.exit_code == 1 and "refusing to listen on 0.0.0.0" in result.output
    (root / "memvault.toml").write_text((root / "memvault.toml").read_text().replace('"0.0.0.0"', '5'))
    result = runner.invoke(cli, ["--vault", str(root), "serve"])
    assert result.exit_code == 1 and "[serve] host must be a non-empty string" in result.output


EXTRA = ("mcp", "starlette", "uvicorn", "anyio", "pydantic")


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


def test_the_cli_never_imports_the_server_stack(root):
    code = ("import sys\nfrom memvault.cli import cli\n"
            "for args in (['--help'], ['serve', '--help'], ['mcp', '--help'], ['--vault', sys.argv[1], 'list']):\n"
            "    try:\n        cli.main(args, prog_name='memvault')\n    except SystemExit:\n        pass\n"
            f"print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in {EXTRA!r}))\n")
    out = _python(code, str(root))
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_without_the_extra_the_commands_say_how_to_install_it(root, command):
    code = ("import sys\nfor m in ('mcp', 'starlette', 'uvicorn'):\n    sys.modules[m] = None  # not installed\n"
            "from memvault.cli import main\nsys.argv = ['memvault', '--vault', sys.argv[1], sys.argv[2]]\nmain()\n")
    out = _python(code, str(root), command)
    assert out.returncode == 1
    assert f"memvault {command} needs the optional extra `serve`" in out.stderr
    assert "pip install 'memvault[serve]'" in out.stderr


def test_the_search_the_server_answers_is_the_librarys(service, root):
    service.remember("Der Drucker im 3. Stock braucht Toner", tags=["büro"])
    with Vault.open(root) as vault:
        expected = [h.id for h in search_vault(vault, "Drucker Toner", limit=5)]
    assert [d["id"] for d in service.search("Drucker Toner", limit=5)["results"]] == expected


def test_serve_on_a_port_in_use_says_so_in_one_line(runner, root):
    import socket

    from memvault.cli import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(cli, ["--vault", str(root), "serve", "--port", str(port)])
        assert result.exit_code == 1, result.output
        assert result.output.strip() == f"Error: port {port} on 127.0.0.1 is in use (another server?); stop it or give --port"
        result = runner.invoke(cli, ["--vault", str(root), "serve", "--port", str(port), "--json"])
        assert result.exit_code == 1
        error = json.loads(result.output)["error"]
        assert error["code"] == "refused" and f"port {port} on 127.0.0.1 is in use" in error["message"]
    assert not (root / ".memvault" / "watch.json").exists()  # refused before the watcher started
