"""Values and names that are public by their shape: the secret scan's precision on real notes.

Agents' notes are full of long random-looking strings that protect nothing: ids of posts,
messages and runs, wallet addresses, branch names, config keys and environment variable names.
Each function here answers one question about one string, with plain string tests (no regex
backtracking), and is table-tested in tests/test_secret_precision.py:
- what a value is (`chain_address`, `identifier`, `caps_name`, `number_with_unit`,
  `manager_ref`, `ref_or_url`);
- what a key names (`public_name`: an id, an address, a reference, a digest; `key_qualifier`:
  `configKey`, `cacheKey`, `publicKey` name a lookup key, not a credential);
- what a line says around them (`result_verdict`: `✓ PASS: ACL-Check: ok` is a test result;
  `redacted_key`: `sk-proj-abc…` is a key shortened to its public prefix).
None of these overrides a provider pattern (`ghp_…`, `sk_live_…` are caught by their shape first).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

PARTS_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|\d+|[A-Z]")
# Ethereum-style address (20 bytes): a private key is 32 bytes (64 hex digits), never 40.
EVM_ADDRESS_RE = re.compile(r"^0x[0-9a-fA-F]{40}$")
# bech32/bech32m segwit addresses (Bitcoin bc1…, testnet tb1…): a private key is never bech32.
BECH32_ADDRESS_RE = re.compile(r"^(?:bc|tb|ltc)1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{11,71}$", re.I)
BASE58_RE = re.compile(r"^[1-9A-HJ-NP-Za-km-z]+$")
# A name built from lower-case words and numbers: snake_case, kebab-case, dotted, colon paths.
SEGMENT_RE = re.compile(r"[a-z]+\d{0,2}|\d+|v\d+")
IDENT_SEPARATORS_RE = re.compile(r"[_.:/#-]")
CAPS_NAME_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
UNIT_RE = re.compile(
    r"(?i)^\d+(?:[.,]\d+)?(?:k|m|b|kb|mb|gb|tb|ms|s|secs?|mins?|h|hrs?|hours?|d|days?|w|wks?|weeks?|mo|"
    r"months?|y|yrs?|years?|x|%|px|pt|em|rem|chars?|tokens?|bps|req|rps|usd|eur|sol|eth)$"
)
MANAGERS = ("1password", "bitwarden", "vaultwarden", "keepass", "keepassxc", "lastpass", "dashlane", "keychain",
            "passbolt", "enpass", "nordpass", "protonpass")
# host.tld/… (no scheme) or a git ref such as feature/… : a place, not a credential
HOST_PATH_RE = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,12}/")
REF_PREFIXES = ("feature/", "feat/", "fix/", "bugfix/", "hotfix/", "release/", "chore/", "docs/", "refs/",
                "origin/", "claude/", "codex/", "copilot/", "cursor/", "dependabot/", "renovate/")

# What a key's last word says its value is. `secret_id`, `password_ref` stay suspicious:
# a credential word anywhere in the key keeps it out of this list's reach.
PUBLIC_LAST = frozenset({
    "id", "ids", "uuid", "guid", "ulid", "cid", "nanoid",
    "address", "addr", "wallet", "mint", "owner", "recipient", "sender", "deployer", "signer", "payer",
    "ca", "contract", "pubkey", "treasury", "pool", "account", "program", "market", "tx", "txid", "txn",
    "signature", "blockhash", "slot", "cursor",
    "branch", "ref", "commit", "sha", "repo", "tag", "url", "uri", "href", "link", "src", "path", "file", "image",
    "endpoint", "host",
})
# A digest, a fingerprint or a public key, wherever the word sits in the key (as before issue 12).
DIGEST_KEY_RE = re.compile(
    r"(?i)sha\d|md5|fingerprint|digest|hash|checksum|etag|integrity|pub(?:lic)?[_-]?key|^(?:cid|u?u?id|ulid)$")
# A session id or a cookie authenticates whoever holds it: never a public name.
CREDENTIAL_PARTS = ("secret", "password", "passwd", "pwd", "passphrase", "private", "token", "cred", "session",
                    "cookie", "csrf", "auth")
# Words before `key` that make it a lookup key (configKey, cacheKey, sort_key), not a credential.
KEY_QUALIFIERS = frozenset({
    "config", "cache", "sort", "primary", "foreign", "partition", "idempotency", "dedup", "dedupe", "lookup",
    "map", "object", "storage", "translation", "i18n", "locale", "hot", "shortcut", "row", "item", "entry",
    "record", "state", "query", "index", "unique", "composite", "public", "pub", "setting", "settings", "feature",
    "flag", "field", "column", "prop", "property", "attr", "attribute", "label", "order", "dict", "json", "yaml",
    "toml", "env", "metric", "cursor", "page", "queue", "topic", "shard", "table", "schema", "trace", "span",
    "request", "correlation", "thread", "conversation", "task", "job", "run", "route", "menu", "react", "list",
    "registry", "redis", "kv", "memo", "dictionary", "hash", "join", "bucket", "range",
})  # not: search (Brave Search key), stream (a stream key), message, group, channel, node, cluster, routing
# Ids of API objects that agents paste (Stripe, OpenAI, Anthropic, Vercel): `dpl_…`, `msg_01…`.
# Their secrets have other prefixes (sk_live_, whsec_, sk-…), caught by their own patterns first.
ID_PREFIXES = ("ch_", "cus_", "pi_", "pm_", "evt_", "sub_", "in_", "prod_", "price_", "acct_", "txn_", "po_",
               "msg_", "req_", "chatcmpl-", "asst_", "thread_", "run_", "file-", "file_", "batch_", "conv_",
               "resp_", "toolu_", "dpl_", "prj_", "team_")
REL_PATH_RE = re.compile(r"^[\w.@-]+(?:/[\w.@-]+)+\.[A-Za-z0-9]{1,8}$")  # uploads/2026/x.png
DATE_TIME_RE = re.compile(r"^\d{1,4}(?:[-./:]\d{1,4}){1,2}(?:[T ][\d:.]+)?$")
DATE_SPLIT_RE = re.compile(r"[-./:]")


def parts(ident: str) -> list[str]:
    """The lower-case words of an identifier: PLATFORM_LAUNCHPAD_ID, configKey, X-Request-Id."""
    return [p.lower() for p in PARTS_RE.findall(ident)]


def chain_address(value: str) -> bool:
    """A public blockchain address: 0x + 40 hex, bech32 (bc1…), or a pump.fun mint (base58 …pump).

    Plain base58 (Solana) addresses have the alphabet of random tokens: they are judged by the
    key that names them (`mint`, `wallet`, `publicKey`), never by shape alone.
    """
    if EVM_ADDRESS_RE.match(value) or BECH32_ADDRESS_RE.match(value):
        return True
    return 36 <= len(value) <= 48 and value.endswith("pump") and BASE58_RE.match(value) is not None


def identifier(value: str) -> bool:
    """A name of lower-case words and numbers (`launchpad_platform_v2`, `agent:main:dm:42`).

    Two or more segments, each a word (with at most two trailing digits, `s3`), a number or a
    version, at least one a word of three letters or more. Random tokens mix letters and digits
    inside a segment, so they fail.
    """
    if colon_path(value):
        return True
    if not value or value.lower() != value or len(value) > 256:
        return False
    segments = IDENT_SEPARATORS_RE.split(value)
    if len(segments) < 2 or not all(s and SEGMENT_RE.fullmatch(s) for s in segments):
        return False
    return any(len(s) >= 3 and s.isalpha() for s in segments)


def object_id(value: str) -> bool:
    """An API object's id: a known prefix (`dpl_`, `msg_`, `cus_`, `chatcmpl-`), then its random part."""
    return value.startswith(ID_PREFIXES) and len(value) <= 64


