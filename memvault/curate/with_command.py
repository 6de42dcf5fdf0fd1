"""`curate --with CMD`: let an external command (an LLM CLI, a script) reword or merge bullets.

The command gets the candidates as JSON on stdin and answers with bullets as JSON on
stdout. Its answer is validated strictly; a bad answer changes nothing and says why. What
it returns goes through the same review as memvault's own proposals.

    stdin:  {"protocol": "memvault-curate/1", "budget": {...},
             "candidates": [{"key": "p1", "kind": "add", "section": "...", "text": "...",
                             "bullet": null | {"id", "text"}, "entries": [{...}, ...]}]}
    stdout: {"bullets": [{"key": "p1", "text": "..."},
                         {"keys": ["p2", "p3"], "text": "...", "section": "..."}]}
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from dataclasses import replace
from typing import Any

from memvault.check.secrets.scan import find_secrets
from memvault.curate.budget import archives_for, budget
from memvault.curate.document import BLOCK_ID_RE, section_insert
from memvault.curate.plan import Plan, Proposal
from memvault.curate.promote import check_fence
from memvault.curate.proposals import build_lines
from memvault.entries.memory_md import ANNOTATION_RE, SOURCE_ANN_RE
from memvault.errors import MemvaultError
from memvault.parsed import ParsedVault
from memvault.textsafety import first_disallowed

PROTOCOL = "memvault-curate/1"
INSTRUCTIONS = (
    "Rewrite each candidate's text as one short, self-contained line for a long-term memory file. "
    "Reply with JSON {\"bullets\": [{\"key\": KEY, \"text\": TEXT}]}; to merge add candidates that say "
    "the same thing use {\"keys\": [KEY, ...], \"text\": TEXT}. Optional: \"section\" (add only), "
    "\"was\" (update only: what the bullet said before, shortened). Leave out candidates to keep them "
    "as they are. Do not add links, dates or ids: memvault adds them."
)


class WithError(MemvaultError):
    """The external command failed or answered something curate cannot use."""


def payload(plan: Plan, vault: ParsedVault) -> dict[str, Any]:
    tl = vault.timeline
    cands = []
    for p in plan.proposals:
        entries = []
        for eid in p.entries:
            ev = tl.by_id.get(eid)
            if ev is None:
                continue
            entries.append({"id": ev.id, "type": ev.type, "timestamp": ev.timestamp.isoformat() if ev.timestamp else None,
                            "content": ev.content, "tags": list(ev.tags), "file": ev.file, "line": ev.line})
        cands.append({
            "key": p.key, "kind": p.kind, "section": p.section, "text": p.text, "was": p.was,
            "bullet": {"id": p.bullet, "text": "\n".join(p.old)} if p.bullet else None,
            "entries": entries, "reason": p.reason,
        })
    return {"protocol": PROTOCOL, "instructions": INSTRUCTIONS, "budget": budget(plan), "candidates": cands}


def run_command(command: str, data: dict[str, Any], *, timeout: float, cwd: str,
                setting: str = "[curate] with_timeout", unchanged: str = "nothing was changed") -> Any:
    """The command's answer to `data` (JSON in, JSON out); `setting` names what sets the timeout and
    `unchanged` what a failure leaves, for the caller's messages (curate, ingest)."""
    try:
        args = shlex.split(command)
    except ValueError as exc:
        raise WithError(f"--with: cannot split the command {command!r}: {exc}") from None
    if not args:
        raise WithError("--with: the command is empty")
    try:
        proc = _run(args, json.dumps(data, ensure_ascii=False), timeout, cwd)
    except FileNotFoundError:
        raise WithError(f"--with: command not found: {args[0]}") from None
    except subprocess.TimeoutExpired:
        raise WithError(f"--with: {args[0]} did not answer within {timeout:g}s ({setting}); {unchanged}") from None
    if proc.returncode != 0:
        tail = proc.stderr.strip()[-500:]
        raise WithError(f"--with: {args[0]} exited with status {proc.returncode}; {unchanged}"
                        + (f"\n{tail}" if tail else ""))
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise WithError(f"--with: {args[0]} did not print JSON ({exc.msg} at line {exc.lineno}); {unchanged}") from None


def _run(args: list[str], stdin: str, timeout: float, cwd: str) -> subprocess.CompletedProcess[str]:
    """Run `args` in a session (process group) of its own, so a timeout kills the whole group:
    a wrapper script's children (curl, an LLM CLI) too, not only the script."""
    with subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=cwd, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group's id is the leader's pid (start_new_session)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()  # the pipes close now that every writer is gone; reaps the leader


def _bad(n: int, message: str) -> WithError:
    return WithError(f"--with: reply bullet {n}: {message}; nothing was changed")


