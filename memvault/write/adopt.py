"""Adopting memory that already exists: `memvault adopt DIR` (and `init --adopt DIR`).

A folder of `memory/` logs and a `MEMORY.md`, written by agents and people before memvault,
becomes a vault without any existing file being changed:

- `memvault.toml` is written beside them (created, never over a file: a folder that has one
  is refused), with `[hook] judge = "changed-lines"` so legacy content never blocks a commit;
- `git init` only where the folder is in no repository (`git=False` skips it); nothing is
  committed unless `commit=True` asks for it, and then only the files memvault reads plus
  memvault.toml, and never when the secret scan finds something in them;
- the person's `.gitignore` is not edited: memvault's derived folder ignores itself
  (`.memvault/.gitignore` holds `*`), and the report suggests the line when their own
  rules do not name `.memvault/`;
- the index is built, the files are checked, and the report says what was found;
- the pre-commit hook is installed unless a hook that is not memvault's is already there:
  then it is left alone and the report says how to chain it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memvault.check import hook as githook
from memvault.check.runner import check_vault
from memvault.config.core import CONFIG_NAME, Config, local_zone_name, parse_toml
from memvault.derived_db import self_ignore
from memvault.errors import MemvaultError, NotFoundError, Refused
from memvault.fsio import DERIVED_DIR, rewrite
from memvault.gitio import fallback_identity, run_git
from memvault.layout import LOG_DIR, MEMORY_FILE
from memvault.parsed import ParsedVault
from memvault.search.index import index_status, update_index
from memvault.write.adopt_report import (
    AdoptReport,
    entry_counts,
    files_by_kind,
    places,
    plural,
    problems_by_code,
    secret_places,
)
from memvault.write.log import template_config

SECRET_CODES = frozenset(f"MV{n}" for n in range(501, 512))
COMMIT_MESSAGE = "memvault: adopt existing memory"
IGNORE_LINES = f"{DERIVED_DIR}/\n*.mvtmp\n"
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # a file named `*.md` or `:x.md` is that file, not a pattern


def adopt_vault(target: Path, *, timezone: str | None = None, git: bool = True, hook: bool = True,
                commit: bool = False) -> AdoptReport:
    """Make the memory in `target` a vault without changing its files; report what is there."""
    root = Path(target).expanduser().resolve()
    _refuse_unless_memory(root)
    config_path = root / CONFIG_NAME
    zone = timezone or local_zone_name()
    text = config_text(zone)
    config = Config.from_dict(parse_toml(text, CONFIG_NAME), config_path)  # a bad --timezone fails here
    repo, state = _git(root) if git else (None, "none")
    _write_config(config_path, text)
    vault = ParsedVault(root, config)
    problems = check_vault(vault).problems
    report = AdoptReport(root, config_path, state, files_by_kind(vault.files), entry_counts(vault.events),
                         problems_by_code(problems), repo=repo, timezone=zone, zone_given=timezone is not None,
                         secrets=secret_places(problems, SECRET_CODES))
    if repo is not None:
        report.gitignore = "ignored" if _ignored(root) else "suggest"
    _self_ignoring(root)
    report.indexed = update_index(vault).events_indexed or _indexed(vault)
    if repo is not None:
        report.hook = _hook(root) if hook else {"action": "skipped", "message": "not installed (--no-hook)"}
        if commit:
            report.commit, report.refused = _commit(root, [CONFIG_NAME, *vault.files], report.secrets)
        report.uncommitted = _uncommitted(root, sorted(vault.files))
    elif commit:
        report.refused = "not committed: --commit needs git (--no-git was given)"
    report.next = _next_steps(report)
    return report


def _refuse_unless_memory(root: Path) -> None:
    if not root.is_dir():
        raise NotFoundError(f"{root} does not exist or is not a folder; nothing to adopt")
    if (root / CONFIG_NAME).exists() or (root / CONFIG_NAME).is_symlink():
        raise Refused(f"{root} already has {CONFIG_NAME}: it is a memvault vault, nothing to adopt. "
                            "`memvault check` reports its problems, `memvault hook install` installs the hook")
    if not (root / LOG_DIR).is_dir() and not (root / MEMORY_FILE).is_file():
        raise NotFoundError(f"{root} holds no {LOG_DIR}/ folder and no {MEMORY_FILE}: nothing to adopt; "
                            "`memvault init DIR` creates a new vault")


def config_text(zone: str, judge: str = "changed-lines") -> str:
    """The template's memvault.toml for `zone`, its hook judging `judge`."""
    return template_config(zone, judge)


def _write_config(path: Path, text: str) -> None:
    data = text.encode("utf-8")

    def create(raw: bytes | None) -> bytes:
        if raw is not None:  # made by someone else since the look above
            raise MemvaultError(f"{path} appeared while adopting; not overwriting it")
        return data

    rewrite(path, create, what=CONFIG_NAME)


def _git(root: Path) -> tuple[Path, str]:
    """The repository holding `root` ("existing"), or a new one in `root` ("initialized")."""
    found = run_git(["rev-parse", "--show-toplevel"], root, check=False)
    if found.ok:
        return Path(found.text.removesuffix("\n")).resolve(), "existing"
    run_git(["init", "-q"], root)
    return root, "initialized"


