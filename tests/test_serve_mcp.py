"""The servers end to end, with the official MCP SDK's client: over stdio (`python -m memvault
mcp`, a real subprocess) and over streamable HTTP (a real uvicorn on a loopback port), every
tool called and its answer checked against the vault's files through the library; the HTTP
guards (token, size, rate); and an agent loop of concurrent clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memvault.check.runner import check_vault
from memvault.search.index import open_index
from memvault.serve.run import ThreadedServer
from memvault.serve.service import Service
from memvault.serve.settings import ServeSettings
from memvault.vault import Vault
from memvault.write.log import init_vault
from tests.helpers_index import fresh

TOOLS = {"search", "get", "remember", "forget", "asof", "changes", "history", "curate_preview", "context"}
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = init_vault(tmp_path / "vault", timezone="Europe/Berlin")
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n## User Preferences\n\n- Mira mag Haferflocken mit Zimt\n",
                                    encoding="utf-8")
    return root


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content  # the text a model reads
    return result.structured_content


async def wrong_arguments(client: Client) -> None:
    """Argument errors name the argument and what it takes, as a model can correct them (not
    pydantic's report); library errors start with their kind."""
    said = {}
    for tool, args in [("search", {}), ("search", {"query": 5}), ("search", {"query": "x", "limit": "ten"}),
                       ("search", {"query": "x", "limit": 0}), ("remember", {"text": "x", "importance": [1]}),
                       ("get", {"ref": "2001-01-01T00:00"})]:
        result = await client.call_tool(tool, args)
        assert result.is_error
        said[tool, json.dumps(args)] = result.content[0].text
    assert list(said.values())[:5] == [
        "usage: search: argument 'query' is required",
        "usage: search: argument 'query' must be a string (got 5)",
        "usage: search: argument 'limit' must be an integer (got 'ten')",
        "usage: search: argument 'limit' must be greater than or equal to 1 (got 0)",
        "usage: remember: argument 'importance' must be a string or a number (got list)",
    ]
    assert list(said.values())[5].startswith("not_found: ")


async def every_tool(client: Client, root: Path) -> None:
    """Call each tool once and check the answers against the files, through the library."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    first = await call(client, "remember", text="Mira's Laptop heißt kolibri, Ubuntu 24.04", tags=["mira"],
                       type="belief")
    second = await call(client, "remember", text="Mira's Laptop heißt jetzt falke (neu aufgesetzt)",
                        type="correction", supersedes=first["id"])
    with Vault.open(root) as vault:
        ev = vault.get(second["id"])
        assert second["cite"] == f"{ev.file}#L{ev.line}-L{ev.end_line}" and ev.supersedes == first["id"]
        assert vault.timeline.superseded_by[first["id"]] == [second["id"]]
    found = await call(client, "search", query="Laptop falke")
    assert found["results"][0]["id"] == second["id"]
    entry = await call(client, "get", ref=second["id"])
    assert entry["text"] == "Mira's Laptop heißt jetzt falke (neu aufgesetzt)"
    rel = second["cite"].split("#")[0]
    lines = await call(client, "get", file=rel, start_line=1, end_line=2)
    assert lines["text"].split("\n") == (root / rel).read_text(encoding="utf-8").split("\n")[:2]
    asof = await call(client, "asof", at="now", query="Laptop")
    assert [d["id"] for d in asof["results"]] == [second["id"]]
    changes = await call(client, "changes", since="yesterday")
    assert {d["id"] for d in changes["new"]} == {first["id"], second["id"]}
    story = await call(client, "history", ref=first["id"])
    assert [d["id"] for d in story["chain"]] == [first["id"], second["id"]]
    before = (root / "MEMORY.md").read_bytes()
    plan = await call(client, "curate_preview")
    assert plan["applied"] is False and (root / "MEMORY.md").read_bytes() == before
    await context_tool(client, root, first["id"], second["id"])
    refused = await client.call_tool("get", {"file": "../vault/memvault.toml"})
    assert refused.is_error and "refused" in refused.content[0].text
    secret = await client.call_tool("remember", {"text": "AWS key AKIA" + "ZQ3DRFT7KXWPL2MB for prod"})
    assert secret.is_error and secret.content[0].text.startswith("secret: ")
    await wrong_arguments(client)
    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert resources == {"memvault://MEMORY.md", "memvault://today", "memvault://context"}
    from memvault.search import access

    recalls = access.stats(root)
    block = (await client.read_resource("memvault://context")).contents[0].text
    assert block.startswith("# Memory\n") and "- Mira mag Haferflocken mit Zimt [" in block
    assert access.stats(root) == recalls  # reading a resource is no recall
    memory = await client.read_resource("memvault://MEMORY.md")
    assert memory.contents[0].text == (root / "MEMORY.md").read_text(encoding="utf-8")
    today = await client.read_resource("memvault://today")
    assert today.contents[0].text == (root / rel).read_text(encoding="utf-8")


async def context_tool(client: Client, root: Path, old: str, new: str) -> None:
    """The prompt block: MEMORY.md and the task's live entries (not the superseded one), each line
    citing its id; a scope leaves other scopes out; the budget holds; what it gave is recalled."""
    from memvault.search import access

    ctx = await call(client, "context", query="Laptop")
    ids = [d["id"] for d in ctx["items"]]
    assert new in ids and old not in ids and "kolibri" not in ctx["text"]
    assert f"- Mira's Laptop heißt jetzt falke (neu aufgesetzt) [{new}]" in ctx["text"].split("\n")
    assert {d["kind"] for d in ctx["items"]} >= {"preference"} and all(d["tokens"] > 0 for d in ctx["items"])
    assert set(ids) <= set(access.stats(root, ids))
    from memvault.write.log import log_entry

    with Vault.open(root) as vault, open_index(vault) as index:  # `remember` writes no scope: the library does
        kranich = log_entry(vault, "Im Projekt Kranich heißt der Laptop reiher", scope="project:kranich")
        index.update([kranich.file])
    scoped = await call(client, "context", query="Laptop", scope="project:kranich")
    assert {new, kranich.id} <= {d["id"] for d in scoped["items"]}
    elsewhere = await call(client, "context", query="Laptop", scope="project:möwe")
    assert new in {d["id"] for d in elsewhere["items"]} and kranich.id not in {d["id"] for d in elsewhere["items"]}
    tiny = await call(client, "context", query="Laptop", budget=3)
    assert tiny["items"] == [] and tiny["text"] == "" and tiny["tokens"] == 0


def test_mcp_over_stdio_with_the_sdk_client(root):
    params = StdioServerParameters(command=sys.executable, args=["-m", "memvault", "mcp", "--vault", str(root)],
                                   env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=str(root))

    async def main() -> None:
        async with Client(params) as client:
            await every_tool(client, root)

    anyio.run(main)
    assert check_vault(Vault.open(root)).errors == 0


def test_mcp_over_streamable_http_with_the_sdk_client(root):
    with ThreadedServer(Service(root)) as server:
        async def main() -> None:
            async with Client(server.url + "/mcp") as client:
                await every_tool(client, root)

        anyio.run(main)


def test_the_python_client_example_in_agents_md_runs(root, capsys):
    """docs/agents.md's Python example, as written but for the port, against a real server."""
    text = (REPO / "docs/agents.md").read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    with ThreadedServer(Service(root)) as server:
        exec(compile(example.replace("http://127.0.0.1:8765", server.url), "agents.md", "exec"), {})
    cite, said = capsys.readouterr().out.strip().split(" ", 1)
    assert said == "Mira prefers async updates by mail"
    rel, lines = cite.split("#L")
    first, last = (int(n) for n in lines.split("-L"))
    cited = (root / rel).read_text(encoding="utf-8").split("\n")[first - 1:last]
    assert "Mira prefers async updates by mail" in cited


# -- the HTTP guards ------------------------------------------------------------------------

def http(url: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=body, headers=headers or {}, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_health_answers_for_the_server_and_its_memorywire_store(root):
    with ThreadedServer(Service(root)) as server:
        status, body = http(server.url + "/v0/health")
        assert status == 200 and body["status"] == "ok" and body["watcher"] == "running"
        assert body["vault"] == str(root) and body["store"] == "memvault" and body["pending_approvals"] == 0


def test_a_token_is_required_on_every_request_when_set(root):
    token = "t0k-" + "x" * 30
    with ThreadedServer(Service(root), ServeSettings(port=0, token=token)) as server:
        assert http(server.url + "/v0/health")[0] == 401
        assert http(server.url + "/v0/health", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert http(server.url + "/v0/health", headers={"Authorization": f"Bearer {token}"})[0] == 200
        status, body = http(server.url + "/mcp", b"{}", {"Content-Type": "application/json"})
        assert status == 401 and body["error"]["code"] == "unauthorized"

        async def main(header: str) -> list[str]:
            async with create_mcp_http_client(headers={"Authorization": header}) as http_client, \
                    Client(streamable_http_client(server.url + "/mcp", http_client=http_client)) as client:
                return [t.name for t in (await client.list_tools()).tools]

        assert set(anyio.run(main, f"Bearer {token}")) == TOOLS
        with pytest.raises(Exception):  # noqa: B017 (the SDK's error for a 401 is its own)
            anyio.run(main, "Bearer nope")


def test_bodies_over_the_limit_are_refused(root):
    with ThreadedServer(Service(root), ServeSettings(port=0, max_body_bytes=2000)) as server:
        big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "remember", "arguments": {"text": "y" * 5000}}}).encode()
        status, body = http(server.url + "/mcp", big, {"Content-Type": "application/json"})
        assert status == 413 and body["error"]["code"] == "too_large"
        # without a Content-Length (chunked): read up to the limit, then refused all the same
        chunks = iter([big[:1500], big[1500:]])
        req = urllib.request.Request(server.url + "/mcp", data=chunks, method="POST",  # type: ignore[arg-type]
                                     headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=10)
        assert info.value.code == 413
    assert "y" * 100 not in "".join(p.read_text() for p in (root / "memory").rglob("*.md"))


