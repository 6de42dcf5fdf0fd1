"""Counting tokens for the budget: a documented estimate, or an exact tokenizer when one is installed.

The estimate (`estimate`): every line with its newline, its UTF-8 bytes divided by 4, rounded up.
English runs near 4 characters a token; counting bytes rather than characters makes umlauts
and non-Latin scripts (which tokenizers split finer) count more, so the estimate errs high.

`tiktoken`, when it is importable and its `cl100k_base` file is already in its local cache, counts
exactly (per line, with the newline, the same way). memvault never installs it and never lets it
download anything: without the cached file the estimate is used.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ESTIMATE = "utf8-bytes/4"
ENCODING = "cl100k_base"
# Where tiktoken (0.4+) keeps the file of `cl100k_base`: the sha1 of its URL in its cache folder.
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


@dataclass(frozen=True)
class Counter:
    """Counts the tokens of one line (with its newline); `name` is said in --json."""

    name: str
    line: Callable[[str], int]

    def text(self, text: str) -> int:
        """The tokens of a block: the sum over its lines (nothing for an empty block)."""
        return sum(self.line(ln) for ln in text.split("\n")) if text else 0


def estimate_line(line: str) -> int:
    return -(-(len(line.encode("utf-8", "surrogatepass")) + 1) // 4)


ESTIMATOR = Counter(ESTIMATE, estimate_line)


def _tiktoken_cached() -> bool:
    """Whether tiktoken would read `cl100k_base` from its cache (and so fetch nothing)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        import tempfile  # only here: it costs ~5 ms to import

        folder = str(Path(tempfile.gettempdir()) / "data-gym-cache")
    return bool(folder) and (Path(folder) / hashlib.sha1(_TIKTOKEN_URL.encode()).hexdigest()).is_file()


def counter(name: str = "auto") -> Counter:
    """`estimate`: the estimate; `auto`: tiktoken when installed and cached, else the estimate."""
    if name == "estimate" or not _tiktoken_cached():
        return ESTIMATOR
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]  # optional, never required

        enc = tiktoken.get_encoding(ENCODING)
    except Exception:  # not installed, or a cache it cannot read: the estimate still counts
        return ESTIMATOR
    return Counter(f"tiktoken:{ENCODING}", lambda line: len(enc.encode(line + "\n", disallowed_special=())))
