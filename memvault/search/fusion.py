"""Lexical and semantic candidates into one list (pure): memorywire's fusion names.

- `weighted` (default): each side's scores brought to [0, 1] (BM25 over its best; cosine
  min-max over the semantic candidates), then `(1 - w) * lexical + w * semantic`.
- `rrf`: reciprocal rank fusion, sum of `1 / (k + rank)`.
- `max`: the higher of the two normalised scores.

The result feeds search's ranking as BM25 did: relevance is a score over the best, and
importance, recency and confidence are applied after fusion as before (docs/semantic.md).
"""

from __future__ import annotations

Scored = list[tuple[int, float]]


def _by_best(found: Scored) -> dict[int, float]:
    best = max((s for _, s in found), default=0.0)
    return {r: s / best for r, s in found} if best > 0 else {}


def _min_max(found: Scored) -> dict[int, float]:
    if not found:
        return {}
    hi, lo = max(s for _, s in found), min(s for _, s in found)
    if hi - lo < 1e-9:
        return {r: 1.0 for r, _ in found}
    return {r: (s - lo) / (hi - lo) for r, s in found}


def fuse(lexical: Scored, semantic: Scored, method: str = "weighted", weight: float = 0.5,
         k: int = 60) -> Scored:
    """One list, best first (ties: lexical order, then semantic order, so the result is stable)."""
    order = {r: i for i, r in enumerate(dict.fromkeys([r for r, _ in lexical] + [r for r, _ in semantic]))}
    if method == "rrf":
        scores: dict[int, float] = {}
        for found in (lexical, semantic):
            for rank, (r, _) in enumerate(found, 1):
                scores[r] = scores.get(r, 0.0) + 1.0 / (k + rank)
    else:
        lex, sem = _by_best(lexical), _min_max(semantic)
        if method == "max":
            scores = {r: max(lex.get(r, 0.0), sem.get(r, 0.0)) for r in order}
        else:
            scores = {r: (1 - weight) * lex.get(r, 0.0) + weight * sem.get(r, 0.0) for r in order}
    out = [(r, s) for r, s in scores.items() if s > 0]
    out.sort(key=lambda p: (-p[1], order[p[0]]))
    return out
