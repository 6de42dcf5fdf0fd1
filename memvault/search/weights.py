"""The score: how relevance combines with importance, recency and confidence.

    score = w_rel·relevance + w_imp·importance + w_rec·recency + w_conf·confidence

`relevance` is the engine's BM25 divided by the best BM25 of the query (0-1), `importance`
the entry's `Importance:` (default by kind), `recency` e^(-λ·hours since the entry was written
or last returned by a search), `confidence` the decayed confidence at the ranking time. The
weights, λ and the BM25 parameters come from `[search]` in memvault.toml (`Weights`).

`[search] preset` names a set of weights (`PRESETS`): "memvault" (the defaults) or
"seed-004", the recall protocol's own baseline 0.5·relevance + 0.3·importance + 0.2·recency
(λ = 0.01, no confidence term). A weight set explicitly in the same table overrides the
preset's value for that key, so a preset is a starting point that can be tuned one key at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memvault.config.core import Config
from memvault.entries import decay
from memvault.entries.model import Event
from memvault.errors import ConfigError
from memvault.search.fields import FIELDS

SEARCH_DEFAULTS: dict[str, Any] = {
    "preset": "memvault",  # PRESETS: the weights below, or another named set they start from
    "relevance": 0.5,
    "importance": 0.2,
    "recency": 0.2,
    "confidence": 0.1,
    "recency_lambda": 0.01,  # per hour: the recall protocol's starting value (half-life ~69 h)
    "importance_default": 0.5,
    "curated_importance": 0.7,  # MEMORY.md holds what someone chose to keep
    "superseded_factor": 0.8,
    "candidates": 200,  # BM25 candidates re-ranked per query
    "score_limit": 5000,  # entries BM25 scores per query before rare words select them (plan_query)
    "field_weights": {"title": 2.0, "body": 1.0, "tags": 2.0, "extra": 0.5, "context": 0.3},
    "k1": 1.2,
    "b": 0.75,
    "record": False,  # whether a search counts its first hits as recalled (search/access.py)
    "record_top": 3,
}


# Named weight sets: what each changes from SEARCH_DEFAULTS ("memvault" is the defaults).
# config.core.SCHEMA lists the same names (it sits below this room; tests check they agree).
PRESETS: dict[str, dict[str, float]] = {
    "memvault": {},
    # fact-extraction-and-recall-protocol.md: "Recommended baseline: w_rel = 0.5, w_imp = 0.3,
    # w_rec = 0.2", recency = e^(-λ·hours since access), λ = 0.01. The protocol has no
    # confidence term.
    "seed-004": {"relevance": 0.5, "importance": 0.3, "recency": 0.2, "confidence": 0.0, "recency_lambda": 0.01},
}


def search_settings(config: Config | None) -> dict[str, Any]:
    """`[search]` over its preset over SEARCH_DEFAULTS: a key set in the file wins over the preset."""
    own = config.section("search") if config else {}
    preset = own.get("preset", SEARCH_DEFAULTS["preset"])
    if preset not in PRESETS:  # SCHEMA refuses it when the file loads; a Config built in code may not
        where = (config.path if config else None) or "memvault.toml"
        raise ConfigError(f"{where}: [search] preset {preset!r} is not known; known: {', '.join(PRESETS)}")
    return {**SEARCH_DEFAULTS, **PRESETS[preset], **own}


@dataclass(frozen=True)
class Weights:
    relevance: float = 0.5
    importance: float = 0.2
    recency: float = 0.2
    confidence: float = 0.1
    recency_lambda: float = 0.01
    importance_default: float = 0.5
    curated_importance: float = 0.7
    superseded_factor: float = 0.8
    candidates: int = 200
    score_limit: int = 5000
    field_weights: tuple[float, ...] = (2.0, 1.0, 2.0, 0.5, 0.3)
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def from_config(cls, config: Config | None) -> Weights:
        raw = search_settings(config)
        fw = {**SEARCH_DEFAULTS["field_weights"], **(raw.get("field_weights") or {})}
        where = f"{config.path or 'memvault.toml'}" if config else "memvault.toml"

        def number(key: str, value: Any, kind: type = float) -> Any:
            if isinstance(value, bool) or not isinstance(value, int | float):
                message = f"[search] {key} = {value!r} is not a number"
                if config is None:
                    raise ConfigError(f"{where}: {message}")
                raise config.error("search", key.split(".")[0], message)
            return kind(value)

        values = {k: number(k, raw[k]) for k in (
            "relevance", "importance", "recency", "confidence", "recency_lambda",
            "importance_default", "curated_importance", "superseded_factor", "k1", "b")}
        unknown = set(fw) - set(FIELDS)
        if unknown:
            message = f"[search] field_weights has unknown fields {sorted(unknown)}; known: {', '.join(FIELDS)}"
            raise config.error("search", "field_weights", message) if config else ConfigError(f"{where}: {message}")
        return cls(**values, candidates=number("candidates", raw["candidates"], int),
                   score_limit=number("score_limit", raw["score_limit"], int),
                   field_weights=tuple(number(f"field_weights.{f}", fw[f]) for f in FIELDS))


def recency(written: datetime | None, last_access: datetime | None, at: datetime, lam: float) -> float:
    """e^(-λ·hours) since the later of writing and last access (not after `at`)."""
    times = [t for t in (written, last_access) if t is not None and t <= at]
    if not times:
        return 0.0 if written is None or written > at else 1.0
    hours = (at - max(times)).total_seconds() / 3600.0
    return math.exp(-lam * hours)


def importance_of(event: Event, w: Weights) -> float:
    return _importance(event.importance, event.kind, w)


def _importance(value: float | None, kind: str, w: Weights) -> float:
    if value is not None:
        return value
    return w.curated_importance if kind == "curated" else w.importance_default


def score_ceiling(relevance: float, head: Any, last_access: datetime | None, at: datetime, w: Weights,
                  config: Config) -> float:
    """The score `rank_candidates` gives a live entry that no other entry supersedes or
    reconfirms, from what the index stores beside it (`store.Head`: timestamp, kind,
    importance, confidence_0, updated) without decoding it. A filtered-out or non-live entry
    is no hit at all, so this bounds what the candidate can add; search decodes only the
    candidates whose ceiling reaches its hits (`query.Ranker.rank`)."""
    times = [t for t in (head.timestamp, head.updated) if t is not None and t <= at]
    confirmed = max(times) if times else head.timestamp  # Timeline.confirmed_at, nothing reconfirming
    conf = decay.vault_confidence(config, head.confidence0, confirmed, at)
    rec = recency(head.timestamp, last_access, at, w.recency_lambda)
    return combine(relevance, _importance(head.importance, head.kind, w), rec, conf, w)


def combine(rel: float, imp: float, rec: float, conf: float, w: Weights) -> float:
    return w.relevance * rel + w.importance * imp + w.recency * rec + w.confidence * conf

