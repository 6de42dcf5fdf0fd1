"""Confidence decay: how much a memory is still believed some time after it was confirmed.

One function, `confidence_at`, is the model's only entry point; the models are a small
registry so the retention curves of the other seeds can be added beside the exponential one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

SECONDS_PER_DAY = 86400.0

Model = Callable[[float, float, float], float]


def exponential(c0: float, days: float, rate: float) -> float:
    """The seed's model: confidence_0 x rate ^ days (0.95 per day halves it in ~13.5 days)."""
    return c0 * rate**days


def ebbinghaus(c0: float, days: float, rate: float) -> float:
    """Retention e^(-t/S), with S chosen so a day keeps the same fraction `rate`."""
    strength = -1.0 / math.log(rate) if rate < 1 else math.inf
    return c0 * math.exp(-days / strength) if strength != math.inf else c0


MODELS: dict[str, Model] = {"exponential": exponential, "ebbinghaus": ebbinghaus}


def elapsed_days(since: datetime, at: datetime) -> float:
    """Fractional days from `since` to `at`; never negative."""
    return max(0.0, (at - since).total_seconds() / SECONDS_PER_DAY)


def confidence_at(
    confidence0: float,
    confirmed: datetime | None,
    at: datetime,
    *,
    rate: float = 0.95,
    model: str = "exponential",
) -> float:
    """Confidence at time `at` of a memory last confirmed at `confirmed`.

    `confirmed` is the entry's timestamp or its latest reconfirmation at or before `at`; an
    undated memory does not decay.
    """
    if confirmed is None:
        return confidence0
    try:
        fn = MODELS[model]
    except KeyError:
        raise ValueError(f"unknown decay model {model!r}; known: {', '.join(MODELS)}") from None
    return fn(confidence0, elapsed_days(confirmed, at), rate)
