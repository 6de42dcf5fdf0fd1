"""The snippet shown with a hit: a window of its text around the matches, matched words in bold."""

from __future__ import annotations

from memvault.search.textproc import iter_words

MARK_OPEN, MARK_CLOSE = "**", "**"


def snippet(text: str, terms: set[str], width: int = 180) -> str:
    """A window of `text` around the densest run of matches, matched words in **bold**."""
    flat = " ".join(text.split())
    spans = [(s, e) for s, e, ts in iter_words(flat) if terms.intersection(ts)]
    if not spans:
        return flat if len(flat) <= width else flat[: width - 1].rstrip() + "\u2026"
    start = _best_window(spans, width, len(flat))
    end = min(len(flat), start + width)
    if start > 0:
        start = flat.find(" ", start) + 1 or start
    if end < len(flat):
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    out, pos = [], start
    for s, e in spans:
        if s < start or e > end:
            continue
        out += [flat[pos:s], MARK_OPEN, flat[s:e], MARK_CLOSE]
        pos = e
    out.append(flat[pos:end])
    return ("\u2026" if start > 0 else "") + "".join(out) + ("\u2026" if end < len(flat) else "")


def _best_window(spans: list[tuple[int, int]], width: int, length: int) -> int:
    """Start of the `width` window that holds the most matches (a little context before)."""
    lead = width // 4
    best_start, best_count, j = 0, 0, 0
    for i, (s, _) in enumerate(spans):
        while j < len(spans) and spans[j][0] < s - lead + width:
            j += 1
        if j - i > best_count:
            best_start, best_count = max(0, s - lead), j - i
    return min(best_start, max(0, length - width))
