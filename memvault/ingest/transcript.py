"""A conversation or tool log as numbered turns: plain text, the protocol's `USER:`/`AGENT:`/
`[TOOL_CALL: ...]`/`[TOOL_OUTPUT: ...]` form, or JSON messages (a list, `{"messages": [...]}`, or
JSON Lines of `{role, content}`). Pure: text in, turns out.

Every shape ends as the same `Turn`s, numbered from 1 in reading order, so `file#turn-3` means
the same turn whichever tool wrote the file. Secrets are withheld here, line by line, before any
extractor (memvault's own or a `--with` command) sees the text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memvault.check.secrets.scan import find_secrets
from memvault.errors import InputError

SPEAKERS = ("user", "agent", "system", "tool")  # the protocol's metadata.speaker enum
ROLE_WORDS = {
    "user": "user", "human": "user", "me": "user", "ich": "user", "customer": "user", "kunde": "user",
    "agent": "agent", "assistant": "agent", "ai": "agent", "bot": "agent", "model": "agent", "gpt": "agent",
    "claude": "agent", "assistent": "agent",
    "system": "system", "developer": "system",
    "tool": "tool", "function": "tool", "tool_output": "tool", "tool_result": "tool", "ipython": "tool",
}
LABEL_RE = re.compile(r"^\s*(?P<who>[A-Za-z_]{2,20})\s*:\s?(?P<text>.*)$")
TOOL_RE = re.compile(r"^\s*\[(?P<kind>TOOL_CALL|TOOL_OUTPUT|TOOL_RESULT)\s*:\s*(?P<text>.*?)\]?\s*$", re.IGNORECASE)
WITHHELD = "[line withheld: it looks like {kind}]"
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # colours and cursor moves of a terminal log
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # what memvault never writes (but tab, LF)


@dataclass(frozen=True)
class Turn:
    n: int  # 1-based, in reading order
    speaker: str  # one of SPEAKERS
    text: str
    call: bool = False  # a tool call (the agent asking a tool), not its output
    withheld: int = 0  # lines dropped because they look like secrets


def read_transcript(text: str, name: str) -> list[Turn]:
    """The turns of `text` (the file `name`, for messages), whatever its shape; secrets withheld."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    stripped = CONTROL_RE.sub(" ", ANSI_RE.sub("", text)).lstrip("\ufeff").strip()
    if not stripped:
        return []
    if stripped[0] in "[{" and not TOOL_RE.match(stripped.split("\n", 1)[0]):
        turns = _json_turns(stripped, name)
    elif _labelled(stripped):
        turns = _labelled_turns(stripped)
    else:
        turns = [("user", p.strip(), False) for p in re.split(r"\n\s*\n", stripped) if p.strip()]
    return [_withhold(n, who, body, call) for n, (who, body, call) in enumerate(turns, 1)]


def _withhold(n: int, speaker: str, text: str, call: bool) -> Turn:
    text = CONTROL_RE.sub(" ", ANSI_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))  # JSON's too
    found = {f.line: f.kind for f in find_secrets(text, honour_allow=False)}
    if not found:
        return Turn(n, speaker, text, call)
    lines = [WITHHELD.format(kind=_a(found[i])) if i in found else line for i, line in enumerate(text.split("\n"), 1)]
    return Turn(n, speaker, "\n".join(lines), call, withheld=len(found))


def _a(kind: str) -> str:
    """ "an AWS access key id", "a GitHub token"."""
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _speaker(word: str) -> str | None:
    return ROLE_WORDS.get(word.strip().lower())


