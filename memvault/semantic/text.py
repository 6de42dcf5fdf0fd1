"""What of an entry is embedded (pure): its heading path or title, then its text.

The content hash of this text keys the stored vector, so an entry moved, re-dated or renamed
but saying the same thing is never encoded again.
"""

from __future__ import annotations

import hashlib

from memvault.entries.model import Event
from memvault.semantic.vectors import HASH_BYTES

MAX_CHARS = 4000  # the model reads ~256 tokens; the rest would be cut anyway


def embed_text(ev: Event) -> str:
    head = " / ".join(ev.path) if ev.path else ev.title
    body = ev.content.strip()
    if head and body.startswith(head):
        head = ""
    return "\n".join(part for part in (head.strip(), body) if part)[:MAX_CHARS]


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:HASH_BYTES]
