"""Running the checks over the whole vault, over named files, or over exactly what is staged.

A full check reads and parses every file. A partial check (`PATHS` or `--staged`) parses only
the files being judged plus what their references need (context.py). The files come from
the working tree or from git's index (sources.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memvault.check.changed import judge_mode, keep_changed, staged_changes
from memvault.check.context import ContextLoader
from memvault.check.merge_ids import merge_id_problems
from memvault.check.moved import moved_references
from memvault.check.registry import disabled_codes, memory_budget
from memvault.check.report import CheckReport
from memvault.check.rules import run_rules
from memvault.check.secrets.check import with_other_staged_files
from memvault.check.sourcefile import SourceFile, load_source
from memvault.check.sources import GitIndex, WorkingTree, staged_config
from memvault.config.core import CONFIG_NAME, Config
from memvault.entries.model import Problem
from memvault.errors import InputError
from memvault.gcpause import no_gc
from memvault.layout import Selection, vault_paths
from memvault.parsed import ParsedVault

__all__ = ["CheckReport", "check_vault", "load_source", "vault_paths"]


def check_vault(
    vault: ParsedVault, paths: Sequence[str] = (), *, staged: bool = False, now: datetime | None = None,
    changed_lines: bool | None = None,
) -> CheckReport:
    """Check the whole vault, the named vault files, or (`staged`) exactly the staged blobs.

    `changed_lines` (with `staged`; None: `[hook] judge` of the staged config) keeps only the
    problems the commit is to blame for (check/changed.py)."""
    if changed_lines and not staged:
        raise InputError("--changed-lines judges what a commit changes: use it with --staged")
    with no_gc():  # a check builds millions of objects and frees them together at the end
        if staged:
            if paths:
                raise InputError("give either PATHS or --staged, not both")
            return _staged(vault, now or vault.now(), changed_lines)
        return _check(vault, paths, now or vault.now())


def _staged(vault: ParsedVault, now: datetime, changed_lines: bool | None) -> CheckReport:
    config = vault.config
    index = GitIndex(vault.root, vault.selection, vault.dates)
    names = index.staged()
    if CONFIG_NAME in names:
        config = staged_config(index, config)
        disabled_codes(config)  # a bad [checks] or [curate] table fails the commit
        memory_budget(config)
        index.selection = Selection.of(config)  # the files the commit's own settings select
        names = index.staged()
    judged: list[SourceFile] = []
    report = _partial("staged", index, [n for n in names if index.selection.selects(n)], config, now, judged)
    report = _with_skipped(report, index.skipped, config)
    report = with_other_staged_files(report, index, names, disabled_codes(config))
    if changed_lines is None:
        changed_lines = judge_mode(config) == "changed-lines"
    if changed_lines:
        report.judge = "changed-lines"
        if report.problems:  # the diff is read only when there is something to excuse
            kept = keep_changed(report.problems, staged_changes(vault.root), judged)
            report.excused = len(report.problems) - len(kept)
            report.problems = kept
    if "MV019" not in disabled_codes(config):  # never excused: the holder's lines did not change
        moved = moved_references(index, config, judged)
        report.problems = sorted(report.problems + moved, key=lambda p: (p.path, p.line, p.col, p.code))
    return report


def _check(vault: ParsedVault, paths: Sequence[str], now: datetime) -> CheckReport:
    config = vault.config
    tree = WorkingTree(vault.root, vault.selection, vault.dates)
    if paths:
        skipped: list[Problem] = []
        report = _partial("paths", tree, vault_paths(vault.root, paths, skipped, selection=vault.selection), config, now)
        return _with_skipped(report, skipped, config)
    all_paths = tree.paths()
    files = [load_source(rel, raw, config, tree.dates.of(rel)) for rel, raw in tree.read(all_paths).items()]
    report = CheckReport("vault", all_paths, run_rules(files, config, now=now, all_paths=all_paths))
    merged: list[Problem] = []
    if "MV024" not in disabled_codes(config):  # a full check only: it reads the recent merges
        merged = merge_id_problems(vault.root, config, vault.selection, tree.dates, files)
    return _with_skipped(report, tree.skipped + merged, config)


def _with_skipped(report: CheckReport, skipped: list[Problem], config: Config) -> CheckReport:
    """The report with what the layout rule did not read (links, non-files, unreadable folders)."""
    off = disabled_codes(config)
    if skipped:
        report.problems = sorted(report.problems + [p for p in skipped if p.code not in off],
                                 key=lambda p: (p.path, p.line, p.col, p.code))
    return report


def _partial(mode: str, source: WorkingTree | GitIndex, focus: list[str], config: Config, now: datetime,
             judged: list[SourceFile] | None = None) -> CheckReport:
    """Check the `focus` files (they go to `judged` too), with the context their references need."""
    if not focus:
        return CheckReport(mode, [], [])
    all_paths = source.paths()
    files = [load_source(rel, raw, config, source.dates.of(rel)) for rel, raw in source.read(focus).items()]
    if judged is not None:
        judged.extend(files)
    loader = ContextLoader(source, all_paths + sorted(set(focus).difference(all_paths)), config)
    context = loader.load(files)
    problems = run_rules(files, config, now=now, all_paths=loader.all_paths, context=context)
    return CheckReport(mode, focus, problems, context_files=len(context))
