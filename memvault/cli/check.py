"""Validation commands: `check` and the git `hook`."""

from __future__ import annotations

import click

from memvault.cli._common import cli, emit, json_option, open_vault


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--staged", is_flag=True, help="Check exactly the files staged in git, as staged (the pre-commit hook).")
@click.option("--fix", is_flag=True,
              help="Repair title lines, entry headings (spacing; '## 10:00 Decision' and other plain "
                   "attempts), trailing whitespace and entry order in place first; say what it leaves and why.")
@click.option("--changed-lines/--all-lines", "changed_lines", default=None,
              help="With --staged: report only problems on lines the commit adds or changes (and entries "
                   "whose heading or metadata it changes), or every problem in the staged files. "
                   "Default: [hook] judge in memvault.toml (\"all\" unless set).")
@click.option("--list-rules", is_flag=True, help="List every rule code and exit.")
@json_option
@click.pass_context
def check(ctx, paths, staged, fix, changed_lines, list_rules, as_json) -> None:
    """Check the vault (or PATHS, or what is staged) and print file:line:col: CODE lines.

    Exit status 1 when there are errors, 0 when there are only warnings. Codes are
    documented in docs/checks.md; turn rules off with [checks] disable in memvault.toml.
    """
    if list_rules:
        from memvault.check import rule_table

        emit(rule_table(), as_json, _rules_text)
        return
    from memvault.check import run_check

    vault = open_vault(ctx)
    report = run_check(vault, paths, staged=staged, fix=fix, changed_lines=changed_lines)
    emit(report.to_dict(), as_json, lambda _: _report_text(report) + _fix_hint(report, vault.root))
    if report.errors:
        ctx.exit(1)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _report_text(report) -> str:
    out: list[str] = [f"fixed {path}: {', '.join(codes)}" for path, codes in report.fixed.items()]
    if out:
        out.append("")
    last = None
    for p in report.problems:
        if last is not None and p.path != last:
            out.append("")
        last = p.path
        out.append(f"{p.path}:{p.line}:{p.col}: {p.code} {p.severity}: {p.message}")
    if report.problems:
        out.append("")
    files = len(report.files)
    what = {"staged": "staged file", "paths": "file"}.get(report.mode, "file")
    if report.mode == "staged" and not files:
        out.append("no staged vault files to check")
        return "\n".join(out)
    summary = f"{_plural(report.errors, 'error')}, {_plural(report.warnings, 'warning')}"
    if report.infos:
        summary += f", {report.infos} info"
    summary += f" in {_plural(files, what)}"
    if report.secrets_only:
        summary += f" ({report.secrets_only} of them not memory, scanned for secrets only)"
    if report.context_files:
        summary += f" ({_plural(report.context_files, 'other file')} read for references)"
    if report.excused:
        summary += (f"; {_plural(report.excused, 'older problem')} on lines this commit does not change "
                    "left out (changed-lines mode)")
    out.append(summary)
    out += _left_text(report.left or [])
    return "\n".join(out)


def _left_text(left: list[dict]) -> list[str]:
    """With --fix: what it left, and why."""
    if not left:
        return []
    out = ["", "not repaired by --fix:"]
    for d in left:
        where = f"{d['path']}:{d['line']}: " if d["path"] else ""
        count = f" ({d['count']})" if d["count"] > 1 else ""
        out.append(f"  {where}{d['code']}{count}: {d['why']}")
    return out


def _fix_hint(report, root) -> str:
    """For a refused commit: the `check --fix` that repairs the refused files and no others,
    runnable where the hook runs (the repository's top, or wherever `check --staged` was run)."""
    import os
    import shlex

    paths = report.fix_paths() if report.mode == "staged" else []
    if not paths:
        return ""
    here = os.getcwd()
    vault = os.path.relpath(root, here)
    where = "" if vault == "." else f" --vault {shlex.quote(vault)}"
    files = " ".join(shlex.quote(os.path.relpath(os.path.join(root, p), here)) for p in paths)
    return f"\nto repair what --fix can in these files only: memvault{where} check --fix {files}"


def _rules_text(rules: list[dict]) -> str:
    return "\n".join(
        f"{r['code']}  {r['severity']:<7}  {r['title']}{'  (--fix)' if r['fixable'] else ''}" for r in rules
    )


@cli.group()
def hook() -> None:
    """The git pre-commit hook that runs `memvault check --staged` on every commit."""


@hook.command("install")
@click.option("--uninstall", is_flag=True, help="Remove the hook and restore the one it chained, if any.")
@json_option
@click.pass_context
def hook_install(ctx, uninstall: bool, as_json: bool) -> None:
    """Install the pre-commit hook into the vault's git repository (honours core.hooksPath).

    An existing pre-commit hook is kept as pre-commit.before-memvault and runs first.
    """
    from memvault.check import hook as githook

    vault = open_vault(ctx)
    result = githook.uninstall(vault.root) if uninstall else githook.install(vault.root)
    emit(result.to_dict(), as_json, lambda _: result.describe())


@hook.command("status")
@json_option
@click.pass_context
def hook_status(ctx, as_json: bool) -> None:
    """Say whether the hook is installed, and where."""
    from memvault.check import hook as githook

    data = githook.status(open_vault(ctx).root)
    emit(data, as_json, lambda d: (
        f"installed at {d['path']}" + (f" (chaining {d['chained']})" if d["chained"] else "")
        if d["installed"] else f"not installed (would go to {d['path']})"))