def colon_path(value: str) -> bool:
    """A colon-separated key of words ending in an id: `agent:main:subagent:e5e3a521`, `user:42:profile`."""
    segments = value.split(":")
    if len(segments) < 3 or not all(s.isascii() and s.isalnum() and (s.islower() or s.isdigit()) for s in segments):
        return False
    return sum(1 for s in segments if s.isalpha() and s.islower() and len(s) >= 2) >= 2


def date_or_time(value: str) -> bool:
    """2026-02-21, 21.02.2026, 14:30:00, 2026-02-21T16:00; not 4711-0815-2026 (a numeric password).

    Apart from a year (19xx, 20xx), every part has one or two digits.
    """
    if not DATE_TIME_RE.match(value):
        return False
    head = value.split("T", 1)[0].split(" ", 1)[0]
    return all(len(g) <= 2 or (len(g) == 4 and g[:2] in ("19", "20")) for g in DATE_SPLIT_RE.split(head))


def caps_name(value: str) -> bool:
    """An ALL_CAPS name such as OPENAI_API_KEY_2: a variable's name, not its value.

    At least two of its parts are words (`WINTER_2025` could be a password; `DB_PASSWORD_2` is a name).
    """
    if not CAPS_NAME_RE.match(value):
        return False
    return sum(1 for s in value.split("_") if len(s) >= 2 and s.isalpha()) >= 2


def number_with_unit(value: str) -> bool:
    """`800yr`, `128k`, `15min`, `91%`: a quantity."""
    return UNIT_RE.match(value) is not None


def manager_ref(value: str) -> bool:
    """A password manager named as the place a secret lives ("credentials: 1Password")."""
    return value.lower().replace("-", "").replace(" ", "") in MANAGERS


