"""memvault.toml: the vault's settings, with defaults for everything.

Core settings are typed attributes. Other modules keep their own defaults next to the code
that uses them and read their section through `Config.section(name, defaults)`, so adding a
setting never means editing this file.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memvault.errors import ConfigError

CONFIG_NAME = "memvault.toml"
CORE_TYPES = ("observation", "belief", "decision", "correction", "procedure")

# The names memvault/entries/decay.py implements (a test keeps the two equal): config sits
# below the file format, so it names the models rather than importing them.
DECAY_MODELS = ("exponential", "ebbinghaus", "forgetting-curve")
TICK_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
TICK_RE = re.compile(r"(?<![\d.])(\d++(?:\.\d++)?)\s*+([smhdw])")  # anchored at a run of digits: linear in finditer too


def tick_seconds(value: str) -> float:
    """`[decay] tick` ("1d", "12h", "90m", "1w") in seconds; ValueError for anything else."""
    m = TICK_RE.fullmatch(value.strip().lower()) if isinstance(value, str) else None
    if not m or float(m[1]) <= 0:
        raise ValueError(f"not a duration: {value!r}")
    return float(m[1]) * TICK_UNITS[m[2]]


def _is_tick(value: Any) -> bool:
    try:
        tick_seconds(value)
    except ValueError:
        return False
    return True


def local_zone_name() -> str:
    """The machine's IANA zone name, or "UTC" when it cannot be told."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and valid_zone(tz):
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            name = target.split("zoneinfo/", 1)[1]
            if valid_zone(name):
                return name
    except OSError:
        pass
    try:
        name = Path("/etc/timezone").read_text().strip()
        if valid_zone(name):
            return name
    except OSError:
        pass
    return "UTC"


