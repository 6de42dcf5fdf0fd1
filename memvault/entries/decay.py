"""Confidence decay: how much a memory is still believed some time after it was confirmed.

`confidence_at` is the one entry point. It asks the vault's retention model
(`entries/retention.py`, `[decay] model`) about a single presentation at the last confirmation,
of medium importance and never recalled, so confidence stays a property of the entry and its
confirmations; the entry's `retention` (`entries/presentations.py`) adds its importance, every
presentation and its recalls.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from memvault.config.core import Config
from memvault.entries import retention

SECONDS_PER_DAY = 86400.0
MODELS = retention.MODELS


def elapsed_days(since: datetime, at: datetime) -> float:
    """Fractional days from `since` to `at`; never negative."""
    return max(0.0, (at - since).total_seconds() / SECONDS_PER_DAY)


def elapsed_ticks(since: datetime, at: datetime, tick: float = SECONDS_PER_DAY) -> float:
    """Fractional ticks of `tick` seconds from `since` to `at`; never negative."""
    return max(0.0, (at - since).total_seconds() / tick)


def confidence_at(
    confidence0: float,
    confirmed: datetime | None,
    at: datetime,
    *,
    rate: float = 0.95,
    model: str = "exponential",
    tick: float = SECONDS_PER_DAY,
    params: retention.Params | None = None,
) -> float:
    """Confidence at time `at` of a memory last confirmed at `confirmed`.

    `confirmed` is the entry's timestamp or its latest reconfirmation at or before `at`; an
    undated memory does not decay. `params` (the vault's `[decay]` table) overrides `rate`.
    """
    if confirmed is None:
        return confidence0
    p = params or retention.Params(rate=rate)
    return confidence0 * retention.retention(model, retention.Memory(elapsed_ticks(confirmed, at, tick)), p)


def vault_confidence(config: Config, confidence0: float, confirmed: datetime | None, at: datetime) -> float:
    """`confidence_at` with the vault's `[decay]` settings (model, tick, rate and the model's own)."""
    return confidence_at(confidence0, confirmed, at, model=config.decay_model, tick=config.decay_tick,
                         params=vault_params(config))


def vault_params(config: Config) -> retention.Params:
    decay = config.raw.get("decay", {})
    return _params(tuple(sorted(decay.items())) if isinstance(decay, dict) else ())


@lru_cache(maxsize=64)
def _params(items: tuple[tuple[str, Any], ...]) -> retention.Params:
    return retention.params_of(dict(items))
