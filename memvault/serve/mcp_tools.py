"""The MCP server: memvault's operations as MCP tools and resources (official SDK, `MCPServer`).

The descriptions are written for a model choosing a tool: what it is for, when to use it
rather than another, and what comes back (compact JSON citing `file#Lx-Ly` and the entry id).
A library error becomes a tool error naming its code (`refused`, `not_found`, `secret`, ...).
Needs the `serve` extra; imported only when a server starts.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from memvault.context import DEFAULT_BUDGET
from memvault.errors import MemvaultError
from memvault.memorywire.mapping import api_words, tool_words
from memvault.serve.service import Service
from memvault.serve.wire import Wire

INSTRUCTIONS = """\
memvault is this user's long-term memory: Markdown files (daily logs under memory/, curated \
MEMORY.md) that people read and edit too. Before answering from what you think you know about \
the user, their projects or past decisions, `search` (or `context` at the start of a task). \
When you learn something worth keeping (a preference, a decision, a fact, a correction), \
`remember` it: one self-contained statement per call. When a memory is wrong, `remember` the \
correction with `supersedes`; `forget` only what must no longer be recalled. Cite what you use \
by its `cite` (file#Lx-Ly) or id. Never store secrets (they are refused)."""

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
APPEND = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
# forget hides entries from recall (the text stays, with a `Forgotten:` line): destructive to what
# a model will see again, idempotent (forgetting a forgotten entry changes nothing)
FORGET = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
MCP_AGENT = "mcp"  # the memorywire agent_id the MCP tools write as

Query = Annotated[str, Field(description="Words to look for (OR-ed, ranked); \"quoted phrases\" must match; "
                                         "`type:decision` or `tag:x` filter.")]
Limit = Annotated[int, Field(ge=1, le=100, description="At most this many results.")]
Mode = Annotated[Literal["lexical", "semantic", "hybrid"] | None,
                 Field(description="How the query is matched: lexical (words), semantic (meaning; needs the "
                                   "semantic extra) or hybrid (both, fused). None: the vault's setting "
                                   "(hybrid when a model is installed). The answer's `mode` says which was used.")]
When = Annotated[str, Field(description="A time: 2026-02-21, 2026-02-21 09:15, yesterday, '3 days ago', "
                                        "or a git revision.")]
Ref = Annotated[str, Field(description="An entry id (e.g. 2026-02-21T09:15), its start, or a place as results "
                                       "cite it (memory/2026-02-21.md#L3-L5).")]


