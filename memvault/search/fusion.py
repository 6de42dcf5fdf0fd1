"""Lexical and semantic candidates into one list (pure): memorywire's fusion names.

- `weighted` (default): each side's scores as z-scores, then `(1 - w) * lexical + w * semantic`.
  BM25 is standardised over the lexical candidates (one not among them takes their lowest);
  cosine over every entry of the vault (its mean and spread: `Near.mean`, `Near.std`), and every
  candidate gets its own cosine, lexical ones included. On LoCoMo this beat min-max scaling by
  +0.03 R@10 and reciprocal rank fusion by +0.08 (docs/semantic.md).
- `rrf`: reciprocal rank fusion, `(1 - w) / (k + lexical rank) + w / (k + semantic rank)`, times 2
  (plain RRF at w = 0.5).
- `max`: the higher of the two z-scores (weighted by `1 - w` and `w`).

The result feeds search's ranking as BM25 did, shifted so the worst candidate scores just above
0: relevance is a score over the best, and importance, recency and confidence are applied after
fusion as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Scored = list[tuple[int, float]]


@dataclass
class Near:
    """The semantic side of one query: the nearest rows (best first), the cosine of every
    candidate row (`scores`: the nearest and the lexical candidates), and the mean and spread
    of the cosines over all rows."""

    top: Scored = field(default_factory=list)
    scores: dict[int, float] = field(default_factory=dict)
    mean: float = 0.0
    std: float = 1.0


def _z(values: list[float]) -> list[float]:
    if not values:
        return []
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return [(v - mean) / (spread if spread > 1e-9 else 1.0) for v in values]


def fuse(lexical: Scored, near: Near, method: str = "weighted", weight: float = 0.5, k: int = 60) -> Scored:
    """One list, best first (ties: lexical order, then semantic order, so the result is stable)."""
    order = {r: i for i, r in enumerate(dict.fromkeys([r for r, _ in lexical] + [r for r, _ in near.top]))}
    if not order:
        return []
    if method == "rrf":
        lex_rank = {r: i for i, (r, _) in enumerate(lexical, 1)}
        sem_rank = {r: i for i, (r, _) in enumerate(near.top, 1)}
        scores = {r: 2 * ((1 - weight) / (k + lex_rank[r]) if r in lex_rank else 0.0)
                  + 2 * (weight / (k + sem_rank[r]) if r in sem_rank else 0.0) for r in order}
    else:
        lz = dict(zip([r for r, _ in lexical], _z([s for _, s in lexical]), strict=True))
        floor = min(lz.values(), default=0.0)
        spread = near.std if near.std > 1e-9 else 1.0

        def sz(r: int) -> float:
            return (near.scores.get(r, near.mean) - near.mean) / spread

        if method == "max":
            scores = {r: max((1 - weight) * lz.get(r, floor), weight * sz(r)) for r in order}
        else:
            scores = {r: (1 - weight) * lz.get(r, floor) + weight * sz(r) for r in order}
    low = min(scores.values())
    out = [(r, s - low + 1e-6) for r, s in scores.items()]
    out.sort(key=lambda p: (-p[1], order[p[0]]))
    return out
