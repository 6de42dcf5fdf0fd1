"""The check rules' registry: every code, its severity and title, and which ones are turned off.

Every rule has a stable code, listed in `RULES` and documented in `docs/checks.md`. This
module sits below the rules themselves (rules.py, crossfile.py, hidden.py, secrets/) so each
of them can look up a code's severity without importing the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from memvault.config.core import Config
from memvault.entries.model import Problem, Severity


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: Severity
    title: str
    fixable: bool = False


RULES: dict[str, Rule] = {r.code: r for r in (
    Rule("MV001", "error", "daily log file name is not a real date (or an entry in a file with no date)"),
    Rule("MV002", "warning", "title does not match the file's date", True),
    Rule("MV003", "error", "malformed entry heading (an attempt at '## HH:MM - Type')", True),
    Rule("MV004", "error", "invalid time in an entry heading"),
    Rule("MV005", "error", "unknown entry type"),
    Rule("MV006", "error", "two daily logs for the same date"),
    Rule("MV007", "warning", "daily log has no '# YYYY-MM-DD' title", True),
    Rule("MV008", "warning", "entry heading spacing", True),
    Rule("MV009", "warning", "no blank line before an entry heading", True),
    Rule("MV010", "error", "duplicate id"),
    Rule("MV011", "error", "Supersedes does not resolve or is ambiguous"),
    Rule("MV012", "error", "Reconfirms does not resolve or is ambiguous"),
    Rule("MV013", "error", "supersession cycle or self-supersession"),
    Rule("MV014", "warning", "entry supersedes a later entry"),
    Rule("MV015", "warning", "entries out of time order in a file", True),
    Rule("MV016", "warning", "timestamp in the future"),
    Rule("MV017", "error", "invisible characters in an entry heading, metadata key or Id", True),
    Rule("MV018", "error", "code fence never closed hides entry headings"),
    Rule("MV019", "error", "staged change moves a reference in an unchanged file (--staged)"),
    Rule("MV020", "error", "git conflict markers in a memory file", True),
    Rule("MV021", "warning", "the same entry twice in a file (what git's union merge leaves)", True),
    Rule("MV023", "warning", "a merge kept two versions of an entry, or an id changed meaning (Conflict: line)"),
    Rule("MV024", "warning", "an id names another entry since a merge made without memvault's driver"),
    Rule("MV100", "error", "file or folder cannot be read"),
    Rule("MV101", "error", "frontmatter does not parse"),
    Rule("MV102", "warning", "invalid UTF-8"),
    Rule("MV103", "warning", "very large file"),
    Rule("MV104", "warning", "trailing whitespace", True),
    Rule("MV110", "error", "symbolic link in the vault (never followed)"),
    Rule("MV111", "error", "not a regular file (or not a folder) where the layout needs one"),
    Rule("MV202", "error", "Confidence is not a number between 0 and 1"),
    Rule("MV203", "error", "Importance is not high, medium, low or 0-1"),
    Rule("MV204", "error", "Expires is not an ISO date or date-time"),
    Rule("MV205", "error", "metadata line without a value"),
    Rule("MV206", "warning", "metadata key given twice in one entry"),
    Rule("MV207", "error", "Id contains spaces"),
    Rule("MV208", "warning", "entry expires before it was written"),
    Rule("MV209", "warning", "metadata line inside the entry body"),
    Rule("MV210", "error", "Supersedes or Reconfirms line inside the entry body (read as text)"),
    Rule("MV211", "error", "Review or Reviewed value not understood"),
    Rule("MV212", "error", "Supersedes given twice naming different entries"),
    Rule("MV220", "error", "Forgotten is not a date-time (and optional reason)"),
    Rule("MV221", "error", "Metadata is not a JSON object"),
    Rule("MV222", "warning", "a Forgotten line at the end of an entry that is not a tombstone (read as text)"),
    Rule("MV301", "error", "bad date in a MEMORY.md annotation"),
    Rule("MV303", "warning", "MEMORY.md bullet outside any section"),
    Rule("MV304", "warning", "MEMORY.md over its size budget"),
    Rule("MV305", "warning", "MEMORY.md section heading repeated"),
    Rule("MV306", "warning", "MEMORY.md has no '# ' title"),
    Rule("MV401", "error", "link to a daily log or entry does not resolve"),
    Rule("MV402", "warning", "link to an entry is ambiguous"),
    Rule("MV500", "info", "secret-scan finding on a line marked 'memvault: allow-secret'"),
    Rule("MV501", "error", "private key block"),
    Rule("MV502", "error", "cloud provider credential (AWS, Google Cloud, Azure)"),
    Rule("MV503", "error", "git hosting token (GitHub, GitLab, Bitbucket)"),
    Rule("MV504", "error", "API key of a hosted service"),
    Rule("MV505", "error", "bearer token, basic-auth header or JSON web token"),
    Rule("MV506", "error", "credentials in a URL"),
    Rule("MV507", "error", "credential assigned to a password/token/key name"),
    Rule("MV508", "error", "high-entropy string in an assignment"),
    Rule("MV509", "error", "password or token on a command line"),
    Rule("MV510", "error", "PIN or card security code"),
    Rule("MV511", "error", "wallet seed phrase (recovery words)"),
)}  # fmt: skip

CHECK_DEFAULTS: dict[str, list[str]] = {"disable": []}


def disabled_codes(config: Config) -> frozenset[str]:
    """`[checks] disable = [...]` from memvault.toml; unknown codes are a config error."""
    raw = config.section("checks", CHECK_DEFAULTS).get("disable", [])
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise config.error("checks", "disable", "[checks] disable must be a list of codes like \"MV014\"")
    codes = {c.strip().upper() for c in raw}
    unknown = sorted(codes - RULES.keys())
    if unknown:
        raise config.error("checks", "disable", f"[checks] disable names unknown code(s) {', '.join(unknown)}; "
                           "see `memvault check --list-rules`")
    return frozenset(codes)


def memory_budget(config: Config) -> tuple[int, int]:
    """(chars, lines) from `[curate]`, as curate reads and checks them; 0 means no limit."""
    from memvault.config.curate import Settings

    settings = Settings.from_config(config)
    return settings.budget_chars, settings.budget_lines



def problem(path: str, line: int, code: str, message: str, col: int = 1, severity: Severity | None = None) -> Problem:
    """A Problem with the rule's own severity (unless `severity` overrides it)."""
    return Problem(path, line, message, severity or RULES[code].severity, code, col)
