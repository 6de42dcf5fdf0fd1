"""Server figures on the 100k synthetic vault: recall and remember -> recallable over MCP
(streamable HTTP and stdio), the server's RSS, beside the library calls alone (the floor).

    python bench/bench_serve.py /tmp/mv-100k             # copies it to /tmp/mv-100k-serve first
    python bench/bench_serve.py /tmp/mv-100k --calls 100

Every figure is end to end, from this process, with the official MCP SDK's client:
  - recall: `search` of 2-3 words drawn from the vault's own text, limit 10; p50/p95 over --calls.
  - get: `get` by id of the first hit of each recall (the whole entry, as `memvault show --json`
    gives it less retention, answered from the index: `Vault.fetch`); p50/p95 over the recalls.
  - remember -> recallable: `remember` of an entry with a fresh word, then `search` for that word
    until the entry is the first hit (it is on the first try: the server indexes what it writes).
  - memorywire over HTTP, same `memvault serve`: POST /v0/recall (k=10) of the same queries, and
    POST /v0/remember, then /v0/recall of its fresh word until it is the first result.
  - floor, same run, same copy: `search_vault` (refresh off, as the server with its watcher;
    retention off, as the server asks), `Vault.fetch` (the same) and `log_entry` +
    `Index.update([file])` + `search_vault`, in this process.
  - RSS of the server process (VmRSS now, VmHWM peak) after start and after the calls.
Each run starts from a fresh copy, and each path from an empty log for today: `remember`
appends to today's log and re-indexes it whole, so its cost grows with the day's entries (the
last of --calls writes goes into a log of --calls entries).
The server is `memvault serve --json` / `memvault mcp`, a child process, as people run it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def row(name: str, values: list[float]) -> str:
    return (f"| {name} | {pct(values, 50) * 1000:.1f} ms | {pct(values, 95) * 1000:.1f} ms | "
            f"{statistics.mean(values) * 1000:.1f} ms |")


def rss(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def copy_vault(source: Path, target: Path) -> Path:
    """A fresh copy each run: every run's writes grow today's log, which `remember` re-indexes."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)
    # One trusted client making ~1,000 calls a minute: the per-client rate limit (600) would refuse it.
    with (target / "memvault.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[serve]\nrate_per_minute = 0\n")
    return target


META = re.compile(r"^[A-Z][A-Za-z-]*:")


def queries(root: Path, n: int, seed: int = 7) -> list[str]:
    """Two or three words that occur together in an entry of the vault (as an agent's recall would)."""
    rng = random.Random(seed)
    files = sorted((root / "memory").rglob("*.md"))
    out = []
    while len(out) < n:
        text = rng.choice(files).read_text(encoding="utf-8")
        # words of the entries' text, whole and lowercased: not headings, not `Key: value` lines
        # (an earlier `[a-z]{5,}` took "elief" out of "Belief", a word no one asks for)
        body = [line for line in text.splitlines() if line and not line.startswith("#") and not META.match(line)]
        words = [w.lower() for w in re.findall(r"[A-Za-z]{5,}", rng.choice(body))] if body else []
        if len(words) >= 3:
            out.append(" ".join(rng.sample(words, rng.choice((2, 3)))))
    return out


def reset_today(root: Path) -> None:
    """Today's log gone (and out of the index): each path's `remember`s start from an empty day,
    as `remember` re-indexes the whole of today's log."""
    from memvault.search.index import open_index
    from memvault.vault import Vault

    with Vault.open(root) as vault:
        path = vault.log_path_for(vault.now().date().isoformat())
        path.unlink(missing_ok=True)
        with open_index(vault) as index:
            index.update([path.relative_to(root).as_posix()])


def floor(root: Path, qs: list[str], calls: int) -> dict[str, list[float]]:
    from memvault.search.index import open_index, search_vault
    from memvault.vault import Vault
    from memvault.write.log import log_entry

    recall, get, remember = [], [], []
    ids: list[str] = []
    for q in qs:  # once untimed: the page cache as warm for the floor as for the servers after it
        with Vault.open(root) as vault:
            ids += [h.id for h in search_vault(vault, q, limit=10, refresh=False, retention=False)[:1]]
    for q in qs:
        start = time.perf_counter()
        with Vault.open(root) as vault:
            search_vault(vault, q, limit=10, refresh=False, retention=False)
        recall.append(time.perf_counter() - start)
    for eid in ids:
        start = time.perf_counter()
        with Vault.open(root) as vault:
            vault.fetch(eid, refresh=False, retention=False)
        get.append(time.perf_counter() - start)
    for i in range(calls):
        word = f"floorword{os.getpid()}x{i}"
        start = time.perf_counter()
        with Vault.open(root) as vault:
            event = log_entry(vault, f"Benchmark floor entry {word} written by the library")
            with open_index(vault) as index:
                index.update([event.file])
            assert search_vault(vault, word, limit=1, refresh=False, retention=False)[0].id == event.id
        remember.append(time.perf_counter() - start)
    return {"recall": recall, "get": get, "remember": remember}