def ref_or_url(value: str) -> bool:
    """A host path without a scheme (`github.com/acme/atlas`), a git branch (`feature/…`) or a
    relative path to a file (`uploads/2026/02/x.png`)."""
    low = value.lower()
    return low.startswith(REF_PREFIXES) or HOST_PATH_RE.match(low) is not None or REL_PATH_RE.match(value) is not None


@lru_cache(maxsize=1024)
def public_name(key: str) -> bool:
    """A key whose value is public: an id, an address, a reference or a digest.

    `PLATFORM_LAUNCHPAD_ID`, `postId`, `X-Request-Id`, `wallet_address`, `mint`, `Branch`,
    `contentHash`, `publicKey`. Apart from digests, a key that also holds a credential word
    (`secret_id`, `private_key_id`) is left to the value's shape.
    """
    if DIGEST_KEY_RE.search(key):
        return True
    words = parts(key)
    if not words or any(c in w for w in words for c in CREDENTIAL_PARTS):
        return False
    return words[-1] in PUBLIC_LAST


def key_qualifier(word: str) -> bool:
    """The word before `key` makes it a lookup key: config, cache, sort, primary, public…"""
    return word.lower() in KEY_QUALIFIERS


def label_names_id(label: str) -> bool:
    """The words in front of a value's key say it is an id: "Nano ID for the invite:"."""
    return any(w.strip("*_`()[]") in ("ID", "Id", "id", "IDs") for w in label.split()[-5:])


# -- around the value ---------------------------------------------------------------------

VERDICT_WORD = "PASS"  # FAIL, OK, SKIP are no credential words: only PASS reaches the scan
VERDICT_LEADS = "-*+>|[](\u2022\u00b7"  # list items, quotes, table cells, checkboxes `[x]`
NAME_EXTRA = frozenset("_-./:()[]")
NAME_SEPARATORS = frozenset("_-./")


def _verdict_position(before: str) -> bool:
    """The text before a verdict: nothing, a list marker, a table cell, `[x]`, `1.`, or a
    symbol such as ✓ ✅ ❌ (several verdicts on one line each follow their own mark)."""
    lead = before.rstrip()
    if not lead:
        return True
    c = lead[-1]
    if c in VERDICT_LEADS or unicodedata.category(c).startswith("S"):
        return True
    return c in ".)" and lead[-2:-1].isdigit()  # numbered: "1. PASS: …"


def verdict_name(value: str) -> bool:
    """A test's name as a verdict line gives it: `test_login`, `ACL-Check`, `T3-lint`,
    `tests/test_x.py::test_y`, `権限チェック`: letters (any script), digits and
    `_-./:()[]`, with a letter. A password has other symbols (`Sommer2024!`)."""
    return any(c.isalpha() for c in value) and all(c.isalnum() or c in NAME_EXTRA for c in value)


def result_verdict(word: str, before: str, sep: str, value: str, after: str) -> bool:
    """`- PASS: test_login: ok`, `✓ PASS: ACL-Check: denied`: a test's verdict, not a password.

    `word` is the name the value is assigned to, `before` the line in front of it, `sep` the
    assignment sign, `after` the line after the value. A verdict is `PASS` in capitals (`pass:`
    and `Pass:` name a password), with a colon (`PASS=x` is a shell variable), where a verdict
    stands (line start, list marker, check mark), followed by a test's name that goes on (a
    colon and its result, more words) or is built like one (`T3-lint`). `PASS: hunter2` alone,
    `PASS: Sommer2024!` and `USER: ana PASS: x7` stay credentials.
    """
    if word != VERDICT_WORD or sep != ":" or not _verdict_position(before):
        return False
    name = value.removesuffix(":")
    if not verdict_name(name):
        return False
    return value.endswith(":") or bool(after.strip()) or any(c in NAME_SEPARATORS for c in name)


# A provider's public prefix (`sk-`, `sk-proj-`, `sk-ant-api03-`, `ghp_`, `xoxb-`), some visible
# characters, an ellipsis, maybe the last few characters: how dashboards and people shorten a key.
REDACTED_RE = re.compile(
    r"^(?:[a-z]{2,8}(?:[-_][a-z0-9]{2,6}){0,2}[-_])?(?P<head>[A-Za-z0-9]{0,8})(?:\u2026|\.{3})(?P<tail>[A-Za-z0-9]{0,6})$"
)
REDACTED_VISIBLE = 8  # characters of the secret part shown, at most (of 32 to 200)


def redacted_key(value: str) -> bool:
    """`sk-proj-abc…`, `sk-...Xy12`, `ghp_4fG7...`: a key shortened to its prefix and a few
    characters, which cannot be used. The ellipsis is required, and at most 8 characters
    of the secret part may show. Passwords get no such pass: a password's start is half of it.
    """
    m = REDACTED_RE.match(value)
    return m is not None and len(m["head"]) + len(m["tail"]) <= REDACTED_VISIBLE
