"""Retention models: how much of a memory is left, from when it was presented and recalled.

A registry of pure functions, one per model, each `(Memory, Params) -> float in [0, 1]`; no I/O.
`[decay] model` picks one per vault (docs/retention.md has each formula and a table of values):

- `exponential` (seed 000, agent-memory-spec v0.1): `rate ^ t`, t in ticks since the latest
  presentation (the entry or its latest reconfirmation); the default.
- `ebbinghaus`: `e^(-t/S)` from the latest presentation, S chosen so one tick keeps `rate`.
- `forgetting-curve` (seed 001, the memory skill's combined model):
  `max(e^(-age/(S × k)), logistic(ln Σ max(1, t_i)^(-d) + ln k + 0.08 × min(10, accesses) − θ))`,
  with `k` the importance multiplier (high 1.5, medium 1.0, low 0.5), `age` ticks since the
  entry was written, `t_i` ticks since each presentation, S = `strength` (100), d = `actr_decay`
  (0.5), θ = `retrieval_threshold` (−2.5). The bonuses, the one-tick floor on `t_i` and θ's
  default are the skill's published maintenance script and research notes.

Statuses follow the skill's table: active above 0.5, forgotten below 0.1, fading between (both
ends included: the table leaves 0.5 and 0.1 themselves unplaced, and neither is "> 0.5" or "< 0.1").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Band = Literal["high", "medium", "low"]
Status = Literal["active", "fading", "forgotten"]

MULTIPLIERS: dict[Band, float] = {"high": 1.5, "medium": 1.0, "low": 0.5}
# memvault's importance is a number 0-1 (`Importance: high` reads 0.9, `medium` 0.5, `low` 0.2);
# the seed has three levels. Bands keep the words exact and split the numbers halfway between.
HIGH_FROM, LOW_UNTIL = 0.7, 0.3
CURATED_IMPORTANCE = 0.7  # an unmarked MEMORY.md bullet, as search weighs it ([search] curated_importance)
ACCESS_BONUS, ACCESS_CAP = 0.08, 10
ACTIVE_ABOVE, FORGOTTEN_BELOW = 0.5, 0.1

DEFAULTS: dict[str, Any] = {
    "model": "exponential", "rate": 0.95, "tick": "1d",
    "strength": 100.0, "actr_decay": 0.5, "retrieval_threshold": -2.5,
}


@dataclass(frozen=True, slots=True)
class Memory:
    """What a model sees of an entry at one moment, in ticks (never negative).

    `age`: since the entry was written (its first presentation); `repeats`: since each later
    presentation (a reconfirmation, an update, a later entry saying the same); `accesses`: recalls.
    """

    age: float
    repeats: tuple[float, ...] = ()
    importance: Band = "medium"
    accesses: int = 0

    @property
    def latest(self) -> float:
        return min((self.age, *self.repeats))


@dataclass(frozen=True, slots=True)
class Params:
    rate: float = 0.95
    strength: float = 100.0
    actr_decay: float = 0.5
    retrieval_threshold: float = -2.5


Model = Callable[[Memory, Params], float]


def exponential(m: Memory, p: Params) -> float:
    """Seed 000: rate ^ ticks since the latest presentation (0.95 a day halves it in ~13.5 days)."""
    return float(p.rate ** m.latest)


def ebbinghaus(m: Memory, p: Params) -> float:
    """e^(-t/S) from the latest presentation, S chosen so one tick keeps the fraction `rate`."""
    return math.exp(m.latest * math.log(p.rate))


def ebbinghaus_part(m: Memory, p: Params) -> float:
    """Seed 001's forgetting curve: e^(-age / (S × importance multiplier)), age since written."""
    return math.exp(-m.age / (p.strength * MULTIPLIERS[m.importance]))


def activation(m: Memory, p: Params) -> float:
    """ACT-R base-level activation plus the skill's importance and access bonuses."""
    base = math.log(sum(max(1.0, t) ** -p.actr_decay for t in (m.age, *m.repeats)))
    return base + math.log(MULTIPLIERS[m.importance]) + ACCESS_BONUS * min(ACCESS_CAP, m.accesses)


def retrieval_probability(m: Memory, p: Params) -> float:
    x = activation(m, p) - p.retrieval_threshold
    # The two branches of the logistic that cannot overflow.
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def forgetting_curve(m: Memory, p: Params) -> float:
    """Seed 001: max(Ebbinghaus, ACT-R retrieval probability); the curve is the floor."""
    return max(ebbinghaus_part(m, p), retrieval_probability(m, p))


