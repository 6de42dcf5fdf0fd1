"""Search commands: search, index, status."""

from __future__ import annotations

import re
import sys
from types import TracebackType
from typing import TYPE_CHECKING

import click

from memvault.cli._common import (
    TIME,
    FiniteFloatRange,
    cli,
    emit,
    folded_sources,
    is_tty,
    json_option,
    limit_option,
    mode_option,
    open_vault,
    parse_window,
    retention_mark,
    status_tag,
)
from memvault.cli._errors import json_notice
from memvault.textsafety import printable

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar  # what click.progressbar returns

BACKEND_HELP = "Index backend: sqlite (default) or whoosh. Default: [index] backend in memvault.toml."
MARK_RE = re.compile(r"\*\*(.+?)\*\*")


@cli.command()
@click.argument("query", nargs=-1, required=True)
@limit_option("Number of hits.", default=10)
@click.option("--type", "types", multiple=True, help="Only this type (repeatable); also `type:X` in the query.")
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag (repeatable); also `tag:X`.")
@click.option("--since", type=TIME, help="Entries at or after this time.")
@click.option("--until", type=TIME, help="Entries at or before this time.")
@click.option("--all", "include_all", is_flag=True, help="Include superseded and expired entries.")
@click.option("--backend", help=BACKEND_HELP)
@mode_option()
@click.option("--record/--no-record", default=None,
              help="Count the first hits ([search] record_top, 3) as recalled: you use them. "
                   "Default: [search] record in memvault.toml (false).")
@json_option
@click.pass_context
def search(ctx, query, limit, types, tags, since, until, include_all, backend, mode, record, as_json) -> None:
    """Search memories: words are OR-ed and ranked; "quoted phrases" must match.

    Ranked by relevance, importance, recency and confidence (docs/search.md). A log entry
    that a curated bullet among the hits cites is shown once, as the bullet's sources;
    `--all` and `--json` show both. A search changes nothing unless --record: then its
    first hits count as recalled (recency, curate). A query with no words (empty, only
    punctuation) is a usage error; one of only common words (`the of and`) is searched as
    typed, with a note saying so.
    """
    from memvault.entries.folding import fold_cited
    from memvault.search.index import search_vault
    from memvault.search.textproc import common_words_only

    vault = open_vault(ctx)
    start, end = parse_window(vault, since, until)
    hits = search_vault(
        vault, " ".join(query), backend=backend, limit=limit, types=types, tags=tags, since=start, until=end,
        include_all=include_all, record_access=record, mode=mode,
    )
    items = [h.to_dict() for h in hits]
    emit(items if as_json or include_all else fold_cited(items), as_json, _hits_text,
         style=_bold_matches if is_tty() else None)
    note = common_words_only(" ".join(query))
    if note:  # `no matches` for `the of and` must not read as "nothing about that"; a JSON line under --json
        click.echo(json_notice(note) or printable(f"note: {note}"), err=True)


def _bold_matches(out: str) -> str:
    """The snippets' **matches** in bold (on an escaped text: see `emit`)."""
    lines = out.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("    "):
            lines[i] = MARK_RE.sub(lambda m: click.style(m.group(1), bold=True), line)
    return "\n".join(lines)


def _hits_text(items: list[dict]) -> str:
    if not items:
        return "no matches"
    out = []
    for i, d in enumerate(items, 1):
        status = status_tag(d).replace(" [", "  [", 1)
        if d.get("sources_superseded_by"):
            status += f"  [sources superseded by {d['sources_superseded_by']}]"
        nearby = "" if d.get("matched", True) else "  (found through nearby entries)"
        if d.get("matched_by") == ["meaning"]:
            nearby += "  (by meaning)"
        head = (f"{i:>2}. {d['score']:.3f}  {d['id']}  {d['type']}  {retention_mark(d)}{d['location']}{status}{nearby}"
                f"{folded_sources(d)}")
        out.append(head)
        if d.get("path"):  # a note: the headings it is under
            out.append("    \u00a7 " + " \u203a ".join(d["path"]))
        out.append(f"    {d['snippet']}")
    return "\n".join(out)


@cli.command("index")
@click.option("--rebuild", is_flag=True, help="Rebuild from scratch instead of updating changed files.")
@click.option("--backend", help=BACKEND_HELP)
# --wait/--timeout belong to the watcher (issue 4); the work is in memvault/cli/watch.py.
@click.option("--wait", is_flag=True,
              help="Return once the index reflects the files as they are now, watcher or not (for scripts).")
@click.option("--timeout", type=FiniteFloatRange(0, 86_400), default=30.0, show_default=True,
              help="With --wait: give up (exit 1) when the index stays locked this long.")