def _text(n: int, item: dict[str, Any], key: str, limit: int) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _bad(n, f"'{key}' must be a non-empty string")
    value = value.strip()
    found = first_disallowed(value, line_breaks=False)
    if found is not None:  # refused, not stripped: the reply is not what memvault would write
        raise _bad(n, f"'{key}' must be one line without control characters; it holds {found[1]}")
    if len(value) > limit:
        raise _bad(n, f"'{key}' is {len(value)} characters, more than {limit}")
    if "[[" in value or BLOCK_ID_RE.search(value) or ANNOTATION_RE.search(value) or SOURCE_ANN_RE.search(value):
        raise _bad(n, f"'{key}' must not carry links, dates or block ids (memvault adds them)")
    if find_secrets(value, honour_allow=False):  # the allow mark is a person's, not a command's
        raise _bad(n, f"'{key}' looks like it holds a secret")
    if not inline_markdown(value):
        raise _bad(n, f"'{key}' must be plain inline Markdown (no heading, list, quote, code block or table)")
    return value


def inline_markdown(text: str) -> bool:
    """True when CommonMark reads `text` as one paragraph, so it can sit inside a bullet."""
    import mistune

    tokens = mistune.create_markdown(renderer=None)(text)  # no renderer: the token list, not a str
    return isinstance(tokens, list) and len(tokens) == 1 and tokens[0].get("type") == "paragraph"


def validate(reply: Any, plan: Plan) -> list[tuple[list[str], str, str | None, str | None]]:
    """The reply as (keys, text, section, was) items, or a `WithError` naming what is wrong."""
    if not isinstance(reply, dict) or not isinstance(reply.get("bullets"), list):
        raise WithError('--with: the reply must be a JSON object {"bullets": [...]}; nothing was changed')
    known = {p.key: p for p in plan.proposals}
    used: set[str] = set()
    out = []
    limit = plan.settings.max_chars
    for n, item in enumerate(reply["bullets"], 1):
        if not isinstance(item, dict):
            raise _bad(n, "must be an object")
        keys = item.get("keys", [item["key"]] if "key" in item else None)
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise _bad(n, "needs 'key' or a non-empty list 'keys'")
        for k in keys:
            if k not in known:
                raise _bad(n, f"unknown key {k!r} (known: {', '.join(known) or 'none'})")
            if k in used:
                raise _bad(n, f"key {k!r} is used twice")
            used.add(k)
        if len(keys) > 1 and any(known[k].kind != "add" for k in keys):
            raise _bad(n, "only 'add' candidates can be merged")
        text = _text(n, item, "text", limit)
        if text is None:
            raise _bad(n, "needs 'text'")
        section = _text(n, item, "section", 200)
        if section is not None and (known[keys[0]].kind != "add" or section.startswith("#")):
            raise _bad(n, "'section' is only for add candidates and is a plain name")
        was = _text(n, item, "was", limit)
        if was is not None and known[keys[0]].kind != "update":
            raise _bad(n, "'was' is only for update candidates")
        out.append((keys, text, section, was))
    return out


def rewrite_with(plan: Plan, vault: ParsedVault, command: str) -> Plan:
    """The plan with the command's rewritten or merged bullets in place of memvault's."""
    if not plan.proposals:
        return plan
    reply = run_command(command, payload(plan, vault), timeout=plan.settings.with_timeout, cwd=str(vault.root))
    items = validate(reply, plan)
    known = {p.key: p for p in plan.proposals}
    replaced: dict[str, Proposal] = {}
    dropped: set[str] = set()
    for keys, text, section, was in items:
        first = known[keys[0]]
        merged = [known[k] for k in keys]
        p = replace(first, text=text, origin="with", was=was or first.was)
        if len(merged) > 1:
            p = replace(
                p,
                entries=tuple(dict.fromkeys(e for m in merged for e in m.entries)),
                links=tuple(dict.fromkeys(lk for m in merged for lk in m.links)),
                day=max((m.day for m in merged if m.day), default=None),
                first_day=min((d for m in merged if (d := m.first_day or m.day)), default=None),
                reason="; ".join(_own_reason(m) for m in merged) + f" (merged {', '.join(keys)})"
                + (f"; section: {first.section_why}" if first.section_why else ""),
            )
            dropped.update(keys[1:])
        if section is not None and section != p.section:
            where = section_insert(plan.doc, section)
            why = "named by the --with command"
            p = replace(p, section=section, start=where[0] if where else -1, end=where[0] if where else -1,
                        section_why=why, reason=p.reason.replace(f"section: {p.section_why}", f"section: {why}"))
        replaced[first.key] = replace(p, lines=build_lines(p, plan.settings.max_sources))
    new = replace(plan, proposals=[replaced.get(p.key, p) for p in plan.proposals if p.key not in dropped])
    new.archives = archives_for(new)
    check_fence(new)  # a new section named by the command lands at the end of the file
    for dec in new.decisions.values():
        if dec.facts.get("proposal") in dropped:
            dec.facts["proposal"] = next(k for k, *_ in items if dec.facts["proposal"] in k)[0]
    return new


def _own_reason(p: Proposal) -> str:
    """A proposal's reason without its section's (a merge says one section, the first's)."""
    return p.reason.removesuffix(f"; section: {p.section_why}") if p.section_why else p.reason
