"""Semantic and hybrid search through every face (issue 18): `asof T QUERY --mode`, `context
--mode`, the MCP `search` and `context` tools, memorywire's recall (`fusion`, `fusion_used`,
`stores_queried`), `memvault status`'s semantic section and what `memvault index` says of the
embedding. Each runs on the tiny test model (tests/data/semantic-model, its README), whose
words fall into concept groups in English and German: "relax hobby" shares no word with
"Caroline paints landscapes on weekends" and lands next to it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memvault.cli import cli
from memvault.vault import Vault
from tests.helpers_index import UTC_TOML, entry, make_vault, write_log

MODEL = Path(__file__).parent / "data" / "semantic-model"
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("numpy")

PAINT = "2026-03-02T09:15"
PEANUT = "2026-03-02T10:00"
FLIGHT = "2026-03-05T08:00"
LOGS = {
    "2026-03-02": [entry("09:15", "Observation", "Caroline paints landscapes on weekends, mostly the Elbe"),
                   entry("10:00", "Belief", "Jürgen ist allergisch gegen Erdnüsse, also no satay at the offsite"),
                   entry("11:30", "Decision", "We ship the release to production on Fridays only (Kubernetes)")],
    "2026-03-05": [entry("08:00", "Observation", "Frau Özdemir hat ihren Flug nach Lissabon gebucht, Urlaub ab Montag")],
}


def semantic_toml(mode: str | None = None) -> str:
    return UTC_TOML + f'[semantic]\nmodel = "{MODEL}"\n' + (f'mode = "{mode}"\n' if mode else "")


@pytest.fixture
def root(vault_dir: Path) -> Path:
    if not (MODEL / "model.onnx").exists():  # helper i18-tests' model; the tests without it still run
        pytest.skip("the test model (tests/data/semantic-model) is not here")
    make_vault(vault_dir, semantic_toml())
    for day, entries in LOGS.items():
        write_log(vault_dir, day, *entries)
    return vault_dir


def run(*args: str, ok: bool = True) -> Any:
    result = CliRunner().invoke(cli, list(args))
    if ok:
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout) if "--json" in args else result.stdout
    return result


# -- asof -----------------------------------------------------------------------------------


def test_asof_query_ranks_by_meaning_as_of_t(root: Path) -> None:
    assert run("asof", "2026-03-10", "relax", "hobby", "--mode", "lexical", "--json") == []
    found = run("asof", "2026-03-10", "relax", "hobby", "--mode", "semantic", "--json")
    assert found[0]["id"] == PAINT
    german = run("asof", "2026-03-10", "Reise", "--mode", "hybrid", "--json")  # "trip": flight, holiday
    assert german[0]["id"] == FLIGHT
    # As of a time before the flight was noted, meaning finds no entry that was not there yet.
    before = run("asof", "2026-03-03", "Reise", "--mode", "semantic", "--json")
    assert FLIGHT not in {d["id"] for d in before}


def test_asof_recorded_refuses_meaning(root: Path) -> None:
    result = run("asof", "2026-03-10", "relax", "--recorded", "--mode", "semantic", ok=False)
    assert result.exit_code == 2 and "--recorded ranks a past commit's files by words only" in result.output


# -- context --------------------------------------------------------------------------------


def test_context_mode(root: Path) -> None:
    words = run("context", "relax", "hobby", "--mode", "lexical", "--no-record", "--json")
    assert words["mode"] == "lexical" and words["items"] == []
    meaning = run("context", "relax", "hobby", "--mode", "semantic", "--no-record", "--json")
    assert meaning["mode"] == "semantic" and max(meaning["items"], key=lambda i: i["score"])["id"] == PAINT
    default = run("context", "Allergie", "--no-record", "--json")  # the vault's auto: hybrid with a model
    assert default["mode"] == "hybrid" and PEANUT in {i["id"] for i in default["items"]}
    assert run("context", "--no-record", "--json")["mode"] is None  # no query: nothing is matched


def test_context_semantic_without_model_is_refused(vault_dir: Path) -> None:
    make_vault(vault_dir, UTC_TOML + '[semantic]\nmodel = "/nowhere/such-model"\n')
    write_log(vault_dir, "2026-03-02", *LOGS["2026-03-02"])
    result = run("context", "relax", "--mode", "semantic", "--json", ok=False)
    assert result.exit_code == 1 and json.loads(result.output)["error"]["code"] == "semantic_unavailable"
    assert run("context", "Caroline", "--no-record", "--json")["mode"] == "lexical"  # auto falls back


# -- MCP tools ------------------------------------------------------------------------------


def mcp_call(root: Path, tool: str, **args: Any) -> Any:
    import anyio

    from memvault.serve.mcp_tools import build_mcp
    from memvault.serve.service import Service

    server = build_mcp(Service(root, watch=False))

    async def go() -> Any:
        return await server.call_tool(tool, args)

    out = anyio.run(go)
    assert not out.is_error, out.content
    return out.structured_content


def test_mcp_search_and_context_take_a_mode(root: Path) -> None:
    words = mcp_call(root, "search", query="relax hobby", mode="lexical")
    assert words["mode"] == "lexical" and words["results"] == []
    meaning = mcp_call(root, "search", query="relax hobby", mode="semantic")
    assert meaning["mode"] == "semantic" and meaning["results"][0]["id"] == PAINT
    assert mcp_call(root, "search", query="Haustier")["mode"] == "hybrid"
    block = mcp_call(root, "context", query="Flughafen", mode="semantic")
    assert block["mode"] == "semantic" and max(block["items"], key=lambda i: i["score"])["id"] == FLIGHT


# -- memorywire recall ----------------------------------------------------------------------


def recall(root: Path, **request: Any) -> dict[str, Any]:
    from jsonschema import Draft202012Validator

    from memvault.memorywire import MemoryStore, schema

    with Vault.open(root) as vault:
        answer = MemoryStore(vault).recall({"agent_id": "test-agent"} | request)
    Draft202012Validator(schema("recall.response")).validate(answer)
    return answer


@pytest.mark.parametrize("fusion", ["rrf", "max", "weighted"])
def test_recall_fuses_words_and_vectors(root: Path, fusion: str) -> None:
    answer = recall(root, query="relax hobby", fusion=fusion)
    assert answer["fusion_used"] == fusion and answer["stores_queried"] == ["fts", "vector"]
    assert answer["results"][0]["id"] == PAINT and answer["results"][0]["source_store"] == "fts+vector"


def test_recall_fusion_is_this_calls(root: Path, tmp_path: Path) -> None:
    """The request's fusion, not `[semantic] fusion` (weighted), fuses words and vectors: under
    `max` the scores differ from a weighted call's (both report search's score times 1). Each
    on its own copy of the vault: a recall counts as an access, which moves the next scores."""
    twin = shutil.copytree(root, tmp_path / "twin")
    scores = {f: [r["score"] for r in recall(where, query="Caroline relax", fusion=f, k=3)["results"]]
              for f, where in (("max", root), ("weighted", twin))}
    assert scores["max"] != scores["weighted"]
    again = shutil.copytree(twin, tmp_path / "again", ignore=shutil.ignore_patterns(".memvault"))
    assert [r["score"] for r in recall(again, query="Caroline relax", fusion="weighted", k=3)["results"]] \
        == scores["weighted"]  # the same call on the same files: the same scores


def test_search_refuses_an_unknown_fusion(root: Path) -> None:
    from memvault.errors import InputError
    from memvault.search.index import open_index

    with Vault.open(root) as vault, open_index(vault) as index, pytest.raises(InputError, match="fusion must be"):
        index.search("relax", fusion="sum")


def test_recall_lexical_and_semantic_vaults(root: Path) -> None:
    (root / "memvault.toml").write_text(semantic_toml("semantic"))
    only = recall(root, query="Urlaub")
    assert only["stores_queried"] == ["vector"] and only["fusion_used"] == "rrf"  # the request's default
    assert only["results"][0]["id"] == FLIGHT
    (root / "memvault.toml").write_text(semantic_toml("lexical"))
    words = recall(root, query="relax hobby", fusion="max")
    assert words == words | {"results": [], "fusion_used": "max", "stores_queried": ["fts"]}


# -- status and index -----------------------------------------------------------------------


def test_status_semantic_section(root: Path) -> None:
    before = run("status", "--json")["semantic"]
    assert before["model"] == "memvault-test-model" and before["mode"] == "hybrid" and before["vectors"] == 0
    run("index")
    after = run("status", "--json")["semantic"]
    assert after | {"size_bytes": 0} == before | {"vectors": 4, "pending": 0, "size_bytes": 0, "off": None}
    assert after["size_bytes"] > 0 and after["key"]
    text = run("status")
    assert "semantic: hybrid search" in text and "memvault-test-model" in text and "4 held, 0 entries pending" in text
    write_log(root, "2026-03-06", entry("07:00", "Observation", "Der Hund war beim Tierarzt"))
    (root / "memvault.toml").write_text(semantic_toml("lexical"))
    run("index")  # indexed by words only (another machine, without the extra): no vector for it
    (root / "memvault.toml").write_text(semantic_toml())
    assert run("status", "--json")["semantic"]["pending"] == 1  # status reads; it embeds nothing
    assert "4 held, 1 entries pending; `memvault index` embeds them" in run("status")
    run("index")
    assert run("status", "--json")["semantic"] | {"size_bytes": 0} == after | {"vectors": 5, "size_bytes": 0}


def test_status_semantic_off(vault_dir: Path) -> None:
    make_vault(vault_dir, UTC_TOML + '[semantic]\nmode = "lexical"\nmodel = "/nowhere/such-model"\n')
    part = run("status", "--json")["semantic"]
    assert part["mode"] == "lexical" and part["model"] is None and "no" in part["off"].lower()
    assert "semantic: off:" in run("status")


def test_status_without_the_extra_imports_no_numpy(vault_dir: Path) -> None:
    """Status in a fresh interpreter: with the extra but no model it imports no numpy; without
    the extra (the packages made unfindable: an import of one would fail the section, "cannot
    tell") it says how to install it."""
    make_vault(vault_dir, UTC_TOML)
    code = ("import sys\n"
            "if sys.argv[1] == 'without':\n"
            "    for m in ('numpy', 'onnxruntime', 'tokenizers'): sys.modules[m] = None\n"
            "from memvault.status import collect\nfrom memvault.vault import Vault\n"
            f"data, lines = collect(Vault.open({str(vault_dir)!r}))\n"
            "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if sys.modules.get(m)))\n"
            "print([x for x in lines if x.startswith('semantic')][0])\n")

    def status(how: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True,
                              check=True).stdout.splitlines()

    imported, line = status("with")
    assert imported == "[]" and line.startswith("semantic: off: "), line
    imported, line = status("without")
    assert imported == "[]"
    assert line.startswith("semantic: off: pip install 'memvault[semantic]' (numpy, onnxruntime, tokenizers")


def test_index_says_what_embedding_did(root: Path) -> None:
    first = run("index")
    assert "embedding (memvault-test-model): 4 encoded, 0 reused from the cache, 0 removed; 4 vector(s)" in first
    again = run("index", "--rebuild")  # new rowids, the same texts: every vector from the cache
    assert "0 encoded, 4 reused from the cache" in again
    assert run("index", "--json")["semantic"]["vectors"] == 4
    (root / "memvault.toml").write_text(semantic_toml("lexical"))
    assert "embedding" not in run("index")


def test_index_progress_has_a_bar_per_stage(root: Path) -> None:
    from memvault.cli.search import _Progress
    from memvault.search.index import update_index

    class Seen(_Progress):
        def __init__(self) -> None:
            super().__init__(True)
            self.calls: list[tuple[str, int, int]] = []

        def __call__(self, n: int, total: int) -> None:
            self.calls.append((self.label, n, total))
            super().__call__(n, total)

    seen = Seen()
    with Vault.open(root) as vault, seen:
        update_index(vault, progress=seen)
    assert ("embedding", 4, 4) in seen.calls and seen.calls[-1][0] == "embedding"
    assert seen.calls[0][0] == "indexing"
