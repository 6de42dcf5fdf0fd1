"""A fact extracted from a transcript, and the check of the fact objects a `--with` command
returns (the protocol's fact object, written out by hand: validation works in the core install).

A reply is a JSON array of objects:

    {"content": str,                      required: one self-contained statement, one line
     "importance_score": number 0..1,     required (the protocol's importance)
     "type": "EPISODIC",                  optional; any other value is refused
     "source_id": str,                    optional; "...#turn-N" or "turn-N" names the turn
     "metadata": {"speaker": "user"|"agent"|"system"|"tool",   optional
                  "turn": int >= 1,        optional, the turn the fact comes from
                  "kind": str,             optional: instruction, preference, name, decision, id, fact ...
                  "corrects": str}}        optional: the earlier statement or value it corrects
    (more keys, such as id, timestamp or embedding_vector, are allowed and ignored)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from memvault.errors import MemvaultError
from memvault.ingest.transcript import SPEAKERS
from memvault.textsafety import first_disallowed

KIND_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
TURN_RE = re.compile(r"(?:^|#)turn-(\d+)$")
MAX_CONTENT = 2000


class IngestError(MemvaultError):
    """A `--with` command failed or answered something ingest cannot use; nothing was written."""


@dataclass(frozen=True)
class Fact:
    content: str
    kind: str  # instruction, preference, name, decision, id, correction, fact
    importance: float  # 0..1, the protocol's importance_score
    speaker: str  # user, agent, system, tool
    turn: int | None  # 1-based; None: the transcript as a whole
    corrects: str | None = None  # what it corrects: an earlier value or statement
    ids: tuple[str, ...] = ()  # order numbers, tracking numbers ... it names
    turns: tuple[int, ...] = ()  # every turn that said it (the first is `turn`)
    value: str | None = None  # a correction's new value ("March 14")
    about: str | None = None  # a correction without an old value: how the statement it corrects begins


def _bad(n: int, message: str) -> IngestError:
    return IngestError(f"--with: reply fact {n}: {message}; nothing was written")


def validate_reply(reply: Any, turns: int) -> list[Fact]:
    """The command's reply as facts, or an `IngestError` naming the first thing wrong with it."""
    if not isinstance(reply, list):
        raise IngestError("--with: the reply must be a JSON array of fact objects; nothing was written")
    return [_fact(n, item, turns) for n, item in enumerate(reply, 1)]


def _fact(n: int, item: Any, turns: int) -> Fact:
    if not isinstance(item, dict):
        raise _bad(n, "must be an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise _bad(n, "'content' must be a non-empty string")
    content = " ".join(content.split())
    found = first_disallowed(content, line_breaks=False)
    if found is not None:
        raise _bad(n, f"'content' holds {found[1]}")
    if len(content) > MAX_CONTENT:
        raise _bad(n, f"'content' is {len(content)} characters, more than {MAX_CONTENT}")
    score = item.get("importance_score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score) or not 0 <= score <= 1:
        raise _bad(n, "'importance_score' must be a number from 0.0 to 1.0")
    if item.get("type", "EPISODIC") != "EPISODIC":
        raise _bad(n, "'type' must be \"EPISODIC\" (a fact from a transcript is episodic)")
    meta = item.get("metadata", {})
    if not isinstance(meta, dict):
        raise _bad(n, "'metadata' must be an object")
    speaker = meta.get("speaker", "user")
    if speaker not in SPEAKERS:
        raise _bad(n, f"metadata.speaker must be one of {', '.join(SPEAKERS)}")
    kind = meta.get("kind", "fact")
    if not isinstance(kind, str) or not KIND_RE.match(kind):
        raise _bad(n, "metadata.kind must be a short lower-case word (instruction, preference, fact ...)")
    corrects = meta.get("corrects")
    if corrects is not None and (not isinstance(corrects, str) or not corrects.strip() or "\n" in corrects):
        raise _bad(n, "metadata.corrects must be a one-line string")
    return Fact(content, kind, float(score), speaker, _turn(n, item, meta, turns),
                corrects=corrects.strip() if corrects else None)


def _turn(n: int, item: dict[str, Any], meta: dict[str, Any], turns: int) -> int | None:
    turn = meta.get("turn")
    source = item.get("source_id")
    if turn is None and isinstance(source, str) and (m := TURN_RE.search(source)):
        turn = int(m[1])
    if turn is None:
        return None
    if isinstance(turn, bool) or not isinstance(turn, int) or not 1 <= turn <= turns:
        raise _bad(n, f"the turn must be a whole number from 1 to {turns} (the transcript's turns)")
    return turn