def valid_zone(name: str) -> bool:
    """Whether `name` is an IANA zone this machine knows."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


class Want:
    """What a setting must be: a test and the words that say it in an error."""

    def __init__(self, ok: Callable[[Any], bool], words: str):
        self.ok, self.words = ok, words


def number(lo: float | None = None, hi: float | None = None, *, whole: bool = False, above: bool = False) -> Want:
    """A finite number (an integer when `whole`) in [lo, hi] ((lo, hi] when `above`)."""
    def ok(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, int if whole else int | float) or not math.isfinite(v):
            return False
        return (lo is None or (v > lo if above else v >= lo)) and (hi is None or v <= hi)

    kind = "a whole number" if whole else "a number"
    if lo is not None and hi is not None:
        kind += f" in {'(' if above else '['}{lo:g}, {hi:g}]"
    elif lo is not None:
        kind += f" {'>' if above else '>='} {lo:g}"
    return Want(ok, kind)


def one_of(*choices: str) -> Want:
    return Want(lambda v: v in choices, "one of " + ", ".join(repr(c) for c in choices))


def table_of(value: Want, words: str, keys: tuple[str, ...] = ()) -> Want:
    """A table whose values are `value` (and whose keys are among `keys`, when given)."""
    def ok(v: Any) -> bool:
        return isinstance(v, dict) and all(value.ok(x) and (not keys or k in keys) for k, x in v.items())

    return Want(ok, f"a table of {words}" + (f" with keys among {', '.join(keys)}" if keys else ""))


TEXT = Want(lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string")
NAMES = Want(lambda v: isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v),
             "a list of non-empty strings")
FLAG = Want(lambda v: isinstance(v, bool), "true or false")


def _vault_glob(v: Any) -> bool:
    """A vault-relative glob: `/`-separated, no leading `/`, no `.`/`..` or empty parts, no `\\`."""
    if not isinstance(v, str) or not v.strip() or v != v.strip() or "\\" in v or v.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in v.rstrip("/").split("/"))


GLOBS = Want(lambda v: isinstance(v, list) and all(_vault_glob(x) for x in v),
             "a list of vault-relative globs such as \"memory/**/*.md\" (`/` between folders, none "
             "at the start, no `.` or `..` parts)")
RATIO = number(0, 1)
WEIGHT = number(0)
SECONDS = number(0)

# Every setting memvault reads, by table: what its value must be. The modules that use a table
# keep its defaults (tests/test_config_validation.py checks both name the same keys); this is
# only the shape, checked when the file is loaded, so a bad value is one error naming the
# file, the key and what it must be, whatever command runs, instead of a crash in the first
# code that reads it. Finer rules (curate's ranges, known check codes) stay with their module.
SCHEMA: dict[str, dict[str, Want]] = {
    "vault": {"timezone": Want(lambda v: isinstance(v, str), "an IANA zone name such as \"Europe/Berlin\""),
              "extra_types": NAMES, "include": GLOBS, "exclude": GLOBS, "workspace_files": FLAG},
    "decay": {"model": one_of(*DECAY_MODELS), "rate": number(0, 1, above=True),
              "tick": Want(_is_tick, "a duration such as \"1d\", \"12h\", \"30m\" or \"1w\" (above 0)"),
              "strength": number(0, above=True), "actr_decay": number(0, above=True),
              "retrieval_threshold": number()},
    "memory": {"sections": table_of(TEXT, "section name = entry type")},
    "index": {"backend": one_of("sqlite", "whoosh"), "lock_timeout": SECONDS},
    "search": {
        **dict.fromkeys(("relevance", "importance", "recency", "confidence", "importance_default",
                         "curated_importance", "superseded_factor", "recency_lambda", "k1"), WEIGHT),
        "b": RATIO, "candidates": number(1, whole=True), "score_limit": number(0, whole=True),
        "field_weights": table_of(WEIGHT, "numbers >= 0", ("title", "body", "tags", "extra", "context")),
        "record": FLAG, "record_top": number(0, whole=True),
        "preset": one_of("memvault", "seed-004"),  # search/weights.py PRESETS
    },
    "watch": dict.fromkeys(("debounce_ms", "max_delay_ms", "reconcile_seconds", "commit_quiet_seconds"), SECONDS),
    "history": {"pack_loose": number(0, whole=True), "snapshots": number(1, whole=True), "precompute": FLAG},
    "curate": {
        # ranges: memvault/curate_settings.py, which names them
        **dict.fromkeys(("budget_chars", "budget_lines", "min_recalls", "min_days", "min_words", "stale_days",
                         "max_sources", "max_chars"), number(whole=True)),
        **dict.fromkeys(("min_confidence", "min_importance", "similarity", "semantic_similarity",
                         "archive_confidence", "with_timeout"), number()),
        "types": NAMES, "ignore_tags": NAMES, "archive_file": TEXT, "default_section": TEXT,
        "sections": table_of(TEXT, "rule = section name"),
    },
    "hook": {"judge": one_of("all", "changed-lines")},
    # memorywire/governance.py MEMORYWIRE_DEFAULTS: which operations wait for a reviewer
    "memorywire": {"approval": Want(lambda v: v in ("none", "all") or (isinstance(v, list) and all(
                       x in ("remember", "forget", "merge", "expire") for x in v)),
                       "\"none\", \"all\" or a list of operations among \"remember\", \"forget\", \"merge\", "
                       "\"expire\""),
                   "approval_url": TEXT, "demote": number(0, 1, above=True)},
    "retention": {"forget_below": RATIO, "max_live": number(0, whole=True), "archive": FLAG,
                  "keep_importance": number(0),  # above 1: no entry is kept for its importance
                  "archive_dir": Want(lambda v: _vault_glob(v) and not any(c in v for c in "*?[")
                                      and v.split("/")[0] != ".memvault",
                                      "a vault-relative folder such as \"forgotten\" (not under .memvault)")},
    "serve": {"host": TEXT, "port": number(1, 65535, whole=True), "max_body_bytes": number(1, whole=True),
              "rate_per_minute": number(0, whole=True)},  # serve/settings.py SERVE_DEFAULTS; no token here
    # semantic/__init__.py SEMANTIC_DEFAULTS (the extra; docs/semantic.md)
    "semantic": {"model": TEXT, "mode": one_of("auto", "lexical", "semantic", "hybrid"),
                 "fusion": one_of("weighted", "rrf", "max"), "weight": RATIO, "rrf_k": number(1),
                 "candidates": number(1, whole=True), "min_similarity": number(-1, 1), "search_encode_limit": number(0, whole=True),
                 "threads": number(0, whole=True)},
    # sync/run.py: docs/sync.md
    "sync": {"remote": TEXT, "branch": TEXT, "ids": one_of("auto", "machine", "minute"), "interval_seconds": SECONDS},
    "checks": {"disable": Want(lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                               "a list of codes such as \"MV014\"")},
}


def validate(raw: dict[str, Any], where: str | os.PathLike[str], text: str | None = None) -> None:
    """Raise ConfigError for the first table, key or value of `raw` that SCHEMA does not allow
    (naming the line of `text`, memvault.toml as read, where it is)."""
    def error(table: str, key: str | None, message: str) -> ConfigError:
        return setting_error(where, table, key, message, text=text)

    for name, table in raw.items():
        keys = SCHEMA.get(name)
        if keys is None:
            raise error(name, None, f"unknown table [{name}]; known: {', '.join(f'[{t}]' for t in SCHEMA)}")
        if not isinstance(table, dict):
            raise error(name, None, f"[{name}] must be a table, got {_shown(table)}")
        for key, value in table.items():
            want = keys.get(key)
            if want is None:
                raise error(name, key, f"[{name}] has no setting {key!r}; known: {', '.join(keys)}")
            if not want.ok(value):
                raise error(name, key, f"[{name}] {key} must be {want.words}, got {_shown(value)}")


HEADER_RE = re.compile(r"^\s*\[(?!\[)\s*(?P<name>[^\[\]]+?)\s*\]\s*(?:#.*)?$")
KEY_RE = re.compile(r"^\s*(?P<key>(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


def _dotted(name: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in name.split("."))


def key_line(text: str, table: str, key: str | None = None) -> int | None:
    """The 1-based line of `[table] key` in TOML `text` (tomllib keeps no positions): the line
    that sets it (`key = ...` under `[table]`, `table.key = ...` at the top, `[table.key]`, or
    the `table = {...}` inline table holding it); else the line of `[table]`'s header; else None.
    Multi-line strings are not tracked: a line inside one that looks like `key =` could match,
    which at worst points near the right place."""
    want = (table, key) if key else (table,)
    current: tuple[str, ...] = ()
    header = None
    for number, line in enumerate(text.splitlines(), 1):
        m = HEADER_RE.match(line)
        if m:
            current = _dotted(m["name"])
            if current == want:
                return number
            if current == (table,):
                header = number
            continue
        m = KEY_RE.match(line)
        full = current + _dotted(m["key"]) if m else ()
        if full and (full[: len(want)] == want or want[: len(full)] == full):  # the key, or an inline table holding it
            return number
    return header


def setting_error(where: str | os.PathLike[str] | None, table: str, key: str | None, message: str,
                  *, text: str | None = None) -> ConfigError:
    """A ConfigError about `[table] key`, naming memvault.toml's file and the key's line
    (`file:line: message`, and in `file`/`line` for --json). `text` is the file as read; without
    it the file is read again (an error path). A key whose line cannot be found names the file
    alone (line None)."""
    path = str(where or CONFIG_NAME)
    if text is None and Path(path).is_absolute():  # never a memvault.toml relative to wherever we run
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            text = None
    line = key_line(text, table, key) if text else None
    return ConfigError(f"{path}{f':{line}' if line else ''}: {message}", file=path, line=line)


def decode_error(where: str, raw: bytes, exc: UnicodeDecodeError) -> ConfigError:
    """memvault.toml with bytes that are not UTF-8: the line they are on."""
    line = raw.count(b"\n", 0, exc.start) + 1
    return ConfigError(f"{where}:{line}: not UTF-8 (byte {raw[exc.start]:#04x} at line {line}); memvault.toml "
                       "must be UTF-8", file=where, line=line)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML, with every way it can fail a ConfigError: besides syntax, tomllib raises a bare
    ValueError for an integer of 4300+ digits and RecursionError for arrays nested too deep."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # TOMLDecodeError is one
        at = re.search(r"at line (\d+)", str(exc))
        raise ConfigError(f"{where}: {str(exc).split('; use sys.')[0]}", file=where,
                          line=int(at[1]) if at else None) from None


@dataclass
class Config:
    timezone: str = "UTC"
    extra_types: tuple[str, ...] = ()
    decay_model: str = "exponential"
    decay_rate: float = 0.95
    decay_tick: float = 86400.0  # seconds in the retention models' tick ([decay] tick)
    memory_sections: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    text: str | None = field(default=None, repr=False)  # the file as read: where a bad setting's line is

    def error(self, table: str, key: str | None, message: str) -> ConfigError:
        """A ConfigError about `[table] key` naming this file and the key's line (setting_error)."""
        return setting_error(self.path, table, key, message, text=self.text)

    @property
    def tz(self) -> tzinfo:
        return ZoneInfo(self.timezone)

    @property
    def types(self) -> tuple[str, ...]:
        return CORE_TYPES + tuple(t.lower() for t in self.extra_types)

    def section(self, name: str, defaults: dict[str, Any] | None = None) -> dict[str, Any]:
        """Settings of `[name]`, over `defaults`."""
        merged = dict(defaults or {})
        value = self.raw.get(name, {})
        if not isinstance(value, dict):
            raise self.error(name, None, f"[{name}] must be a table")
        merged.update(value)
        return merged

    @classmethod
    def load(cls, path: Path) -> Config:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            return cls(timezone=local_zone_name(), path=Path(path))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise decode_error(str(path), data, exc) from None
        return cls.from_dict(parse_toml(text, str(path)), Path(path), text=text)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], path: Path | None = None, *, text: str | None = None) -> Config:
        where = path or CONFIG_NAME
        validate(raw, where, text)
        vault = raw.get("vault", {})
        decay = raw.get("decay", {})
        tz = vault.get("timezone") or local_zone_name()
        if not valid_zone(tz):
            raise setting_error(where, "vault", "timezone", f"[vault] timezone {tz!r} is not a known IANA zone",
                                text=text)
        sections = raw.get("memory", {}).get("sections", {})
        if "note" in (t.strip().lower() for t in vault.get("extra_types", [])):
            raise setting_error(where, "vault", "extra_types", "[vault] extra_types cannot hold \"note\": it is the "
                                "type of freeform sections (docs/format.md, \"Notes\"); a typed entry needs another "
                                "name", text=text)
        return cls(
            timezone=tz,
            extra_types=tuple(t.strip() for t in vault.get("extra_types", [])),
            decay_model=decay.get("model", "exponential"),
            decay_rate=float(decay.get("rate", 0.95)),
            decay_tick=tick_seconds(decay.get("tick", "1d")),
            memory_sections={str(k).strip().lower(): str(v).lower() for k, v in sections.items()},
            raw=raw,
            path=path,
            text=text,
        )
