"""Issue 15: `[search] preset = "seed-004"`, the recall protocol's weights, and explicit keys over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.config.core import SCHEMA, Config
from memvault.errors import ConfigError
from memvault.search.weights import PRESETS, Weights, combine
from memvault.vault import Vault
from tests.conftest import plain_vault


def weights(search: dict) -> Weights:
    return Weights.from_config(Config.from_dict({"search": search}))


def test_seed_004_is_the_protocols_baseline():
    w = weights({"preset": "seed-004"})
    assert (w.relevance, w.importance, w.recency, w.confidence, w.recency_lambda) == (0.5, 0.3, 0.2, 0.0, 0.01)
    # the protocol's own example: relevance 0.8, importance 0.8, accessed 24 h ago
    assert combine(0.8, 0.8, 2.718281828459045 ** (-0.01 * 24), 0.37, w) == pytest.approx(
        0.5 * 0.8 + 0.3 * 0.8 + 0.2 * 0.786627861)
    assert weights({}) == weights({"preset": "memvault"}) == Weights()


def test_a_key_set_in_the_file_overrides_the_preset():
    w = weights({"preset": "seed-004", "recency": 0.1, "confidence": 0.1})
    assert (w.relevance, w.importance, w.recency, w.confidence) == (0.5, 0.3, 0.1, 0.1)


def test_unknown_presets_are_config_errors_and_the_schema_names_every_preset():
    with pytest.raises(ConfigError, match="preset"):
        weights({"preset": "seed-005"})
    assert all(SCHEMA["search"]["preset"].ok(name) for name in PRESETS)


def test_the_vault_searches_with_its_preset(runner, vault_dir: Path):
    root = plain_vault(vault_dir)
    (root / "memvault.toml").write_text('[search]\npreset = "seed-004"\n', encoding="utf-8")
    with Vault.open(root) as vault:
        assert Weights.from_config(vault.config).importance == 0.3
    hits = json.loads(runner.invoke(cli, ["--vault", str(root), "search", "tea", "--json"]).output)
    assert [h["id"] for h in hits] == ["2026-02-21T09:00"]
    (root / "memvault.toml").write_text('[search]\npreset = "nope"\n', encoding="utf-8")
    bad = runner.invoke(cli, ["--vault", str(root), "search", "tea", "--json"])
    assert json.loads(bad.output)["error"]["code"] == "config"