MODELS: dict[str, Model] = {
    "exponential": exponential,
    "ebbinghaus": ebbinghaus,
    "forgetting-curve": forgetting_curve,
}


def model_of(model: str) -> Model:
    try:
        return MODELS[model]
    except KeyError:
        raise ValueError(f"unknown retention model {model!r}; known: {', '.join(MODELS)}") from None


def presented_once(model: str, p: Params) -> Callable[[float, Band, int], float]:
    """`retention(model, Memory(age, (), importance, accesses), p)` as a function of those three:
    what `list` asks for most of 100k entries. The two curves of the latest presentation alone
    are written out (a `Memory` costs more than their arithmetic); tests check they agree."""
    if model == "exponential":
        rate = p.rate
        return lambda age, importance, accesses: min(1.0, max(0.0, float(rate ** age)))
    if model == "ebbinghaus":
        log_rate = math.log(p.rate)
        return lambda age, importance, accesses: min(1.0, max(0.0, math.exp(age * log_rate)))
    fn = model_of(model)
    return lambda age, importance, accesses: min(1.0, max(0.0, fn(Memory(age, (), importance, accesses), p)))


def retention(model: str, m: Memory, p: Params) -> float:
    return min(1.0, max(0.0, model_of(model)(m, p)))


def status(value: float) -> Status:
    """The seed's table: active > 0.5, forgotten < 0.1, fading in between."""
    if value > ACTIVE_ABOVE:
        return "active"
    if value < FORGOTTEN_BELOW:
        return "forgotten"
    return "fading"


def band(importance: float | None, curated: bool = False) -> Band:
    """The seed's level for memvault's 0-1 importance; unset is medium (the seed's default),
    or high for a MEMORY.md entry (someone chose to keep it)."""
    value = importance if importance is not None else (CURATED_IMPORTANCE if curated else 0.5)
    if value >= HIGH_FROM:
        return "high"
    if value <= LOW_UNTIL:
        return "low"
    return "medium"


def params_of(decay: dict[str, Any]) -> Params:
    """Params from a `[decay]` table (validated by config), over DEFAULTS."""
    merged = {**DEFAULTS, **decay}
    return Params(rate=float(merged["rate"]), strength=float(merged["strength"]),
                  actr_decay=float(merged["actr_decay"]),
                  retrieval_threshold=float(merged["retrieval_threshold"]))


MARKS: dict[Status, str] = {"active": "●", "fading": "◐", "forgotten": "○"}


def table(model: str | Model, p: Params | None = None,
          ticks: tuple[float, ...] = (0, 1, 7, 14, 30, 50, 100, 150, 365, 1000, 5000)) -> str:
    """Markdown: retention of one presentation, never recalled, by importance and ticks since
    written, marked by status (docs/retention.md is generated from this)."""
    p = p or Params()
    fn = MODELS[model] if isinstance(model, str) else model
    head = "| importance | " + " | ".join(f"{t:g}" for t in ticks) + " |"
    rows = [head, "|---|" + "---|" * len(ticks)]
    for level in MULTIPLIERS:
        cells = []
        for t in ticks:
            value = min(1.0, max(0.0, fn(Memory(float(t), importance=level), p)))
            cells.append(f"{value:.2f} {MARKS[status(value)]}")
        rows.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def plot(model: str | Model, p: Params | None = None, *, until: float = 400, width: int = 57, height: int = 10) -> str:
    """A text chart of `table`'s curves: retention (rows, 1.0 at the top) against ticks since
    written (columns, 0 to `until`), one letter per importance (H, M, L; `*` where two meet);
    `-` marks the active and forgotten thresholds (0.5, 0.1) where no curve is."""
    p = p or Params()
    fn = MODELS[model] if isinstance(model, str) else model
    grid = [[" "] * width for _ in range(height + 1)]
    for y in (ACTIVE_ABOVE, FORGOTTEN_BELOW):
        grid[round((1 - y) * height)] = ["-"] * width
    for level in MULTIPLIERS:
        for col in range(width):
            value = min(1.0, max(0.0, fn(Memory(until * col / (width - 1), importance=level), p)))
            row = round((1 - value) * height)
            cell = grid[row][col]
            grid[row][col] = level[0].upper() if cell in " -" else "*"
    lines = [f"{1 - r / height:4.1f} |{''.join(cells)}".rstrip() for r, cells in enumerate(grid)]
    axis = f"{0:<{width // 2}}{until / 2:g}"
    return "\n".join([*lines, "     +" + "-" * width, f"      {axis:<{width - len(f'{until:g}')}}{until:g} ticks"])
