"""`ingest --with CMD`: an external command (an LLM wrapper) extracts and scores the facts, with
the protocol's prompt and JSON contract. It runs through curate's runner (the one module besides
git's that starts a process); its answer is checked by `facts.validate_reply`.

    stdin:  {"protocol": "memvault-ingest/1", "prompt": "<the protocol's extraction prompt, filled in>",
             "system": "<its system preamble>", "importance_guideline": "<the protocol's guideline>",
             "text": "<the transcript in USER:/AGENT:/[TOOL_OUTPUT: ...] form>",
             "source_id": "chat.txt", "turns": [{"turn": 1, "speaker": "user", "text": "...",
             "source_id": "chat.txt#turn-1"}, ...], "reply": "<the reply's shape, in words>"}
    stdout: [{"content": "...", "importance_score": 0.9, "type": "EPISODIC",
              "source_id": "chat.txt#turn-1", "metadata": {"speaker": "user", "kind": "preference"}}, ...]
"""

from __future__ import annotations

from typing import Any

from memvault.curate.with_command import WithError, run_command
from memvault.ingest.facts import Fact, IngestError, validate_reply
from memvault.ingest.transcript import Turn, protocol_text

PROTOCOL = "memvault-ingest/1"
SYSTEM = (
    "You are a fact extraction model. Your task is to analyze the provided text and extract distinct, atomic facts.\n"
    "Format your output as a single JSON array of fact objects. Do not output any other text or explanation.\n"
    "Each fact object must conform to the following schema:\n"
    '- type: "EPISODIC"\n'
    "- content: A statement representing a single, self-contained fact.\n"
    "- source_id: A unique identifier for the originating data chunk (the turn's source_id).\n"
    "- importance_score: a number from 0.0 to 1.0 (see the guideline).\n"
    '- metadata: An object containing auxiliary information like speaker ("user", "agent", "system", "tool"), '
    '"kind" (instruction, preference, name, decision, id, fact, correction) and, for a correction, '
    '"corrects": the earlier value or statement it corrects.'
)
GUIDELINE = (
    "On a scale of 0.0 to 1.0, how important is it to remember the following conversation? A 1.0 indicates a "
    "core user preference, a critical fact for a future task, or an explicit instruction. A 0.0 indicates a "
    "trivial greeting or conversational filler."
)
REPLY = ("a JSON array of fact objects: content (string, required), importance_score (0..1, required), "
         "type (\"EPISODIC\"), source_id (\"<source>#turn-N\"), metadata {speaker, turn, kind, corrects}")


def payload(turns: list[Turn], source_id: str) -> dict[str, Any]:
    text = protocol_text(turns)
    prompt = (f"Extract all salient facts from the following text block. Score each fact's importance_score "
              f"with this guideline: {GUIDELINE}\n\nSource ID: {source_id}\n\nText Block:\n\n\"\"\"\n{text}\n\"\"\"")
    return {
        "protocol": PROTOCOL, "system": SYSTEM, "prompt": prompt, "importance_guideline": GUIDELINE,
        "text": text, "source_id": source_id, "reply": REPLY,
        "turns": [{"turn": t.n, "speaker": t.speaker, "text": t.text, "source_id": f"{source_id}#turn-{t.n}"}
                  for t in turns],
    }


def extract_with(command: str, turns: list[Turn], source_id: str, *, timeout: float, cwd: str) -> list[Fact]:
    """The command's facts, validated; an `IngestError` (nothing written) when it fails or answers badly."""
    try:
        reply = run_command(command, payload(turns, source_id), timeout=timeout, cwd=cwd,
                            setting="--timeout", unchanged="nothing was written")
    except WithError as exc:
        raise IngestError(str(exc)) from None
    return validate_reply(reply, len(turns))