def _ignored(root: Path) -> bool:
    """Do the person's own ignore rules keep `.memvault/` out of git?"""
    return run_git(["check-ignore", "-q", "--", f"{DERIVED_DIR}/"], root, ok=(0, 1)).ok


def _self_ignoring(root: Path) -> None:
    """`.memvault/.gitignore` with `*`: git ignores the derived folder whatever the person's
    own `.gitignore` says, and that file is not touched."""
    (root / DERIVED_DIR).mkdir(exist_ok=True)
    self_ignore(root / DERIVED_DIR)


def _indexed(vault: ParsedVault) -> int:
    """Events in an index that was already up to date (an earlier `--vault` search built it)."""
    return index_status(vault).events_indexed


def _hook(root: Path) -> dict[str, object]:
    """Install the hook, unless a pre-commit hook that is not memvault's is there already."""
    target = githook.hooks_dir(root) / "pre-commit"
    if (target.exists() or target.is_symlink()) and (target.is_symlink() or not githook.is_ours(target)):
        return {"action": "kept", "path": str(target),
                "message": f"a pre-commit hook that is not memvault's is at {target}; left as it is. "
                           "`memvault hook install` keeps it (as pre-commit.before-memvault, run first) and adds memvault's"}
    result = githook.install(root)
    data = result.to_dict()
    data["message"] = result.describe() + ' (it judges the lines a commit changes: [hook] judge = "changed-lines")'
    return data


def _commit(root: Path, paths: list[str], secrets: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """Commit the vault's files as they are, as the baseline the hook judges changes against:
    (the commit, or None when there was nothing to commit; why nothing was committed)."""
    if secrets:
        return None, f"not committed: the secret scan found {plural(len(secrets), 'secret')} ({places(secrets)})"
    todo = _uncommitted(root, paths)
    if not todo:
        return None, None
    listed = "".join(f"{p}\0" for p in todo)  # any number of paths, any bytes in their names
    spec = ["--pathspec-from-file=-", "--pathspec-file-nul"]
    run_git(["add", *spec], root, input=listed, env=LITERAL)
    # The paths only: whatever else the person had staged stays staged, uncommitted.
    run_git([*fallback_identity(root), "commit", "-q", "--no-verify", "-m", COMMIT_MESSAGE, *spec], root,
            input=listed, env=LITERAL)
    return run_git(["rev-parse", "HEAD"], root).text.strip(), None


def _uncommitted(root: Path, paths: list[str]) -> list[str]:
    """Of `paths`, those whose content HEAD does not have: new to git or changed since."""
    wanted = set(paths)
    spec = ["--", *(p for p in (CONFIG_NAME, MEMORY_FILE, LOG_DIR) if (root / p).exists())]
    if len(spec) == 1:
        return []
    found = set(run_git(["ls-files", "-z", "--others", "--exclude-standard", *spec], root, env=LITERAL).text.split("\0"))
    if run_git(["rev-parse", "-q", "--verify", "HEAD"], root, check=False).ok:
        changed = run_git(["diff", "--name-only", "-z", "--no-renames", "--relative", "HEAD", *spec], root, env=LITERAL)
    else:  # no commit yet: whatever is staged is not committed either
        changed = run_git(["ls-files", "-z", "--cached", *spec], root, env=LITERAL)
    found.update(changed.text.split("\0"))
    return sorted(found & wanted)


def _next_steps(report: AdoptReport) -> list[str]:
    steps = []
    if report.secrets:
        what = "the secret" if len(report.secrets) == 1 else f"the {len(report.secrets)} secrets"
        steps.append(f"remove {what} first ({places(report.secrets)}; values not shown) and rotate any that "
                     "was real; a reviewed false positive gets 'memvault: allow-secret' on its line. "
                     "`memvault check` must list no MV5xx error before anything is committed")
    memory = [p for p in report.uncommitted if p != CONFIG_NAME]
    if memory:
        names = " ".join(p for p in (CONFIG_NAME, MEMORY_FILE, LOG_DIR) if (report.root / p).exists())
        steps.append(_commit_step(len(memory), names, bool(report.secrets)))
    if report.gitignore == "suggest":
        steps.append(f"add these lines to .gitignore (memvault did not edit yours): {IGNORE_LINES.strip().replace(chr(10), ' ')}")
    if report.errors:
        steps.append("memvault check lists every problem; legacy ones in committed files never block a commit, new lines "
                     "are held to the rules")
    steps.append("memvault search WORDS  # everything indexed above is searchable now")
    return steps


def _commit_step(count: int, names: str, secrets: bool) -> str:
    """How to commit the memory as its baseline. Skipping the hook is safe only because the scan
    just found no secret; with secrets found, the commit goes through the hook, which scans again."""
    files = plural(count, "memory file")
    if secrets:
        return (f"then commit the {files} with the hook on, which scans them again: git add {names} && "
                f"git commit -m '{COMMIT_MESSAGE}' (it judges every line of a file the commit adds, so it "
                "lists their older problems too)")
    return (f"{files} {'is' if count == 1 else 'are'} not committed yet; the hook would judge every line of a file "
            f"in the commit that adds it. Commit them once as they are (the secret scan found none): "
            f"git add {names} && git commit --no-verify -m '{COMMIT_MESSAGE}'")
