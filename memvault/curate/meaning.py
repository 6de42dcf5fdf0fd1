"""Curate's "same thing, said twice" by meaning: when the vault searches by meaning, two texts
whose vectors' cosine is at least `[curate] semantic_similarity` also say the same, unless
`differs` finds a name, number, date or value that tells them apart (docs/curate.md).

`joins` decides (pure: a cosine, the threshold, what `differs` said). `Meaning` holds the
vectors of curate's texts and finds, for each new entry, the texts near enough. `load` is the
shell: it asks whether semantic search is on, takes the vectors from the content-hash cache
the index fills (`VectorStore.cached`) and encodes only the texts it lacks, in bulk. Without
the extra, or in lexical mode, it returns None and curate compares words only, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.semantic.models import SemanticUnavailable
from memvault.semantic.text import embed_text, text_hash

if TYPE_CHECKING:
    import numpy as np

    from memvault.entries.model import Event
    from memvault.entries.similarity import Sig
    from memvault.parsed import ParsedVault

log = logging.getLogger("memvault")

PRODUCT_CELLS = 1 << 24  # cosines computed at once (64 MB of float32), whatever the vault's size

# What select asks for: node key -> text to embed, and the keys to find neighbours for.
Provider = Callable[[dict[str, str], Iterable[str]], "Meaning | None"]


def joins(cosine: float, threshold: float, why_differs: str | None) -> bool:
    """Two texts say the same by meaning: close enough, and nothing they state differs."""
    return cosine >= threshold and why_differs is None


def reason(cosine: float) -> str:
    """What `curate --explain` says of a join by meaning."""
    return f"same meaning (cosine {cosine:.2f})"


def node_texts(nodes: dict[str, Sig], events: dict[str, Event | None]) -> dict[str, str]:
    """What each of select's texts embeds: an entry as the index embeds it (so the cache holds
    it), a bullet its text."""
    out = {}
    for key, sig in nodes.items():
        ev = events.get(key)
        out[key] = embed_text(ev) if ev is not None else sig.text
    return out


@dataclass
class Meaning:
    """Each new entry's neighbours by meaning, nearest first (cosine >= threshold)."""

    threshold: float
    neighbours: dict[str, list[tuple[str, float]]] = field(default_factory=dict)

    def near(self, key: str) -> list[tuple[str, float]]:
        return self.neighbours.get(key, [])

    @classmethod
    def from_vectors(cls, keys: list[str], matrix: np.ndarray, wanted: Iterable[str], threshold: float) -> Meaning:
        """Neighbours of the `wanted` keys among all `keys` (rows of `matrix`, unit length)."""
        import numpy as np

        at = {k: i for i, k in enumerate(keys)}
        rows = [at[k] for k in wanted if k in at]
        out = cls(threshold)
        step = max(1, PRODUCT_CELLS // max(1, len(keys)))
        for start in range(0, len(rows), step):
            part = rows[start:start + step]
            sims = matrix[part] @ matrix.T
            for i, row in zip(part, sims, strict=True):
                hits = np.flatnonzero(row >= threshold)
                hits = hits[hits != i]
                order = hits[np.argsort(-row[hits], kind="stable")]
                out.neighbours[keys[i]] = [(keys[j], float(row[j])) for j in order]
        return out


def provider(vault: ParsedVault, threshold: float) -> Provider | None:
    """How select gets vectors for this vault, or None when it compares words only."""
    from memvault.semantic.choice import choose_mode

    if choose_mode(vault.config, None, vault.root) == "lexical":
        return None

    def get(texts: dict[str, str], wanted: Iterable[str]) -> Meaning | None:
        try:
            return load(vault, texts, wanted, threshold)
        except SemanticUnavailable as exc:  # a damaged model: words only, said once
            log.warning("%s; curate compares words only", exc)
            return None

    return get


def load(vault: ParsedVault, texts: dict[str, str], wanted: Iterable[str], threshold: float) -> Meaning:
    """The vectors of `texts` from the cache, encoding (and caching) only what it lacks."""
    import numpy as np

    from memvault.semantic.choice import model_spec
    from memvault.semantic.vectors import VectorStore

    wanted = list(wanted)
    if not wanted or not texts:
        return Meaning(threshold)
    spec = model_spec(vault.config, vault.root)
    store = VectorStore(vault.derived / "vectors" / spec.key, spec.key)
    try:
        keys = list(texts)
        hashes = [text_hash(texts[k]) for k in keys]
        have = store.cached(list(dict.fromkeys(hashes)))
        missing = {h: texts[k] for k, h in zip(keys, hashes, strict=True) if h not in have}
        if missing:
            have.update(_encode(vault, spec, store, missing))
        matrix = np.frombuffer(b"".join(have[h] for h in hashes), dtype=np.float32).reshape(len(keys), -1)
        return Meaning.from_vectors(keys, matrix, wanted, threshold)
    finally:
        store.close()


def _encode(vault: ParsedVault, spec: Any, store: Any, missing: dict[bytes, str]) -> dict[bytes, bytes]:
    import contextlib
    import sqlite3

    from memvault.semantic import settings
    from memvault.semantic.encoder import Encoder

    encoder = Encoder(spec, bulk=len(missing) > 64, threads=int(settings(vault.config).get("threads", 0)))
    items = list(missing.items())
    vectors = encoder.encode([t for _, t in items])
    pairs = [(h, v.tobytes()) for (h, _), v in zip(items, vectors, strict=True)]
    with contextlib.suppress(sqlite3.Error):  # a cache write lost to a busy database costs an encode next time
        store.put(pairs)
    return dict(pairs)
