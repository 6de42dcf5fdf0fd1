"""Whose word an entry is: the user's, or something inferred. One rule for every reader
(`context`'s user-over-inferred, docs/context.md) and every writer (`ingest`, docs/ingest.md).

The user's word: `Source: user` (or `user:<who>`), or an entry whose `Metadata:` says
`"speaker": "user"`: what `memvault ingest` writes for what the user said in a transcript, whose
`Source:` names the transcript and turn (`chat.txt#turn-7`) so the words can be found again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

SPEAKER_KEY = "speaker"


def source_is_user(source: str | None) -> bool:
    """`Source: user` (also `user:<who>`): the person said it."""
    s = (source or "").strip().lower()
    return s == "user" or s.startswith("user:")


def said_by_user(source: str | None, meta: Mapping[str, str] | None) -> bool:
    """The user's word: `Source: user`, or `Metadata: {"speaker": "user", ...}`."""
    if source_is_user(source):
        return True
    raw = (meta or {}).get("metadata")
    if not raw or '"speaker"' not in raw:
        return False
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get(SPEAKER_KEY) == "user"
