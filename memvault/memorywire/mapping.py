"""memorywire's shapes ↔ memvault's entries (pure): types, times, metadata, filters, fusion.

docs/memorywire.md is the table this module implements: semantic → Belief, episodic →
Observation, procedural → Procedure (the FSM JSON in a fenced block), emotional → Observation
tagged `emotional`; `agent_id`/`user_id`/`metadata` as `Agent-Id:`/`User-Id:`/`Metadata:` lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memvault.entries.meta import read_metadata
from memvault.entries.model import Event
from memvault.errors import InputError

TYPES = ("semantic", "episodic", "procedural", "emotional")
ENTRY_TYPE = {"semantic": "belief", "episodic": "observation", "procedural": "procedure", "emotional": "observation"}
EMOTIONAL_TAG = "emotional"
FENCE = "```json"
# Keys of a request's `metadata` that memvault writes as its own metadata lines (so `recall` and
# `forget` can filter on them and search reads them), not inside the `Metadata:` JSON.
OWN_KEYS = ("tags", "scope", "importance")
FILTER_KEYS = ("tags", "source", "scope", "agent_id", "user_id", "type", "types")
STORE = "memvault"
RETRIEVERS = ("fts",)  # full-text; with semantic search on, "vector" joins (`stores_for`)
RRF_K = 60


def memory_type(event: Event) -> str:
    """The memorywire type of an entry, note or bullet: the inverse of `ENTRY_TYPE`."""
    if event.type == "procedure":
        return "procedural"
    if event.type in ("observation", "note"):
        return "emotional" if EMOTIONAL_TAG in event.tags else "episodic"
    return "semantic"  # beliefs, decisions, corrections, curated bullets, a vault's own types


def epoch_ms(when: datetime | None) -> int | None:
    return None if when is None else int(round(when.timestamp() * 1000))


def from_epoch_ms(ms: int, tz: Any) -> datetime:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).astimezone(tz)
    except (OverflowError, OSError, ValueError) as exc:
        raise InputError(f"expires_at {ms} is not a time memvault can write (Unix epoch milliseconds)") from exc


def procedure_body(content: str) -> str:
    """The entry text of a procedural memory: its FSM, pretty-printed in a fenced JSON block
    (every inner line indented, so no line of it can read as a heading or a metadata line)."""
    return f"{FENCE}\n{json.dumps(json.loads(content), indent=2, ensure_ascii=False)}\n```"


def content_of(event: Event) -> str:
    """What `recall` returns as `content`: a procedure's FSM JSON without its fence."""
    text = event.content
    if event.type == "procedure" and text.startswith(FENCE) and text.rstrip().endswith("```"):
        return text[len(FENCE):].rstrip()[:-3].strip()
    return text


def user_metadata(event: Event) -> dict[str, Any]:
    """The request's `metadata` as written in the entry's `Metadata:` line (else empty)."""
    raw = event.meta.get("metadata")
    value = read_metadata(raw) if raw else None
    return value if isinstance(value, dict) else {}


def metadata_of(event: Event, status: str, confidence: float, *, matched: bool = True) -> dict[str, Any]:
    """A recall result's `metadata`: the request's own, then memvault's facts about the entry;
    `found_through_nearby: true` when the entry holds none of the query's words and came only
    through an entry near it (as search's results say it), e.g. because the entry that matched
    is expired or dated ahead and so left out."""
    nearby = {} if matched else {"found_through_nearby": True}
    return user_metadata(event) | {
        "memvault": {
            "entry_type": event.type, "kind": event.kind, "status": status, "location": event.location,
            "file": event.file, "line": event.line, "tags": list(event.tags), "source": event.source,
            "scope": event.scope, "confidence": round(confidence, 6), "agent_id": event.meta.get("agent-id"),
            "user_id": event.meta.get("user-id"), **nearby,
        }
    }


