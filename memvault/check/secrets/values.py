"""Is this value a secret? The judgements shared by the secret scan's rules.

A rule finds where a value sits (after `password=`, after "the token is", after `-p`); these
functions decide whether what sits there is a credential or a placeholder, a word, a path,
a piece of code, a hash or a date. All are plain string tests (no regex backtracking).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

from memvault.check.secrets.shapes import (
    caps_name,
    chain_address,
    date_or_time,
    identifier,
    manager_ref,
    number_with_unit,
    redacted_key,
    ref_or_url,
)

PLACEHOLDER_RE = re.compile(
    r"(?i)^(?:x{3,}|\*{3,}|\.{3,}|\u2026|<[^>]*>?|\{\{?[^}]*\}?\}?|\$\{?\w+\}?|%\(?\w+\)?s?%?|changeme|changeit|redacted|"
    r"example\w*|dummy\w*|sample\w*|fake\w*|test(?:ing)?|secret|password|passw[o0]rd|pass|token|"
    r"your[\w-]*|my[_-]?\w*|placeholder|none|null|nil|true|false|undefined|"
    r"[\w-]*_here|env\[.*|os\.environ.*|process\.env.*|getenv.*|secrets?\.\w+.*|vault:.*|op://.*|![\w!]*)$"
)
# A template or variable, wherever it sits: such values are filled in elsewhere.
TEMPLATE_RE = re.compile(r"^[\"'`]?(?:\$[{(\w]|<[\w -]*>?$|\{\{|%\(|\{\w*\}$|\*{3}|x{4}|\.{3}|\u2026)", re.I)
PATH_RE = re.compile(r"^(?:~|\.{1,2})?/[\w./-]*$")
TAG_RE = re.compile(r"^[#@][^\W\d][\w/-]*$")  # #finance, @ana: a tag or a mention
CALL_RE = re.compile(r"^[A-Za-z_][\w.]*(?:\(|\[|<)")  # bcrypt.hashpw(...), settings["x"], findViewById<T>
IDENT_ONLY_RE = re.compile(r"^[A-Za-z_]+(?:[.:][A-Za-z_]+)*$")  # settings.DB_PASSWORD, os.environ, camelCase
DATE_TIME_RE = re.compile(r"^\d{1,4}(?:[-./:]\d{1,4}){1,2}(?:[T ][\d:.]+)?$")
HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
DIGIT_RE = re.compile(r"\d")
SYMBOL_RE = re.compile(r"[^\w]|_")
FLIP_RE = re.compile(r"(?<=[a-z])[A-Z]|(?<=[A-Z])[a-z]")  # a change of case between two letters
NON_LETTER_RE = re.compile(r"[^A-Za-z]+")
MAX_VALUE = 4096  # longer values are judged by their first 4 kB
FILE_RE = re.compile(r"\.(?:md|txt|json|ya?ml|toml|ini|cfg|conf|env|pem|key|crt|py|sh|js|ts|gpg|age|kdbx)$", re.I)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def classes(value: str) -> tuple[bool, bool, bool]:
    """(has an upper-case letter, has a lower-case letter, has a digit), each in one C-level pass."""
    return value.lower() != value, value.upper() != value, DIGIT_RE.search(value) is not None


def has_digit_or_symbol(value: str) -> bool:
    return DIGIT_RE.search(value) is not None or SYMBOL_RE.search(value) is not None


@lru_cache(maxsize=2048)  # repeated values (a pasted table, a pathological line) are judged once
def looks_random(value: str) -> bool:
    """A machine-made token rather than a word, identifier, path, hash or UUID.

    Random base64/base62 mixes cases and digits everywhere; CamelCase identifiers change
    case only at word starts, and hex digests (git commits) have one case: both are common
    in notes and are not flagged without a credential word.
    """
    core = value[:MAX_VALUE].strip("=")
    if len(core) < 20 or core.startswith(("http", "www.")) or "//" in core or core.count("/") > 2:
        return False
    upper, lower, digit = classes(core)
    if not (upper and lower and digit):
        return False
    letters = NON_LETTER_RE.sub("", core)
    flips = len(FLIP_RE.findall(letters))
    if flips < 0.25 * max(len(letters) - 1, 1):
        return False
    digits = len(DIGIT_RE.findall(core))
    return digits >= 2 and entropy(core) >= 3.7


def demo(value: str) -> bool:
    """Documentation's own sample keys (AWS's `...EXAMPLE`, `xxxx` fillers) are not secrets."""
    low = value.lower()
    return "example" in low or "xxxxx" in low or "00000000" in low


def placeholder(value: str) -> bool:
    """`<your token>`, `${DB_PASS}`, `$PASS`, `{{ x }}`, `%(x)s`, `***`, `changeme`, `!vault`..."""
    return bool(PLACEHOLDER_RE.match(value) or TEMPLATE_RE.match(value) or demo(value)) or set(value) <= set("*x.-_#")


def not_a_literal(value: str) -> bool:
    """A path, URL, call, variable or identifier: code or a reference, not a credential's text.

    Also what is public by its shape (shapes.py): a wallet address, an ALL_CAPS variable name,
    a quantity (`800yr`), a password manager named as the place ("1Password"), a host path or
    a git branch.
    """
    return bool(
        placeholder(value) or PATH_RE.match(value) or CALL_RE.match(value) or IDENT_ONLY_RE.match(value)
        or TAG_RE.match(value)
        or "://" in value or value.startswith("www.")
        or chain_address(value) or caps_name(value) or number_with_unit(value) or manager_ref(value)
        or ref_or_url(value)
    )


@lru_cache(maxsize=2048)
def password_like(value: str) -> bool:
    """What a stated password looks like: not a plain word, has a digit or a symbol, 4+ characters.

    A password is rarely one plain word; prose such as "password: changed on Monday" is.
    Dates and times ("password changed 2026-02-20") and file names are not passwords.
    """
    value = value[:MAX_VALUE]
    if len(value) < 4 or not_a_literal(value) or date_or_time(value) or FILE_RE.search(value):
        return False
    return has_digit_or_symbol(value)  # a numeric password or passcode included


@lru_cache(maxsize=2048)
def token_like(value: str, *, hex_ok: bool) -> bool:
    """A token, key or secret: random-looking, or (where `hex_ok`) 32+ hex digits."""
    value = value[:MAX_VALUE]
    if len(value) < 12 or not_a_literal(value) or identifier(value) or redacted_key(value):
        return False
    if looks_random(value):
        return True
    if HEX_RE.match(value):
        return hex_ok and len(value) >= 32 and entropy(value) >= 3.0
    upper, lower, digit = classes(value)
    return len(value) >= 16 and digit and (upper or lower) and entropy(value) >= 3.5 and not DATE_TIME_RE.match(value)


@lru_cache(maxsize=2048)
def assigned_is_secret(password_key: bool, value: str) -> bool:
    """The value of `password = ...` (password_key) or `api_token: ...` (otherwise)."""
    if password_key:
        value = value[:MAX_VALUE].rstrip(".)]}")
        return password_like(value) and not value.isdigit() or (value.isdigit() and len(value) >= 6)
    if redacted_key(value.rstrip(")]}")):  # `sk-proj-abc…`: checked before a sentence's full stop goes
        return False
    value = value[:MAX_VALUE].rstrip(".)]}")
    return len(value) >= 12 and not not_a_literal(value) and not identifier(value) and _tokenish(value)


def _tokenish(value: str) -> bool:
    upper, lower, digit = classes(value)
    return digit and (upper or lower) and entropy(value) >= 3.0 and not DATE_TIME_RE.match(value)