def build_mcp(service: Service, wire: Wire | None = None) -> MCPServer:
    """An MCP server whose tools call `service` (which the caller starts and stops) and, for
    `forget`, memorywire through `wire` (the HTTP server's own, so both share one store)."""
    server: MCPServer = _Server("memvault", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    for fn, hints in _tools(service, wire or Wire(service)):
        server.add_tool(_library_errors(fn), name=fn.__name__, description=(fn.__doc__ or "").strip(),
                        annotations=hints)
    _resources(server, service)
    return server


def _tools(service: Service, wire: Wire) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    def search(query: Query, limit: Limit = 10,
               types: Annotated[list[str] | None, Field(description="Only these entry types: observation, "
                                                        "belief, decision, correction, ...")] = None,
               tags: Annotated[list[str] | None, Field(description="Only entries with one of these tags.")] = None,
               include_all: Annotated[bool, Field(description="Also superseded, expired and forgotten entries.")]
               = False,
               mode: Mode = None,
               ) -> dict[str, Any]:
        """Search the user's memory (daily logs and MEMORY.md) and get the best matching entries, ranked by
        relevance, importance, recency and confidence (memorywire's `recall` over the same index). Use it before
        answering anything about the user, their work, people, projects or earlier decisions. Each result: id
        (what `get`, `history`, `forget` and `supersedes` take), cite (file#Lx-Ly), type, time, text, score;
        `status` appears only when an entry no longer holds (superseded by a newer one, expired). Forgotten
        entries are left out unless `include_all` (then with `status: forgotten`)."""
        return service.search(query, limit, types, tags, include_all, mode)

    def get(ref: Annotated[str | None, Field(description="An id, its start, or a cited place "
                                             "(memory/2026-02-21.md#L3-L5). Give this or `file`.")] = None,
            file: Annotated[str | None, Field(description="A vault file (MEMORY.md, memory/2026-02-21.md), "
                                              "to read lines of it. Give this or `ref`.")] = None,
            start_line: Annotated[int | None, Field(ge=1, description="With `file`: first line (1-based).")] = None,
            end_line: Annotated[int | None, Field(ge=1, description="With `file`: last line.")] = None,
            ) -> dict[str, Any]:
        """Read one entry in full (by id or cited place), with its metadata and supersession links; or lines
        of one vault file (by path and line range) when you need the surrounding text. Only the vault's
        memory files can be read. Fetching an entry counts as recalling it (it stays fresh)."""
        return service.get(ref, file, start_line, end_line)

    def remember(text: Annotated[str, Field(description="One self-contained statement, as you would want to "
                                                        "read it months later (who, what, why).")],
                 type: Annotated[str, Field(description="observation (what happened or was said), belief "
                                            "(a fact or preference), decision, or correction.")] = "observation",
                 tags: Annotated[list[str] | None, Field(description="A few lowercase topic tags.")] = None,
                 importance: Annotated[str | float | None, Field(description="high, medium or low, or a number "
                                                                 "0-1.")] = None,
                 confidence: Annotated[float | None, Field(ge=0, le=1, description="0-1; default 1.")] = None,
                 source: Annotated[str | None, Field(description="Who said it: user, a URL, a session id.")] = None,
                 supersedes: Annotated[str | None, Field(description="Id of the entry this one corrects or "
                                                         "replaces (it stops being live).")] = None,
                 ) -> dict[str, Any]:
        """Write a new memory: appends an entry to today's daily log (plain Markdown the user can read and
        edit), searchable at once. Use it for preferences, facts, decisions and corrections worth keeping
        beyond this conversation; to change an old memory, give `supersedes` with its id instead of
        repeating it. Never store passwords, keys or tokens: they are refused. Returns the new id (stable:
        it stays the entry's when the file is edited) and cite; when the vault requires approval, nothing is
        written yet: `pending_approval` with the `approval_url` a person reviews."""
        request = {"agent_id": MCP_AGENT, "text": text, "type": type, "tags": tags, "importance": importance,
                   "confidence": confidence, "source": source, "supersedes": supersedes}
        return wire.remember({k: v for k, v in request.items() if v is not None})

    def forget(ids: Annotated[list[str], Field(min_length=1, max_length=100, description="The ids of the "
                                               "entries to forget, as `search` or `get` gave them.")],
               reason: Annotated[str | None, Field(description="Why, in a few words (kept with the entry).")] = None,
               ) -> dict[str, Any]:
        """Stop recalling memories that must not be used again (wrong, obsolete, asked to be forgotten): each
        entry gets a `Forgotten:` line in its file and leaves search results; its text stays in the user's
        Markdown, so a person can still read or undo it. Give the ids; nothing is forgotten without them, and
        if one id is unknown or cannot be forgotten, nothing is. For a memory that changed, prefer
        `remember` with `supersedes`. Returns `forgotten_ids` (already forgotten ones are not repeated);
        when the vault requires approval, `pending_approval` with the `approval_url` a person reviews."""
        request: dict[str, Any] = {"agent_id": MCP_AGENT, "ids": ids, "hard_delete": False}
        if reason:
            request["reason"] = reason
        return wire.call("forget", request)

    def asof(at: When, query: Annotated[str | None, Field(description="Words to rank by; none lists all.")] = None,
             limit: Limit = 20) -> dict[str, Any]:
        """What the memory held as true at a past time (entries live then, before later corrections), optionally
        ranked by a query. Use it for "what did we think about X in March?" or to explain an old decision."""
        return service.as_of(at, query, limit)

    def changes(since: When, until: Annotated[str | None, Field(description="End of the window; default now.")]
                = None, limit: Limit = 20) -> dict[str, Any]:
        """What changed in memory since a time: new entries, entries superseded since, and (from git) edits,
        deletions and revived entries. Use it to catch up at the start of a session ("since yesterday")."""
        return service.changes(since, until, limit)

    def history(ref: Ref) -> dict[str, Any]:
        """The story of one entry: the chain of entries that superseded each other around it (oldest first)
        and the git commits that changed it. Use it to see why a memory changed and what it said before."""
        return service.history(ref)

    def curate_preview() -> dict[str, Any]:
        """Preview (without writing anything) which daily-log entries curation would promote into MEMORY.md,
        the budget, and the diff. Only a person applies curation (`memvault curate`)."""
        return service.curate_preview()

    def context(query: Annotated[str | None, Field(description="The task at hand, in a few words: the entries "
                                                   "most relevant to it join MEMORY.md's. None: the most "
                                                   "important and recent ones.")] = None,
                scope: Annotated[str | None, Field(description="The task's scope (a domain such as github.com, "
                                                   "or project:<name>): entries of other scopes are left "
                                                   "out; global ones stay.")] = None,
                budget: Annotated[int, Field(ge=0, le=100_000, description="At most this many tokens "
                                             "(estimated).")] = DEFAULT_BUDGET,
                mode: Mode = None,
                ) -> dict[str, Any]:
        """The memory to start a task with: a short Markdown block (`text`) to put at the top of your context,
        with the user's curated MEMORY.md bullets and the entries most relevant to `query`, grouped by kind
        (preferences, lessons, decisions, facts, ...), each line ending in its [id]; superseded, expired and
        forgotten memories are never in it, and what the user said wins over what was inferred. Also `items`
        (id, kind, text, cite, tokens) and `left_out` (id, why). What it returns counts as recalled."""
        return service.context(query, scope, budget, mode=mode)

    return [(search, READ), (get, READ), (remember, APPEND), (forget, FORGET), (asof, READ), (changes, READ), (history, READ),
            (curate_preview, READ), (context, READ)]


def _resources(server: MCPServer, service: Service) -> None:
    @server.resource("memvault://MEMORY.md", name="MEMORY.md", mime_type="text/markdown",
                     description="The curated long-term memory: preferences, projects, decisions, lessons.")
    def memory_md() -> str:
        return service.read_text("MEMORY.md", missing="")

    @server.resource("memvault://today", name="today's log", mime_type="text/markdown",
                     description="Today's daily log (memory/YYYY-MM-DD.md): what was noted today.")
    def today() -> str:
        return service.today_log()

    @server.resource("memvault://context", name="context", mime_type="text/markdown",
                     description="The memory block for the top of a prompt: MEMORY.md's live bullets and the most "
                                 "important and recent entries, by kind, each line citing its id (the `context` "
                                 "tool without a query; reading it records no recall).")
    def prompt_block() -> str:
        return service.context(record=False)["text"]


class _Server(MCPServer):
    """The SDK's server, with argument errors said as a model can act on them: `usage: search:
    argument 'query' is required` rather than pydantic's report (its type names, input dicts
    and a link to its docs)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK says only "Error executing tool NAME", and logs it
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"usage: {name}: {argument_errors(exc.__cause__)}") from None
            # ours (`_library_errors`) already start with their kind: `not_found: ...`
            raise ToolError(str(exc).removeprefix(f"Error executing tool {name}: ")) from None


KINDS = {"string": "must be a string", "int": "must be an integer", "float": "must be a number",
         "bool": "must be true or false", "list": "must be a list", "dict": "must be an object"}


def argument_errors(exc: ValidationError) -> str:
    """One clause per wrong argument, naming it and what it takes ('limit' must be an integer;
    an argument of several types, `importance`: 'must be a string or a number')."""
    said: dict[str, str] = {}  # clause by argument, in order
    wanted: dict[str, list[str]] = {}
    for err in exc.errors():
        parts = [str(p) for p in err["loc"] if not (isinstance(p, str) and p in UNION_TAGS)]
        where = ".".join(parts) or "arguments"
        if err["type"] == "missing":
            said[where] = f"argument '{where}' is required"
        elif err["type"] == "extra_forbidden":
            said[where] = f"there is no argument '{where}'"
        else:
            got = err.get("input")
            shown = repr(got) if isinstance(got, (int, float, bool)) or (isinstance(got, str) and len(got) < 40) \
                else type(got).__name__
            msg = KINDS.get(err["type"].split("_")[0]) or err["msg"].replace("Input should be", "must be")
            kinds = wanted.setdefault(where, [])
            kinds.append(msg.removeprefix("must be ") if kinds else msg)
            said[where] = f"argument '{where}' {' or '.join(dict.fromkeys(kinds))} (got {shown})"
    return "; ".join(said.values())


UNION_TAGS = {"str", "float", "int", "bool", "list[str]", "none"}


def _library_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A library error as a tool error the model can act on: `refused: ...`, `not_found: ...`."""
    words = tool_words(tuple(inspect.signature(fn).parameters))  # `--type 'x'` -> `argument 'types' 'x'`

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemvaultError as exc:
            raise ToolError(f"{exc.code}: {api_words(str(exc), words)}") from None
    return call


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memvault")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0"
