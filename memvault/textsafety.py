"""Characters that change what a line means or what a terminal does, and the one place each
rule about them lives (docs/security.md "Terminal output", docs/format.md "Files").

- Line breaks: the reader breaks lines at LF, CRLF and a lone CR, and nowhere else
  (`normalize_newlines`, used by `fsio.decode_text`); a writer checks text with
  `reader_lines`, so what it checked is what will be read back.
- Invisible characters: format (Cf) and control characters, spaces other than U+0020, and a
  few blank-rendering letters. A heading or metadata line that would be one but for them is
  an error (MV017); `clean_invisible` is the repair.
- Output: `printable` escapes control characters in everything the CLI prints as text;
  `dumps_json` keeps the exact text but escapes the few characters json.dumps leaves raw.

No imports from the rest of memvault: the parser, the writer and the CLI all use this.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

# Line and paragraph separators: str.splitlines, JavaScript and some editors break lines at
# them, memvault does not; a written value or text holding one would read differently there.
SEPARATORS = "\u2028\u2029"

# C0 and C1 controls and DEL; tab and LF are text. (CR never survives `normalize_newlines`.)
CONTROL_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
CONTROL_RE = re.compile(f"[{CONTROL_CLASS}]")

# Spaces that look like U+0020 but are not one to a Markdown parser.
SPACE_LIKE_CLASS = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
# Zero-width and format characters (Unicode category Cf, kept complete by a test), the
# separators, and letters and marks that render as nothing or as blank (Hangul fillers,
# the combining grapheme joiner, variation selectors, the blank Braille pattern).
FORMAT_CLASS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
BLANK_CLASS = "\u034f\u115f\u1160\u3164\uffa0\u2800\ufe00-\ufe0f"
ASTRAL_CLASS = (  # beyond U+FFFF, kept apart: a class with these ranges scans text ~4x slower
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
_BMP_CLASS = f"{CONTROL_CLASS}{SPACE_LIKE_CLASS}{FORMAT_CLASS}{BLANK_CLASS}{SEPARATORS}"
INVISIBLE_RE = re.compile(f"[{_BMP_CLASS}{ASTRAL_CLASS}]")
_CANDIDATE_RE = re.compile(f"[{_BMP_CLASS}\U00010000-\U0010ffff]")
SPACE_LIKE_RE = re.compile(f"[{SPACE_LIKE_CLASS}]")

# Bidi embeddings, overrides and isolates reorder what follows them on screen.
BIDI_CLASS = "\u202a-\u202e\u2066-\u2069"
OUTPUT_ESCAPE_RE = re.compile(f"[{CONTROL_CLASS}{BIDI_CLASS}]")
JSON_ESCAPE_RE = re.compile(f"[\x7f-\x9f{SEPARATORS}{BIDI_CLASS}]")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR as LF: the reader's only line breaks."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def reader_lines(text: str) -> list[str]:
    """`text` split into lines exactly where the reader splits a file."""
    return normalize_newlines(text).split("\n")


def describe_char(ch: str) -> str:
    """`U+200B ZERO WIDTH SPACE`: a character named so that a person can find it."""
    name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(ch, "control character")
    return f"U+{ord(ch):04X} {name}"


_CONTROL_NAMES = {"\x00": "NUL", "\x07": "BELL", "\x08": "BACKSPACE", "\x0b": "LINE TABULATION",
                  "\x0c": "FORM FEED", "\x1b": "ESCAPE", "\x7f": "DELETE", "\x85": "NEXT LINE",
                  "\x9b": "CONTROL SEQUENCE INTRODUCER"}


_REFUSED = {  # CR is in CONTROL_CLASS
    True: re.compile(f"[{CONTROL_CLASS}{SEPARATORS}]"),
    False: re.compile(f"[{CONTROL_CLASS}\n{SEPARATORS}]"),
}


def first_disallowed(text: str, *, line_breaks: bool) -> tuple[int, str] | None:
    """(offset, what) of the first character memvault refuses to write, or None.

    Refused: control characters other than tab (CR included: the reader breaks lines at
    it), LF unless `line_breaks`, and U+2028/U+2029.
    """
    m = _REFUSED[line_breaks].search(text)
    if m is None:
        return None
    ch = m.group(0)
    if ch == "\n":
        return m.start(), "a line break"
    if ch == "\r":
        return m.start(), "a carriage return (a line break to the reader)"
    if ch in SEPARATORS:
        return m.start(), f"{describe_char(ch)} (other tools show it as a line break; memvault does not)"
    return m.start(), f"the control character {describe_char(ch)}"


def has_invisible(text: str) -> bool:
    return INVISIBLE_RE.search(text) is not None


def find_invisible(text: str) -> Iterator[int]:
    """Offsets of the invisible characters in `text` (tab and LF aside): for whole files."""
    for m in _CANDIDATE_RE.finditer(text):
        ch = m.group(0)
        if ord(ch) < 0x10000 or INVISIBLE_RE.match(ch):
            yield m.start()


def clean_invisible(text: str) -> str:
    """`text` as it looks: look-alike spaces become spaces, invisible characters go (tab and
    LF stay)."""
    text = SPACE_LIKE_RE.sub(" ", text)
    return INVISIBLE_RE.sub(lambda m: m.group(0) if m.group(0) in "\t\n" else "", text)


def invisible_in(text: str) -> list[str]:
    """The distinct invisible characters in `text`, named, in order of appearance."""
    seen = dict.fromkeys(m.group(0) for m in INVISIBLE_RE.finditer(text) if m.group(0) not in "\t\n")
    return [describe_char(ch) for ch in seen]


def printable(text: str) -> str:
    """`text` safe to print: control characters (tab and LF aside) and bidi overrides as
    `\\x1b` / `\\u202e` escapes, so a note cannot drive the terminal (OSC 52, OSC 8, CSI)."""
    if OUTPUT_ESCAPE_RE.search(text) is None:
        return text
    return OUTPUT_ESCAPE_RE.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def dumps_json(data: Any, **kwargs: Any) -> str:
    """json.dumps keeping non-ASCII text, with DEL, C1 controls, separators and bidi overrides
    escaped as \\uXXXX too (json.dumps escapes only C0): the same text once decoded."""
    out = json.dumps(data, ensure_ascii=False, **kwargs)
    # These characters can only occur inside JSON strings, where \uXXXX means the same.
    return JSON_ESCAPE_RE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", out)