def _labelled(text: str) -> bool:
    """Whether most non-blank lines that start a paragraph carry a speaker label or a tool marker."""
    firsts = [p.split("\n", 1)[0] for p in re.split(r"\n\s*\n", text)]
    starts = [ln for ln in text.split("\n") if LABEL_RE.match(ln) and _speaker(LABEL_RE.match(ln)["who"])]  # type: ignore[index]
    tools = [ln for ln in text.split("\n") if TOOL_RE.match(ln)]
    return bool(starts or tools) and len(starts) + len(tools) >= max(1, len(firsts) // 2)


def _labelled_turns(text: str) -> list[tuple[str, str, bool]]:
    """`USER: ...` starts a turn that runs to the next label; a tool marker is a turn of its own."""
    out: list[list[Any]] = []
    for line in text.split("\n"):
        tool = TOOL_RE.match(line)
        label = LABEL_RE.match(line)
        who = _speaker(label["who"]) if label else None
        if tool:
            call = tool["kind"].upper() == "TOOL_CALL"
            out.append(["agent" if call else "tool", tool["text"].strip(), call])
        elif who:
            out.append([who, label["text"].strip(), False])  # type: ignore[index]
        elif out and not out[-1][2]:
            out[-1][1] += "\n" + line
        elif line.strip():
            out.append(["user", line.strip(), False])
    return [(w, t.strip(), c) for w, t, c in out if t.strip()]


def _json_turns(text: str, name: str) -> list[tuple[str, str, bool]]:
    lines: list[int] | None = None
    try:
        messages = _messages(json.loads(text))
    except json.JSONDecodeError as exc:
        if text[0] != "{":
            raise InputError(f"{name}:{exc.lineno}: not JSON ({exc.msg}); a transcript is text, "
                             "USER:/AGENT: lines or JSON messages", file=name, line=exc.lineno) from None
        messages, lines = _json_lines(text, name)
    if not isinstance(messages, list):
        raise InputError(f"{name}: JSON transcript: expected a list of messages or {{\"messages\": [...]}}", file=name)
    out = []
    for i, msg in enumerate(messages, 1):
        try:
            turn = _message(msg, f"message {i}")
        except InputError as exc:
            line = lines[i - 1] if lines is not None else _message_line(text, i, len(messages))
            raise InputError(f"{name}:{line}: {exc}" if line else f"{name}: {exc}", file=name, line=line) from None
        if turn is not None:
            out.append(turn)
    return out


def _message_line(text: str, i: int, count: int) -> int | None:
    """The line where message `i` starts, in a JSON list of messages or `{"messages": [...]}`
    (file order); None for shapes read in another order (a ChatGPT export's time order)."""
    try:
        starts = _message_starts(text)
    except (ValueError, IndexError):
        return None
    if starts is None or len(starts) != count:
        return None
    return text.count("\n", 0, starts[i - 1]) + 1


def _message_starts(text: str) -> list[int] | None:
    """Where each message begins: the list is walked with `raw_decode`, one value at a time."""
    dec = json.JSONDecoder()

    def ws(i: int) -> int:
        while text[i] in " \t\r\n":
            i += 1
        return i

    def items(i: int) -> list[int]:
        out, i = [], ws(i + 1)
        while text[i] != "]":
            out.append(i)
            i = ws(dec.raw_decode(text, i)[1])
            i = ws(i + 1) if text[i] == "," else i
        return out

    i = ws(0)
    if text[i] == "[":
        return items(i)
    if text[i] != "{":
        return None
    i = ws(i + 1)
    while text[i] != "}":
        key, i = dec.raw_decode(text, i)
        i = ws(ws(i) + 1)  # past the colon
        if key in ("messages", "chat_messages", "conversation") and text[i] == "[":
            return items(i)
        i = ws(dec.raw_decode(text, i)[1])
        i = ws(i + 1) if text[i] == "," else i
    return None


def _messages(data: Any) -> Any:
    """The messages of the common export shapes: a list; `{"messages": [...]}`; a ChatGPT export
    (`mapping` of nodes, in time order); a Claude export (`chat_messages`); a list of such
    conversations, one after the other."""
    if isinstance(data, list) and data and all(isinstance(c, dict) and ("mapping" in c or "chat_messages" in c)
                                               for c in data):
        return [m for conv in data for m in _messages(conv)]
    if not isinstance(data, dict):
        return data
    if isinstance(data.get("mapping"), dict):
        nodes = [n["message"] for n in data["mapping"].values() if isinstance(n, dict) and isinstance(n.get("message"), dict)]
        return sorted(nodes, key=lambda m: m.get("create_time") or 0)  # a stable sort: file order for equal times
    return data.get("messages", data.get("chat_messages", data.get("conversation")))


def _json_lines(text: str, name: str) -> tuple[list[Any], list[int]]:
    """The messages of JSON Lines, and the line of each."""
    out, lines = [], []
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"{name}:{n}: not a JSON line ({exc.msg})", file=name, line=n) from None
            lines.append(n)
    return out, lines


def _message(msg: Any, where: str) -> tuple[str, str, bool] | None:
    """One chat message: OpenAI/Anthropic/plain `{role, content}`; content a string or parts."""
    if not isinstance(msg, dict):
        raise InputError(f"{where}: expected an object with role and content")
    role = msg.get("role", msg.get("speaker", msg.get("author", msg.get("sender", msg.get("from")))))
    if isinstance(role, dict):  # ChatGPT export: author: {role: ...}
        role = role.get("role")
    who = _speaker(role) if isinstance(role, str) else None
    if who is None:
        raise InputError(f"{where}: unknown role {role!r}; known: {', '.join(sorted(ROLE_WORDS))}")
    content = msg.get("content", msg.get("text"))
    calls = msg.get("tool_calls") or []
    text = _content(content)
    if not text and calls:
        return "agent", "; ".join(_call_text(c) for c in calls if isinstance(c, dict)), True
    if not text:
        return None
    if any(isinstance(p, dict) and p.get("type") == "tool_result" for p in _parts(content)):
        who = "tool"
    return who, text, False


def _parts(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _content(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):
        parts = content.get("parts")  # ChatGPT: {"content_type": "text", "parts": [...]}
        content = parts if isinstance(parts, list) else [content]
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                inner = part.get("text", part.get("content"))
                texts.append(inner if isinstance(inner, str) else _content(inner) if inner is not None else "")
        return "\n".join(t.strip() for t in texts if t and t.strip())
    return json.dumps(content, ensure_ascii=False)


def _call_text(call: dict[str, Any]) -> str:
    fn = call.get("function", call)
    args = fn.get("arguments", fn.get("input", ""))
    return f"{fn.get('name', 'tool')}({args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)})"


def protocol_text(turns: list[Turn]) -> str:
    """The turns in the protocol's form (what a `--with` command gets as the text block)."""
    out = []
    for t in turns:
        if t.speaker == "tool":
            out.append(f"[TOOL_OUTPUT: {t.text}]")
        elif t.call:
            out.append(f"[TOOL_CALL: {t.text}]")
        else:
            out.append(f"{t.speaker.upper()}: {t.text}")
    return "\n\n".join(out)
