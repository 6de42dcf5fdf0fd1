"""The secret scan as `check` and the pre-commit hook run it.

Two things beyond `find_secrets`:
- a finding on a line a person marked `memvault: allow-secret` is reported as information
  (MV500), so every use of the escape stays visible;
- `check --staged` scans every staged file under the vault for secrets, whatever its name:
  files memvault does not read as memory (`memory/.hidden/x.md`, `notes.txt`, `data.json`,
  `memvault.toml`) get the secret scan and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from memvault.check.secrets.scan import scan_secrets
from memvault.entries.model import Problem
from memvault.gitio import read_batch

if TYPE_CHECKING:
    from memvault.check.report import CheckReport
    from memvault.check.sources import GitIndex

ALLOWED_CODE = "MV500"
REGULAR_FILE_MODES = {"100644", "100755"}  # not symlinks (120000) or submodules (160000)
BINARY_SNIFF = 8000  # git's own test: a NUL byte in the first 8000 bytes means binary


def secret_problems(path: str, text: str) -> Iterator[Problem]:
    """MV501-MV511 errors for suspected secrets; MV500 information for the ones a person allowed."""
    for hit in scan_secrets(text):
        if hit.allowed:
            yield Problem(path, hit.line, f"a finding of the secret scan ({hit.kind}) is allowed by "
                          "'memvault: allow-secret' on this line; make sure a person reviewed it (value not shown)",
                          "info", ALLOWED_CODE, hit.col)
        else:
            yield Problem(path, hit.line, hit.message() + "; remove it (and rotate it if it was ever committed)",
                          "error", hit.code, hit.col)


def staged_entries(index: GitIndex) -> list[tuple[str, str, str]]:
    """(path, mode, blob id) of every file added, copied, modified, renamed or retyped in the index."""
    out = index._git("diff", "--cached", "--raw", "-z", "--no-abbrev", "--diff-filter=ACMRT", "--relative")
    fields = out.split("\0")
    entries = []
    i = 0
    while i < len(fields) - 1:
        header = fields[i].split()
        if not header or not header[0].startswith(":"):
            i += 1
            continue
        status = header[4]
        path = fields[i + 2] if status[:1] in "RC" else fields[i + 1]
        entries.append((path, header[1], header[3]))
        i += 3 if status[:1] in "RC" else 2
    return entries


def with_other_staged_files(report: CheckReport, index: GitIndex, staged: Iterable[str],
                            disabled: frozenset[str]) -> CheckReport:
    """The staged check's report, with every other staged file under the vault scanned for secrets."""
    if set(staged) <= set(report.files):
        return report  # only memory files are staged: no second git call
    scanned, problems = staged_secret_problems(index, report.files, disabled)
    if scanned:
        report.files = report.files + scanned
        report.secrets_only = len(scanned)
        report.problems = sorted(report.problems + problems, key=lambda p: (p.path, p.line, p.col, p.code))
    return report


def staged_secret_problems(index: GitIndex, skip: Iterable[str], disabled: frozenset[str]) -> tuple[list[str], list[Problem]]:
    """Scan the staged files not in `skip` (those get the full check): (paths scanned, problems)."""
    skip = set(skip)
    todo = [(path, blob) for path, mode, blob in staged_entries(index) if path not in skip and mode in REGULAR_FILE_MODES]
    if not todo:
        return [], []
    scanned: list[str] = []
    problems: list[Problem] = []
    for (path, _), raw in zip(todo, read_batch(index.root, [blob for _, blob in todo]), strict=True):
        if raw is None or b"\0" in raw[:BINARY_SNIFF]:
            continue  # binary (an image, a database): not text a secret could be read from
        scanned.append(path)
        text = raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        problems.extend(p for p in secret_problems(path, text) if p.code not in disabled)
    return scanned, problems
