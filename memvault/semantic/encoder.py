"""Texts to unit vectors with an ONNX model on the CPU (onnxruntime + tokenizers, the extra).

Two ways to open a model, because they cost differently: a search encodes one query, and a
session with no graph optimisation opens in ~45 ms (full optimisation: ~0.5 s, then ~5 ms a
query); an index build encodes thousands of texts, where the optimised graph wins. Texts are
encoded in batches of similar length, so padding costs little.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memvault.semantic.models import EXTRA_HINT, ModelSpec, SemanticUnavailable, runtime_missing
from memvault.semantic.vectors import quiet_blas

if TYPE_CHECKING:
    import numpy as np

BATCH = 32


class Encoder:
    def __init__(self, spec: ModelSpec, *, bulk: bool = False, threads: int = 0):
        quiet_blas()
        missing = runtime_missing()
        if missing:
            raise SemanticUnavailable(f"semantic search needs {', '.join(missing)}: {EXTRA_HINT}")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.spec = spec
        options = ort.SessionOptions()
        # one query is a few small products: a second thread costs more than it saves (8.5 against
        # 23.5 ms a query on a busy 2-core machine); batches use the cores
        options.intra_op_num_threads = threads or (min(4, os.cpu_count() or 1) if bulk else 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if bulk
                                            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        try:  # onnxruntime and tokenizers raise their own kinds; the message names the file
            self.session = ort.InferenceSession(str(spec.onnx), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise SemanticUnavailable(f"[semantic] model {spec.name}: {spec.onnx} cannot be loaded ({exc})") from None
        try:
            self.tokenizer = Tokenizer.from_file(str(spec.tokenizer))
        except Exception as exc:
            raise SemanticUnavailable(f"[semantic] model {spec.name}: {spec.tokenizer} cannot be loaded "
                                      f"({exc})") from None
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(spec.max_tokens)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.encode(["dimension"]).shape[1])
        return self._dim

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """One unit-length float32 row per text (queries get the model's query prefix)."""
        import numpy as np

        prefix = self.spec.query_prefix if query else self.spec.document_prefix
        encodings = self.tokenizer.encode_batch([prefix + t for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out: list[Any] = [None] * len(texts)
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            vectors = self._run([encodings[i] for i in chunk])
            for i, v in zip(chunk, vectors, strict=True):
                out[i] = v
        if not out:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        result = np.stack(out).astype(np.float32)
        self._dim = result.shape[1]
        return result

    def _run(self, encodings: list[Any]) -> np.ndarray:
        import numpy as np

        width = max(1, max(len(e.ids) for e in encodings))
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        feed = {k: v for k, v in feed.items() if k in self.inputs}
        hidden = self.session.run(None, feed)[0]
        if hidden.ndim == 2:  # the graph pools itself
            pooled = hidden
        elif self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
