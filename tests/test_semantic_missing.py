"""Without the semantic extra, or with a model that cannot be had: lexical search as before,
and a clear message when meaning is asked for. A lexical search never imports the extra."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memvault.cli import cli

from .helpers_index import UTC_TOML, entry, make_vault, write_log
from .helpers_semantic import MODEL, needs_extra, semantic_toml

HINT = "pip install 'memvault[semantic]'"
HIDE = "import sys\nsys.modules['onnxruntime'] = None  # not installed\n"
RUN = "from memvault.cli import main\nsys.argv = ['memvault', '--vault', *sys.argv[1:]]\nmain()\n"


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


def vault(root: Path, toml: str) -> Path:
    make_vault(root, toml)
    write_log(root, "2026-02-14", entry("10:00", "Observation", "Caroline paints landscapes on weekends"),
              entry("11:00", "Belief", "Melanie is allergic to peanuts"))
    return root


def test_without_the_extra_the_default_search_is_lexical(vault_dir):
    root = vault(vault_dir, semantic_toml())
    out = _python(HIDE + RUN, str(root), "search", "--json", "peanuts")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["id"] == "2026-02-14T11:00"
    assert not (root / ".memvault" / "vectors").exists()


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_without_the_extra_asking_for_meaning_says_how_to_install_it(vault_dir, mode):
    root = vault(vault_dir, semantic_toml())
    out = _python(HIDE + RUN, str(root), "search", "--mode", mode, "peanuts")
    assert out.returncode == 1 and out.stdout == ""
    assert HINT in out.stderr and "onnxruntime" in out.stderr and "Traceback" not in out.stderr
    out = _python(HIDE + RUN, str(root), "search", "--json", "--mode", mode, "peanuts")
    assert out.returncode == 1
    error = json.loads(out.stderr.strip().splitlines()[-1])["error"]
    assert error["code"] == "semantic_unavailable" and HINT in error["message"]


def test_without_the_extra_a_hybrid_vault_falls_back_to_words_with_a_warning(vault_dir):
    root = vault(vault_dir, semantic_toml(mode="hybrid"))
    out = _python(HIDE + RUN, str(root), "search", "peanuts")
    assert out.returncode == 0, out.stderr
    assert "2026-02-14T11:00" in out.stdout
    assert "hybrid" in out.stderr and HINT in out.stderr and "words only" in out.stderr


CHECK_IMPORTS = """import sys
from click.testing import CliRunner
from memvault.cli import cli
result = CliRunner().invoke(cli, ['--vault', sys.argv[1], 'search', *sys.argv[2:]])
assert result.exit_code == 0, result.output
assert 'peanuts' in result.output, result.output
print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))
"""


@needs_extra  # installed, and still not imported
@pytest.mark.parametrize(("toml", "args"), [(UTC_TOML, ()), (semantic_toml(), ("--mode", "lexical")),
                                            (semantic_toml(mode="lexical"), ())])
def test_a_lexical_search_never_imports_the_extra(vault_dir, toml, args):
    root = vault(vault_dir, toml)
    out = _python(CHECK_IMPORTS, str(root), *args, "peanuts")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- a model that cannot be had ----------------------------------------------------------------


def broken(tmp_path: Path, how: str) -> tuple[Path, str]:
    """A model folder broken `how`, and the path its message must name."""
    folder = tmp_path / "models" / "mein-modell"
    if how == "missing":
        return folder, str(folder)
    shutil.copytree(MODEL, folder)
    if how == "no tokenizer":
        (folder / "tokenizer.json").unlink()
        return folder, str(folder)
    if how == "no graph":
        (folder / "model.onnx").unlink()
        return folder, str(folder)
    if how == "bad json":
        (folder / "memvault-model.json").write_text('{"pooling": "mean",')
    elif how == "bad pooling":
        (folder / "memvault-model.json").write_text('{"pooling": "max"}')
    elif how == "bad graph":
        (folder / "model.onnx").write_bytes(b"not a graph")
        return folder, str(folder / "model.onnx")
    elif how == "bad tokenizer":
        (folder / "tokenizer.json").write_text('{"model": 3}')
        return folder, str(folder / "tokenizer.json")
    return folder, str(folder / "memvault-model.json")


HOWS = ["missing", "no tokenizer", "no graph", "bad json", "bad pooling", "bad graph", "bad tokenizer"]


@needs_extra
@pytest.mark.parametrize("how", HOWS)
def test_a_bad_model_is_named_when_meaning_is_asked_for(vault_dir, tmp_path, runner, how):
    folder, named = broken(tmp_path, how)
    vault(vault_dir, semantic_toml(model=folder))
    result = runner.invoke(cli, ["search", "--mode", "semantic", "peanuts"])
    assert result.exit_code == 1, result.output
    assert named in result.output and "[semantic] model" in result.output and "Traceback" not in result.output
    result = runner.invoke(cli, ["search", "--json", "--mode", "hybrid", "peanuts"])
    error = json.loads(result.stderr.strip().splitlines()[-1])["error"]
    assert result.exit_code == 1 and error["code"] == "semantic_unavailable" and named in error["message"]


@needs_extra
@pytest.mark.parametrize("how", HOWS)
def test_a_bad_model_in_a_default_search_warns_and_searches_words(vault_dir, tmp_path, runner, how):
    folder, named = broken(tmp_path, how)
    vault(vault_dir, semantic_toml(model=folder))
    result = runner.invoke(cli, ["search", "peanuts"])
    assert result.exit_code == 0, result.output
    assert "2026-02-14T11:00" in result.stdout
    assert named in result.stderr and "words only" in result.stderr


@needs_extra
@pytest.mark.parametrize("how", ["bad graph", "no tokenizer"])
def test_a_bad_model_never_fails_an_index_update(vault_dir, tmp_path, runner, how):
    folder, named = broken(tmp_path, how)
    vault(vault_dir, semantic_toml(model=folder))
    result = runner.invoke(cli, ["index", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["events_indexed"] == 2 and named in result.stderr
    assert named in report["semantic"]["error"]  # --json says why nothing was embedded


@needs_extra
def test_meaning_asked_for_with_no_model_configured_says_how_to_name_one(vault_dir, runner):
    vault(vault_dir, UTC_TOML)
    result = runner.invoke(cli, ["search", "--mode", "semantic", "peanuts"])
    assert result.exit_code == 1 and "[semantic] model" in result.output and "memvault.toml" in result.output
    result = runner.invoke(cli, ["search", "peanuts"])  # the default: words, and nothing to warn about
    assert result.exit_code == 0 and "2026-02-14T11:00" in result.stdout and result.stderr == ""


def test_a_reinstalled_model_keeps_its_vectors_and_a_changed_one_gets_new(tmp_path):
    # qa18b N2: the key named the files' times, so every venv or reinstall re-embedded the vault
    import os
    import shutil

    from memvault.semantic.models import from_folder

    from .helpers_semantic import MODEL

    first, second = tmp_path / "a" / "model", tmp_path / "b" / "model"
    for where in (first, second):
        shutil.copytree(MODEL, where, copy_function=shutil.copy)  # new files, new times
    os.utime(second / "model.onnx", (1_000_000, 1_000_000))
    assert from_folder(first, "m").key == from_folder(second, "m").key
    raw = bytearray((second / "tokenizer.json").read_bytes())
    raw[-2:-2] = b" "  # one byte more: another tokenizer file
    (second / "tokenizer.json").write_bytes(bytes(raw))
    assert from_folder(first, "m").key != from_folder(second, "m").key
