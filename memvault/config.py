"""memvault.toml: the vault's settings, with defaults for everything.

Core settings are typed attributes. Other modules keep their own defaults next to the code
that uses them and read their section through `Config.section(name, defaults)`, so adding a
setting never means editing this file.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import ConfigError

CONFIG_NAME = "memvault.toml"
CORE_TYPES = ("observation", "belief", "decision", "correction")


def local_zone_name() -> str:
    """The machine's IANA zone name, or "UTC" when it cannot be told."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and _valid_zone(tz):
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            name = target.split("zoneinfo/", 1)[1]
            if _valid_zone(name):
                return name
    except OSError:
        pass
    try:
        name = Path("/etc/timezone").read_text().strip()
        if _valid_zone(name):
            return name
    except OSError:
        pass
    return "UTC"


def _valid_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML, with every way it can fail a ConfigError: besides syntax, tomllib raises a bare
    ValueError for an integer of 4300+ digits and RecursionError for arrays nested too deep."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # TOMLDecodeError is one
        raise ConfigError(f"{where}: {str(exc).split('; use sys.')[0]}") from None


@dataclass
class Config:
    timezone: str = "UTC"
    extra_types: tuple[str, ...] = ()
    decay_model: str = "exponential"
    decay_rate: float = 0.95
    memory_sections: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

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
            raise ConfigError(f"{self.path or CONFIG_NAME}: [{name}] must be a table")
        merged.update(value)
        return merged

    @classmethod
    def load(cls, path: Path) -> Config:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(timezone=local_zone_name(), path=Path(path))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        return cls.from_dict(parse_toml(text, str(path)), Path(path))

    @classmethod
    def from_dict(cls, raw: dict[str, Any], path: Path | None = None) -> Config:
        where = path or CONFIG_NAME
        vault = raw.get("vault", {})
        decay = raw.get("decay", {})
        tz = vault.get("timezone") or local_zone_name()
        if not _valid_zone(tz):
            raise ConfigError(f"{where}: [vault] timezone {tz!r} is not a known IANA zone")
        extra = vault.get("extra_types", [])
        if not isinstance(extra, list) or not all(isinstance(t, str) and t.strip() for t in extra):
            raise ConfigError(f"{where}: [vault] extra_types must be a list of names")
        rate = decay.get("rate", 0.95)
        if not isinstance(rate, int | float) or not 0 < rate <= 1:
            raise ConfigError(f"{where}: [decay] rate must be a number in (0, 1], got {rate!r}")
        model = decay.get("model", "exponential")
        sections = raw.get("memory", {}).get("sections", {})
        if not isinstance(sections, dict):
            raise ConfigError(f"{where}: [memory.sections] must map section names to types")
        return cls(
            timezone=tz,
            extra_types=tuple(t.strip() for t in extra),
            decay_model=str(model),
            decay_rate=float(rate),
            memory_sections={str(k).strip().lower(): str(v).lower() for k, v in sections.items()},
            raw=raw,
            path=path,
        )