def test_a_client_over_the_rate_gets_429(root):
    with ThreadedServer(Service(root), ServeSettings(port=0, rate_per_minute=5)) as server:
        codes = [http(server.url + "/v0/health")[0] for _ in range(7)]
        assert codes[:5] == [200] * 5 and codes[5:] == [429, 429]
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server.url + "/v0/health", timeout=10)
        assert 10 <= int(info.value.headers["Retry-After"]) <= 12  # a slot frees every 12 s, not in 1


# -- the agent loop -------------------------------------------------------------------------

def agent_loop(root: Path, clients: int, calls: int) -> None:
    """`clients` MCP clients at once, each `calls` times: remember a fact, then recall it."""
    with ThreadedServer(Service(root), ServeSettings(port=0, rate_per_minute=0)) as server:
        async def agent(n: int, ids: dict[str, str]) -> None:
            async with Client(server.url + "/mcp") as client:
                for i in range(calls // 2):
                    marker = f"agent{n}x{i}q"
                    done = await call(client, "remember", text=f"Fakt {marker}: Agent {n} notiert Schritt {i}",
                                      tags=[f"agent{n}"])
                    ids[marker] = done["id"]
                    hits = await call(client, "search", query=marker, limit=3)
                    assert hits["results"] and hits["results"][0]["id"] == done["id"], marker

        async def main() -> dict[str, str]:
            ids: dict[str, str] = {}
            async with anyio.create_task_group() as tg:
                for n in range(clients):
                    tg.start_soon(agent, n, ids)
            return ids

        ids = anyio.run(main)
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "memory").rglob("*.md")))
    assert len(ids) == clients * (calls // 2)
    for marker in ids:
        assert text.count(f"Fakt {marker}:") == 1, marker
    vault = Vault.open(root)
    assert len(set(ids.values())) == len(ids)
    assert {ids[m] for m in ids} <= set(vault.timeline.by_id)
    report = check_vault(vault)
    assert report.errors == 0 and report.warnings == 0, [p.message for p in report.problems]
    events, sup, rec = fresh(root)
    with open_index(vault) as index:
        assert index.events() == events and index.edges() == (sup, rec)


def test_agent_loop_small(root):
    agent_loop(root, clients=8, calls=20)


@pytest.mark.slow
def test_agent_loop_8_clients_200_calls(root):
    agent_loop(root, clients=8, calls=200)


def test_serve_says_where_it_listens_and_stops_cleanly_on_sigterm(root):
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(root), "serve", "--port", "0", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())  # one line, for a supervisor
        assert ready["mcp"] == ready["url"] + "/mcp" and ready["url"].startswith("http://127.0.0.1:")
        assert http(ready["api"] + "/health")[0] == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    record = json.loads((root / ".memvault" / "watch.json").read_text())
    assert record["state"] == "stopped"


def test_mcp_over_stdio_stops_cleanly_on_sigterm(root):
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(root), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "memvault"  # serving
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert json.loads((root / ".memvault" / "watch.json").read_text())["state"] == "stopped"
