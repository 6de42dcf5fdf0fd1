"""Which mode a search runs in: light enough for every search to ask (no model, no numpy, no
vector store imported; a lexical search goes no further than this module)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.config.core import Config
from memvault.errors import InputError, SemanticUnavailable
from memvault.semantic import EXTRA_HINT, MODES, runtime_missing, settings

if TYPE_CHECKING:
    from memvault.semantic.models import ModelSpec

log = logging.getLogger("memvault")

_warned: set[str] = set()



def surely_lexical(config: Config) -> bool:
    """True when no search of this vault can be semantic and nothing needs saying: `mode =
    "lexical"`, or the default model without the extra (the cheap test an index update makes)."""
    opts = settings(config)
    return opts.get("mode", "auto") == "lexical" or (
        str(opts.get("model", "auto")).strip() == "auto" and bool(runtime_missing()))


def model_spec(config: Config, root: Any) -> ModelSpec:
    from memvault.semantic.models import resolve

    return resolve(str(settings(config).get("model", "auto")), Path(root) if root else Path.cwd())


def choose_mode(config: Config, asked: str | None, root: Any = None) -> str:
    """The search mode: the one asked for, else `[semantic] mode` (auto: hybrid when the extra
    and a model are installed, else lexical). Raises SemanticUnavailable when semantic or
    hybrid is asked for and cannot be had; a mode set in memvault.toml that cannot be had
    falls back to lexical with a warning (a vault shared with a machine without the extra)."""
    mode = asked or str(settings(config).get("mode", "auto"))
    if mode not in (*MODES, "auto"):
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "lexical":
        return mode
    try:
        missing = runtime_missing()
        if missing:
            raise SemanticUnavailable(f"{'--mode ' + mode if asked else 'semantic search'} needs the semantic "
                                      f"extra ({', '.join(missing)} not installed): {EXTRA_HINT}; "
                                      "--mode lexical searches without it")
        model_spec(config, root)
    except SemanticUnavailable as exc:
        if asked:
            raise
        if mode != "auto":
            warn(f"[semantic] mode = {mode!r}: {exc}")
        elif str(settings(config).get("model", "auto")).strip() != "auto":
            warn(str(exc))  # a model named in memvault.toml that cannot be had is said, not ignored
        return "lexical"
    return "hybrid" if mode == "auto" else mode


def warn(message: str) -> None:
    """Say once per process that a search falls back to words."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s; searching words only", message)


def query_text(text: str) -> str:
    """The words a query embeds: its text without `type:`/`tag:` filters."""
    return " ".join(w for w in text.split() if not w.lower().startswith(("type:", "tag:"))).strip()
