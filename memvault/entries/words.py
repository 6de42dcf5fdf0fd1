"""Words of an entry's text, as the timeline's references and curate's "said again" read them:
one tokenizer, one stop list, one crude stem (below the timeline, so both can use them)."""

from __future__ import annotations

import re

WORD_RE = re.compile(r"[^\W_]+")
STOPWORDS = frozenset(
    "a an the about from of on in at to for by with and or is was were be that this it its "
    "entry entries earlier previous prior old one which what when not no".split()
)


def stem(word: str) -> str:
    """A deliberately crude English stem, enough to match 'updates' with 'update'."""
    w = word.lower()
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w
