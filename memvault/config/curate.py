"""`[curate]` in memvault.toml: curate's settings, their defaults and their checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memvault.config.core import Config
from memvault.errors import ConfigError

DEFAULTS: dict[str, Any] = {
    "budget_chars": 8000,
    "budget_lines": 0,
    "types": ["belief", "decision", "correction"],
    "min_confidence": 0.3,
    "min_importance": 0.7,
    "min_recalls": 3,
    "min_days": 2,
    "min_words": 3,
    "similarity": 0.6,
    # cosine at which two texts say the same by meaning, when semantic search is on (curate/meaning.py)
    "semantic_similarity": 0.9,
    "ignore_tags": ["nocurate", "scratch", "trivial"],
    "stale_days": 90,
    "archive_confidence": 0.2,
    "archive_file": "MEMORY.archive.md",
    "max_sources": 5,
    "max_chars": 280,
    "default_section": "Notes",
    "with_timeout": 120,
    "sections": {
        "#preference": "User Preferences",
        "#preferences": "User Preferences",
        "#project": "Active Projects",
        "#projects": "Active Projects",
        "#lesson": "Lessons Learned",
        "#lessons": "Lessons Learned",
        "#decision": "Decisions",
        "decision": "Decisions",
    },
}


@dataclass(frozen=True)
class Settings:
    budget_chars: int
    budget_lines: int
    types: tuple[str, ...]
    min_confidence: float
    min_importance: float
    min_recalls: int
    min_days: int
    min_words: int
    similarity: float
    semantic_similarity: float
    ignore_tags: tuple[str, ...]
    stale_days: int
    archive_confidence: float
    archive_file: str
    max_sources: int
    max_chars: int
    default_section: str
    with_timeout: float
    sections: dict[str, str]

    @classmethod
    def from_config(cls, config: Config) -> Settings:
        raw = config.section("curate", DEFAULTS)
        where = "[curate]"

        def error(key: str, message: str) -> ConfigError:
            return config.error("curate", key, message)

        def num(key: str, lo: float, hi: float, integer: bool = False) -> Any:
            value = raw[key]
            ok = isinstance(value, int) if integer else isinstance(value, int | float)
            if isinstance(value, bool) or not ok or not lo <= value <= hi:
                kind = "a whole number" if integer else "a number"
                raise error(key, f"{where} {key} must be {kind} between {lo:g} and {hi:g}, got {value!r}")
            return value

        def names(key: str) -> tuple[str, ...]:
            value = raw[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise error(key, f"{where} {key} must be a list of strings, got {value!r}")
            return tuple(v.strip().lower().lstrip("#") for v in value if v.strip())

        sections = raw["sections"]
        if not isinstance(sections, dict) or not all(isinstance(v, str) and v.strip() for v in sections.values()):
            raise error("sections", f"{where}.sections must map '#tag', '~word' or a type to a section name")
        for key in ("archive_file", "default_section"):
            if not isinstance(raw[key], str) or not raw[key].strip():
                raise error(key, f"{where} {key} must be a non-empty string")
        if "/" in raw["archive_file"] or raw["archive_file"] == "MEMORY.md":
            raise error("archive_file",
                        f"{where} archive_file must be a file name in the vault root, not {raw['archive_file']!r}")
        return cls(
            budget_chars=num("budget_chars", 0, 10**9, True), budget_lines=num("budget_lines", 0, 10**7, True),
            types=names("types"), min_confidence=float(num("min_confidence", 0, 1)),
            min_importance=float(num("min_importance", 0, 1)), min_recalls=num("min_recalls", 1, 10**9, True),
            min_days=num("min_days", 2, 10**4, True), min_words=num("min_words", 0, 1000, True),
            similarity=float(num("similarity", 0.1, 1)),
            semantic_similarity=float(num("semantic_similarity", 0.1, 1)), ignore_tags=names("ignore_tags"),
            stale_days=num("stale_days", 1, 10**5, True), archive_confidence=float(num("archive_confidence", 0, 1)),
            archive_file=raw["archive_file"].strip(), max_sources=num("max_sources", 1, 1000, True),
            max_chars=num("max_chars", 20, 10**5, True), default_section=raw["default_section"].strip(),
            with_timeout=float(num("with_timeout", 1, 86400)),
            sections={str(k).strip(): v.strip() for k, v in sections.items()},
        )