async def over_mcp(client: Client, qs: list[str], calls: int, tag: str) -> dict[str, list[float]]:
    recall, get, remember = [], [], []
    ids: list[str] = []
    await client.call_tool("search", {"query": qs[0]})  # warm: the first call imports and opens
    for q in qs:
        start = time.perf_counter()
        result = await client.call_tool("search", {"query": q, "limit": 10})
        recall.append(time.perf_counter() - start)
        assert not result.is_error, result.content
        ids += [h["id"] for h in (result.structured_content or {}).get("results", [])[:1]]
    for eid in ids:
        start = time.perf_counter()
        result = await client.call_tool("get", {"ref": eid})
        get.append(time.perf_counter() - start)
        assert not result.is_error and (result.structured_content or {})["id"] == eid, result.content
    for i in range(calls):
        word = f"{tag}word{os.getpid()}x{i}"
        start = time.perf_counter()
        done = (await client.call_tool("remember", {"text": f"Benchmark entry {word} remembered over MCP"}))
        assert not done.is_error, done.content
        while True:
            found = (await client.call_tool("search", {"query": word, "limit": 1})).structured_content or {}
            if found.get("results") and found["results"][0]["id"] == (done.structured_content or {})["id"]:
                break
        remember.append(time.perf_counter() - start)
    return {"recall": recall, "get": get, "remember": remember}


def over_wire(api: str, qs: list[str], calls: int) -> dict[str, list[float]]:
    """The memorywire JSON API of the same server: POST /v0/recall and /v0/remember, over one
    kept-alive connection (as an agent's HTTP client holds one)."""
    url = urllib.parse.urlsplit(api)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)

    def post(op: str, body: dict[str, Any]) -> dict[str, Any]:
        conn.request("POST", f"{url.path}/{op}", json.dumps({"agent_id": "bench"} | body),
                     {"Content-Type": "application/json"})
        answer = conn.getresponse()
        data = json.loads(answer.read())
        assert answer.status == 200, data
        return data

    recall, remember = [], []
    post("recall", {"query": qs[0]})  # warm
    for q in qs:
        start = time.perf_counter()
        post("recall", {"query": q, "k": 10})
        recall.append(time.perf_counter() - start)
    for i in range(calls):
        word = f"wireword{os.getpid()}x{i}"
        start = time.perf_counter()
        done = post("remember", {"type": "episodic", "content": f"Benchmark entry {word} over memorywire"})
        while True:
            found = post("recall", {"query": word, "k": 1})["results"]
            if found and found[0]["id"] == done["id"]:
                break
        remember.append(time.perf_counter() - start)
    conn.close()
    return {"recall": recall, "remember": remember}


class HttpServer:
    def __init__(self, root: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(root), "serve", "--port", "0",
                                      "--json"], stdout=subprocess.PIPE, text=True,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"))
        assert self.proc.stdout is not None
        self.ready: dict[str, Any] = json.loads(self.proc.stdout.readline())  # after the watcher's catch-up

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", type=Path, help="the synthetic vault (bench/synth.py); copied, never changed")
    parser.add_argument("--copy", type=Path, help="where to copy it (default: <vault>-serve)")
    parser.add_argument("--calls", type=int, default=200, help="calls of each kind (default 200)")
    args = parser.parse_args()
    root = copy_vault(args.vault, args.copy or args.vault.with_name(args.vault.name + "-serve"))
    qs = queries(root, args.calls)
    from memvault.search.index import update_index
    from memvault.vault import Vault

    with Vault.open(root) as vault:
        update_index(vault)  # the copy's index as the server finds it: current
    reset_today(root)
    results: dict[str, dict[str, list[float]]] = {"library (floor)": floor(root, qs, args.calls)}

    reset_today(root)
    started = time.perf_counter()
    server = HttpServer(root)
    start_s = time.perf_counter() - started
    rss_start = rss(server.proc.pid)

    async def http() -> dict[str, list[float]]:
        async with Client(server.ready["mcp"]) as client:
            return await over_mcp(client, qs, args.calls, "http")

    try:
        results["MCP, streamable HTTP"] = anyio.run(http)
        reset_today(root)  # the server's watcher re-indexes today's log (now gone) by itself
        results["memorywire, HTTP /v0"] = over_wire(server.ready["api"], qs, args.calls)
        rss_after = rss(server.proc.pid)
    finally:
        server.stop()

    reset_today(root)
    params = StdioServerParameters(command=sys.executable, args=["-m", "memvault", "--vault", str(root), "mcp"],
                                   env=dict(os.environ))

    async def stdio() -> dict[str, list[float]]:
        async with Client(params) as client:
            return await over_mcp(client, qs, args.calls, "stdio")

    results["MCP, stdio"] = anyio.run(stdio)

    print(f"vault: {root} (copy of {args.vault}); {args.calls} calls of each kind; {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    print("\n| path | p50 | p95 | mean |\n|---|---|---|---|")
    for name, figures in results.items():
        print(row(f"recall (search), {name}", figures["recall"]))
    for name, figures in results.items():
        if "get" in figures:
            print(row(f"get by id, {name}", figures["get"]))
    for name, figures in results.items():
        print(row(f"remember -> recallable, {name}", figures["remember"]))
    print(f"\nserve: ready in {start_s:.2f} s; RSS {rss_start[0]:.0f} MB after start, {rss_after[0]:.0f} MB after "
          f"the calls (peak {rss_after[1]:.0f} MB)")


if __name__ == "__main__":
    main()