@json_option
@click.pass_context
def index_cmd(ctx, rebuild: bool, backend: str | None, wait: bool, timeout: float, as_json: bool) -> None:
    """Bring the search index up to date with the Markdown (only changed files are re-read)."""
    from memvault.search.index import update_index

    if wait:
        from memvault.cli.watch import index_wait

        return index_wait(ctx, backend=backend, timeout=timeout, rebuild=rebuild, as_json=as_json)
    vault = open_vault(ctx)
    with _Progress(is_tty() and not as_json) as progress:
        report = update_index(vault, backend, rebuild=rebuild, progress=progress)
    emit(report.to_dict(), as_json, _report_text)


def _report_text(d: dict) -> str:
    what = "rebuilt" if d["rebuilt"] else "updated"
    files = f"{len(d['added'])} added, {len(d['changed'])} changed, {len(d['removed'])} removed"
    line = f"index {what}: {files} file(s); {d['events_indexed']} event(s) indexed in {d['seconds']:.2f}s"
    errors = sum(p["severity"] == "error" for p in d["problems"])
    if d["problems"]:  # what reading the files found, not the rules a full check runs on top
        line += (f"\nparse problems in the files read: {len(d['problems'])} ({errors} error{'s' * (errors != 1)}); "
                 "`memvault check` runs every rule (ids, links, secrets, layout) and lists them all")
    return "\n".join([line] + [f"kept last good entries: {why}" for why in d.get("held", {}).values()]
                     + _embedding_text(d.get("semantic")))


def _embedding_text(sem: dict | None) -> list[str]:
    """What embedding the new entries did (none: semantic search is off for this vault)."""
    if sem is None:
        return []
    if "error" in sem:
        return [f"embedding failed, nothing embedded: {sem['error']} (searches use words only)"]
    line = (f"embedding ({sem['model']}): {sem['encoded']} encoded, {sem['reused']} reused from the cache, "
            f"{sem['removed']} removed; {sem['vectors']} vector(s) in {sem['seconds']:.2f}s")
    if sem.get("pending"):
        line += f"; {sem['pending']} entries still pending"
    return [line]


class _Progress:
    """A click progress bar on a terminal, nothing otherwise; created on the first report."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar: ProgressBar[int] | None = None
        self.done = 0
        self.label = "indexing"

    def __enter__(self) -> _Progress | None:
        return self if self.enabled else None

    def stage(self, label: str) -> None:
        """A new stage (the index calls it before embedding): its own bar."""
        self.close()
        self.label, self.done = label, 0

    def __call__(self, n: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)  # click 8.5 deprecates get_text_stream
            self.bar.__enter__()
        self.bar.update(n - self.done)
        self.done = n

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(kind, exc, tb)

    def close(self, kind: type[BaseException] | None = None, exc: BaseException | None = None,
              tb: TracebackType | None = None) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, exc, tb)
            self.bar = None


@cli.command()
@json_option
@click.pass_context
def status(ctx, as_json: bool) -> None:
    """Index (and other derived state): files and events on disk vs indexed, staleness; the
    watcher; sync with the git remote (ahead/behind as of the last fetch, the last sync)."""
    from memvault.status import collect

    vault = open_vault(ctx)
    data, lines = collect(vault)
    emit(data, as_json, lambda _: "\n".join(lines))


@cli.command("context")
@click.argument("query", nargs=-1)
@click.option("--scope", metavar="S", help="Only entries of this scope (a domain, project:<name>) and global "
                                            "ones (an entry without a Scope: line is global).")
@click.option("--budget", type=click.IntRange(min=0), default=1000, show_default=True, metavar="TOKENS",
              help="The block never takes more tokens than this (estimated: UTF-8 bytes/4 per line; "
                   "tiktoken when installed and cached). 0 or too small for one line: an empty block.")
@click.option("--record/--no-record", default=True, show_default=True,
              help="Count what the block holds as recalled (recency, retention, curate).")
@click.option("--backend", help=BACKEND_HELP)
@mode_option(" Only with QUERY.")
@json_option
@click.pass_context
def context_cmd(ctx, query, scope, budget, record, backend, mode, as_json) -> None:
    """The memory block for the top of an agent's prompt (docs/context.md).

    MEMORY.md's live bullets plus the entries most relevant to QUERY (without one: the most
    important and recent), grouped by kind, each line citing its id, within --budget tokens;
    superseded, expired and forgotten entries never. Of two that conflict, `Source: user`
    wins. --json gives the items (id, kind, text, cite, tokens) and what was left out, why.
    """
    from memvault.context import context

    vault = open_vault(ctx)
    result = context(vault, " ".join(query), scope=scope, budget=budget, record=record, backend=backend, mode=mode)
    emit(result, as_json, lambda d: d["text"])