def check_filter(flt: Mapping[str, Any], what: str) -> dict[str, Any]:
    """A filter's keys, checked: an unknown key would silently filter nothing (a typo forgetting
    everything), so it is a usage error naming its path. The filter returned holds only keys that
    narrow: an empty `tags`/`types` list (all of none) is dropped, so `{"tags": []}` is no filter
    and `forget` refuses it as it refuses `{}` (mass-delete protection)."""
    for key, value in flt.items():
        if key not in FILTER_KEYS:
            raise InputError(f"{what} $.filter.{key}: unknown filter key; known: {', '.join(FILTER_KEYS)}")
        if key in ("tags", "types"):
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
                raise InputError(f"{what} $.filter.{key}: a string or a list of strings")
        elif not isinstance(value, str) or not value.strip():
            raise InputError(f"{what} $.filter.{key}: a non-empty string")
    types = _as_list(flt.get("types")) + _as_list(flt.get("type"))
    bad = [t for t in types if t not in TYPES]
    if bad:
        raise InputError(f"{what} $.filter.type: {bad[0]!r} is not one of {', '.join(TYPES)}")
    return {k: v for k, v in flt.items() if _as_list(v) or not isinstance(v, list)}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def matches(event: Event, flt: Mapping[str, Any]) -> bool:
    """Whether the entry passes every key of a checked filter (ANDed; tags: all of them)."""
    tags = {t.lower().lstrip("#") for t in _as_list(flt.get("tags"))}
    if not tags <= set(event.tags):
        return False
    kind = memory_type(event)
    for key in ("types", "type"):  # ANDed like every other key: `types` one of, `type` exactly
        if key in flt and kind not in _as_list(flt[key]):
            return False
    pairs = (("source", event.source), ("scope", event.scope), ("agent_id", event.meta.get("agent-id")),
             ("user_id", event.meta.get("user-id")))
    return all(flt[key] == value for key, value in pairs if key in flt)


def stores_for(mode: str) -> list[str]:
    """The retrievers a recall under search `mode` asks: full-text, the vectors, or both. With
    both, the request's `fusion` is how search fuses their rankings (search/fusion.py)."""
    return {"lexical": ["fts"], "semantic": ["vector"]}.get(mode, ["fts", "vector"])


def fused(scores: list[float], fusion: str, weights: Mapping[str, float] | None = None) -> list[float]:
    """Each result's score under `fusion` (spec §5), from one retriever's scores in rank order.

    With one ranking (full text, or search's own fusion of full text and vectors), rrf is
    1/(60 + rank), max its own score, weighted its score times the retriever's weight (1 by default; magnitudes not normalised, as the spec says)."""
    if fusion == "rrf":
        return [1 / (RRF_K + rank) for rank in range(1, len(scores) + 1)]
    if fusion == "max":
        return list(scores)
    weight = (weights or {}).get(RETRIEVERS[0], 1.0)
    return [weight * s for s in scores]


# What the write path's errors call a value (the CLI's flags, as `memvault log` takes it), in the
# words of each API: a client sending JSON has no `--tags` to fix.
REMEMBER_WORDS = {"use --supersedes": "send no Supersedes: line in content (/v0 writes none; forget or merge the "
                                      "old entry instead)",
                  "use --reconfirms": "send no Reconfirms: line in content", "use --source": "use $.source",
                  "use --tags": "use $.metadata.tags", "use --scope": "use $.metadata.scope",
                  "use --importance": "use $.metadata.importance", "use --confidence": "use $.confidence",
                  "use --expires": "use $.expires_at",
                  "--tags": "$.metadata.tags", "--source": "$.source", "--scope": "$.metadata.scope",
                  "--importance": "$.metadata.importance", "--expires": "$.expires_at", "--type ": "$.type "}


def tool_words(names: tuple[str, ...]) -> dict[str, str]:
    """The same for an MCP tool whose arguments are `names`: `--tags` -> `argument 'tags'`
    (`--type` -> `types` for a tool that takes a list of them)."""
    words = {}
    for flag in ("tags", "source", "scope", "importance", "supersedes", "confidence", "type", "reconfirms"):
        arg = flag if flag in names else "types" if flag == "type" and "types" in names else None
        if arg is not None:
            words[f"use --{flag}"] = f"use the argument '{arg}'"
            words[f"--{flag} "] = f"argument '{arg}' "
    return words


def api_words(message: str, words: Mapping[str, str]) -> str:
    """`message` with each CLI flag said as the API names that value (pure)."""
    for flag, said in words.items():
        message = message.replace(flag, said)
    return message
