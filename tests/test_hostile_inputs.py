"""Hostile inputs (issue 10, points 5-7): frontmatter that hangs or crashes, regular expressions
that go quadratic on user text, option values that overflow. Each CLI test failed before its fix.

The fuzz part collects every regular expression in memvault (module attributes and literal
`re.*(...)` calls in the source) and runs each over pathological 1 MB inputs under a time bound;
the YAML loader gets the same. The secret scan (memvault/secretscan.py, rewritten for point 12)
is timed through `find_secrets`, the way its anchored helper patterns are used.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import random
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import memvault
from memvault.check.secrets.scan import find_secrets
from memvault.cli import cli
from memvault.entries.codespans import blank_code_spans, code_spans
from memvault.entries.daily import parse_log
from memvault.entries.markdown import inline_tags
from memvault.entries.timeparse import TimeOutOfRange, parse_time
from memvault.entries.yamlsafe import MAX_CHARS, FrontmatterError, load_frontmatter

from .helpers_check import commit, git, git_repo, run_memvault, write_vault

N = 1_000_000  # the size of each pathological input
BOUND = 1.0  # seconds of CPU each may take
PACKAGE = Path(memvault.__file__).parent


def crashed(result) -> bool:
    """A traceback rather than an exit: click's runner keeps the exception."""
    return result.exception is not None and not isinstance(result.exception, SystemExit)


# ------------------------------------------------------------------ 5. frontmatter


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines)


GOOD_LOG = "# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n"


def bad_log(frontmatter: str) -> str:
    return f"---\n{frontmatter}\n---\n# 2026-02-22\n\n## 10:00 - Decision\nDeploy on Monday\n"


BAD_FRONTMATTER = [
    pytest.param(billion_laughs(), 3, "uses the YAML alias *a0", id="alias-bomb"),
    pytest.param("tags: &a [*a]", 2, "uses the YAML alias *a", id="recursive-list"),
    pytest.param("x: &a {k: *a}", 2, "uses the YAML alias *a", id="recursive-map"),
    pytest.param("title: t\ndate: 2026-02-30", 3, "'2026-02-30', which is not a real date", id="feb-30"),
    pytest.param("importance: " + "9" * 5000, 2, "integer '99999999999999999999...' of 5000 characters", id="5000-digits"),
    pytest.param("a: " + "[" * 40 + "]" * 40, 2, "nests deeper than 16 levels", id="deep"),
]


@pytest.mark.parametrize("frontmatter, line, says", BAD_FRONTMATTER)
def test_bad_frontmatter_is_a_problem_of_its_file_and_every_command_works(runner, vault_dir, frontmatter, line, says):
    # Before: the bomb ran `index`/`check` past 300 s and 3.9 GB; the recursive aliases raised
    # RecursionError and the bad date and the long integer ValueError, in every command.
    write_vault(vault_dir, {"memory/2026-02-21.md": GOOD_LOG, "memory/2026-02-22.md": bad_log(frontmatter)})
    started = time.monotonic()
    check = runner.invoke(cli, ["check"])
    assert check.exit_code == 1 and not crashed(check), check.output
    assert f"memory/2026-02-22.md:{line}:1: MV101 error: frontmatter " in check.output
    assert says in check.output
    for args in (["index"], ["search", "Monday"], ["list"], ["status"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and not crashed(result), (args, result.output)
    listed = runner.invoke(cli, ["list"]).output
    assert "User likes tea" in listed and "Deploy on Monday" in listed  # the bad file's entries still read
    assert "memory/2026-02-22.md#L" in runner.invoke(cli, ["search", "Monday"]).output
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("frontmatter", ["x: &a {k: *a}", "date: 2026-02-30", "n: " + "7" * 5000])
def test_bad_frontmatter_in_memory_md_is_reported_and_status_works(runner, vault_dir, frontmatter):
    write_vault(vault_dir, {
        "memory/2026-02-21.md": GOOD_LOG,
        "MEMORY.md": f"---\n{frontmatter}\n---\n# Memory\n\n## Beliefs\n- User likes green tea\n",
    })
    for args in (["status"], ["index"], ["status"], ["search", "green"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and not crashed(result), (args, result.output)
    check = runner.invoke(cli, ["check"])
    assert check.exit_code == 1 and "MEMORY.md:2:1: MV101 error: frontmatter" in check.output


def test_log_onto_a_day_with_bad_frontmatter_is_refused_not_a_crash(runner, vault_dir):
    # Once a ValueError; then appended, and the hook refused the next commit of the file (MV101)
    # with the new entry in it: now refused before anything is written (issue 14).
    write_vault(vault_dir, {"memory/2026-02-22.md": bad_log("date: 2026-02-30")})
    before = (vault_dir / "memory" / "2026-02-22.md").read_bytes()
    result = runner.invoke(cli, ["log", "--at", "2026-02-22 11:00", "Second thought"])
    assert result.exit_code == 1 and not crashed(result), result.output
    assert "memory/2026-02-22.md:2: frontmatter" in result.output and "MV101" in result.output
    assert (vault_dir / "memory" / "2026-02-22.md").read_bytes() == before


def test_the_hook_refuses_only_the_commit_of_the_bad_file(tmp_path: Path):
    # Before: the ValueError was raised in the hook too, which then refused every commit.
    repo = git_repo(tmp_path / "v", {"memory/2026-02-21.md": GOOD_LOG})
    assert run_memvault(repo, "hook", "install").returncode == 0
    (repo / "memory" / "2026-02-22.md").write_text(bad_log("date: 2026-02-30"))
    git(repo, "add", "-A")
    refused = commit(repo)
    assert refused.returncode != 0
    assert "memory/2026-02-22.md:2:1: MV101 error: frontmatter has '2026-02-30'" in refused.stdout + refused.stderr
    git(repo, "commit", "-q", "--no-verify", "-m", "bad file, reviewed")
    (repo / "memory" / "2026-02-23.md").write_text("# 2026-02-23\n\n## 09:00 - Observation\nA later day\n")
    git(repo, "add", "-A")
    later = commit(repo)
    assert later.returncode == 0, later.stdout + later.stderr


def test_numbers_and_dates_in_entries_and_file_names_are_problems_not_crashes(runner, vault_dir):
    # A 5000-digit value, and times Python cannot convert between zones (year 0 or 10000).
    write_vault(vault_dir, {
        "memvault.toml": '[vault]\ntimezone = "Pacific/Pago_Pago"\n',
        "memory/2026-02-21.md": (
            "# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\nImportance: " + "9" * 5000 + "\n\n"
            "## 10:00 - Belief\nUser likes coffee\nConfidence: " + "9" * 5000 + "\n\n"
            "## 11:00 - Belief\nUser likes water\nExpires: 9999-12-31T23:59-12:00\n\n"
            "## 12:00 - Belief\nUser likes juice\nExpires: 0001-01-01T00:00+14:00\n"
        ),
        "memory/0001-01-01.md": "# 0001-01-01\n\n## 00:00 - Belief\nAncient tea\n",
        "memory/9999-12-31.md": "# 9999-12-31\n\n## 23:59 - Belief\nFuture tea\n",
        "MEMORY.md": "# Memory\n\n## Beliefs\n- Tea at noon (updated 0001-01-01)\n",
    })
    for args in (["index"], ["search", "tea"], ["search", "water"], ["asof", "now", "juice"], ["list", "--all"], ["status"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and not crashed(result), (args, result.output)
    check = runner.invoke(cli, ["check"])
    assert not crashed(check), check.output
    for expected in (
        "memory/2026-02-21.md:5:1: MV203 error: Importance:", "memory/2026-02-21.md:9:1: MV202 error: Confidence:",
        "memory/2026-02-21.md:13:1: MV204 error: Expires: '9999-12-31T23:59-12:00'",
        "memory/2026-02-21.md:17:1: MV204 error: Expires: '0001-01-01T00:00+14:00'",
        "memory/0001-01-01.md:1:1: MV001 error", "memory/9999-12-31.md:1:1: MV001 error",
        "MEMORY.md:4:1: MV301 error: bad date '0001-01-01'",
    ):
        assert expected in check.output, (expected, check.output)


@pytest.mark.parametrize("extra, says", [("x = " + "9" * 5000, "Exceeds the limit"), ("x = " + "[" * 5000, "nested too deeply")])
def test_a_toml_value_tomllib_cannot_hold_is_a_config_error(runner, vault_dir, extra, says):
    # Before: ValueError / RecursionError tracebacks from every command.
    write_vault(vault_dir, {"memvault.toml": '[vault]\ntimezone = "UTC"\n' + extra + "\n", "memory/2026-02-21.md": GOOD_LOG})
    result = runner.invoke(cli, ["list"])
    assert result.exit_code == 1 and not crashed(result), result.output
    assert "memvault.toml: " in result.output and says in result.output and "sys." not in result.output


# ------------------------------------------------------------------ 5. the YAML loader, fuzzed


def _nested_block(levels: int) -> str:
    return "\n".join(" " * i + f"k{i}:" for i in range(levels)) + " v"


def yaml_inputs(size: int) -> dict[str, str]:
    def fill(prefix: str, unit: str, suffix: str = "") -> str:
        return prefix + unit * max(1, (size - len(prefix) - len(suffix)) // len(unit)) + suffix

    def lines(line: Callable[[int], str]) -> str:
        return "\n".join(line(i) for i in range(size // 6))[:size].rpartition("\n")[0]

    return {
        "plain-scalar": fill("a: ", "x"),
        "spaces-in-scalar": fill("a: x", " ", "y"),
        "flow-open": fill("a: ", "["),
        "flow-map-open": fill("a: ", "{"),
        "block-seq": fill("", "- "),
        "many-anchors": lines(lambda i: f"k{i}: &a{i} v"),
        "many-keys": lines(lambda i: f"k{i}: v"),
        "quoted-escapes": fill('a: "', "\\u0041", '"'),
        "single-quotes": fill("a: '", "''", "'"),
        "long-int": fill("a: ", "9"),
        "sexagesimal": fill("a: 1", ":59"),
        "long-float": fill("a: 1.", "5"),
        "block-scalar": fill("a: |\n", "  text line\n"),
        "indent-levels": _nested_block(int((2 * size) ** 0.5)),
        "complex-keys": fill("", "? [a]\n: b\n"),
        "dates": fill("", "d: 2026-02-30\n"),
        "aliases": "a: &x v\n" + fill("", "b: *x\n"),
    }


YAML_CASES = [(f"{name}-{label}", text) for label, size in (("1MB", N), ("under-limit", MAX_CHARS - 100))
              for name, text in yaml_inputs(size).items()]


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail fast instead of hanging: SIGALRM interrupts a regex or a parse (both check signals)."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cpu_seconds(work: Callable[[], object]) -> float:
    with time_limit(3 * BOUND):  # wall-clock, so with room for a busy machine
        started = time.process_time()
        work()
        return time.process_time() - started


# Under the size limit these are read as YAML; the rest of them load.
REFUSED = {"flow-open", "flow-map-open", "block-seq", "long-int", "sexagesimal", "long-float",
           "indent-levels", "complex-keys", "dates", "aliases"}


@pytest.mark.parametrize("name, text", YAML_CASES, ids=[c[0] for c in YAML_CASES])
def test_yaml_loader_finishes_on_pathological_input(name, text):
    outcome: list[object] = []

    def load() -> None:
        try:
            outcome.append(load_frontmatter(text))
        except FrontmatterError as exc:
            outcome.append(exc)

    assert cpu_seconds(load) < BOUND
    refused = isinstance(outcome[0], FrontmatterError)
    assert refused == (name.endswith("-1MB") or name.removesuffix("-under-limit") in REFUSED), outcome[0]


def test_a_1mb_frontmatter_block_is_refused_without_being_parsed(runner, vault_dir):
    write_vault(vault_dir, {"memory/2026-02-22.md": bad_log("a: " + "[" * N)})
    started = time.monotonic()
    check = runner.invoke(cli, ["check"])
    assert "memory/2026-02-22.md:2:1: MV101 error: frontmatter is longer than 64 KiB" in check.output
    assert time.monotonic() - started < 10


# ------------------------------------------------------------------ 6. linear-time regular expressions


def _random_text(alphabet: str, size: int, seed: str) -> str:
    """`size` characters drawn from `alphabet`, the same for the same seed (fast: no Python loop)."""
    table = {i: alphabet[i % len(alphabet)] for i in range(256)}
    return random.Random(seed).randbytes(size).decode("latin-1").translate(table)


def _hex(size: int) -> str:
    return _random_text("0123456789abcdef", size, "hex")


def test_tags_in_a_long_hex_dump_and_hyphen_run_parse_in_linear_time(runner, vault_dir):
    # Before: URL_RE rescanned the run from each position: a 200 kB hex dump plus #debug took
    # 22.6 s, `#` + `a-` x 200,000 past 120 s; lines with long runs of spaces, or backticks,
    # were quadratic (20,000 spaces 2.5 s) or worse (1,000 backticks 12 s) too.
    write_vault(vault_dir, {
        "memory/2026-02-21.md": "# 2026-02-21\n\n## 09:00 - Observation\n#debug " + _hex(200_000) + "\n",
        "memory/2026-02-22.md": "# 2026-02-22\n\n## 09:00 - Observation\nx #" + "a-" * 200_000 + "\n",
        "memory/2026-02-23.md": "# 2026-02-23  " + " " * 100_000 + "x\n\n## 09:00 - Observation" + " " * 100_000
        + "x\nsee a " + "`" * 5_000 + " #inside\nSource: a" + " " * 100_000 + "b\n",
    })
    started = time.monotonic()
    for args in (["check"], ["index"], ["search", "debug"], ["list", "--tag", "debug"]):
        result = runner.invoke(cli, args)
        assert not crashed(result), (args, result.output)
    assert time.monotonic() - started < 30
    assert "2026-02-21T09:00" in runner.invoke(cli, ["list", "--tag", "debug"]).output


def _literal_patterns() -> Iterator[tuple[str, re.Pattern]]:
    """Literal patterns of `re.<fn>("...")` calls anywhere in memvault's source."""
    funcs = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in funcs and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            flags = 0
            flag_nodes = [k.value for k in node.keywords if k.arg == "flags"]
            if node.func.attr == "compile" and len(node.args) > 1:
                flag_nodes.append(node.args[1])
            for flag in flag_nodes:
                flags |= eval(compile(ast.Expression(flag), str(path), "eval"), {"re": re})  # noqa: S307 - our source
            yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", re.compile(node.args[0].value, flags)


def collect_patterns() -> dict[tuple, tuple[str, set[str], re.Pattern]]:
    """Every regular expression in memvault but the secret scan's: (pattern, flags) -> (label,
    names it is bound to, compiled). Module attributes catch patterns built at import time."""
    found: dict[tuple, tuple[str, set[str], re.Pattern]] = {}
    for info in pkgutil.walk_packages(memvault.__path__, "memvault."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                key = (value.pattern, value.flags)
                found.setdefault(key, (f"{info.name}.{name}", set(), value))[1].add(name)
    for label, pattern in _literal_patterns():
        found.setdefault((pattern.pattern, pattern.flags), (label, set(), pattern))
    return {k: v for k, v in found.items() if "secretscan" not in v[0]}


# Prefixes that lead a pattern into the part of it a long run could stall (most are anchored or
# need a literal first); every pattern also gets the bodies alone.
SEEDS: dict[str, tuple[str, ...]] = {
    "TITLE_RE": ("# a",), "H2_RE": ("## a",), "META_RE": ("source: a", "Confidence:"),
    "ENTRY_RE": ("10:00 - Observation", "10:00 "), "HEADING_RE": ("## a", "###### "),
    "ATTEMPT_TIME_RE": ("10:00 ", "9 am", "10.00-"), "ATTEMPT_DASH_RE": (" - a", "a — "),
    "_TEXT_DAY_RE": ("2026-01-01",), "_RULE_RE": ("---", "- - -"), "LEAD_TIME_RE": ("**10:00", "[x] 10:00 ", "2:30 p"),
    "LOOSE_HEADING_RE": ("## 10:00 - Observation", " ##10:00 "), "BULLET_RE": ("- a", "  1. "),
    "FENCE_RE": ("```", "   ~~~"), "MARKER_RE": ("<!-- memvault: curated 2026", "memvault-hook v"),
    "LIST_MARK_RE": ("- ", " 1."), "ID_SPACE_RE": ("2026-01-01 10:00",), "DEFAULT_ID_RE": ("2026-01-01T10:00",),
    "LINK_RE": ("[[a", "[[a|"), "HEAD_RE": ("## ",), "REVISION_RE": ("a", "HEAD~"), "LOG_NAME_RE": ("2026-01-01",),
    "AGO_RE": ("3", "3 days"), "DAYS_AGO_AT_RE": ("3 days ago at ", "3"), "CLOCK_RE": ("10:00 ", "10"),
    "META_LINE_RE": ("source",), "ANNOTATION_RE": ("(updated 2026-01-01, was: ",), "SOURCE_ANN_RE": ("(sources: ",),
    "MARK_RE": ("**",), "BLOCK_ID_RE": (" ^a",), "TAG_RE": (" #a", " #1"), "HASHTAG_RE": (" #a",),
    "WIKILINK_RE": ("[[a",), "LINK_ALIAS_RE": ("[[a",), "FIELD_RE": ("tag:",), "URL_RE": ("#", "http"),
    "LOST_HEADING_RE": ("\n ##", "\n##1"), "NEGATION_RE": ("no",), "WORD_RE": ("a'",),
    "HEAD_DATE_RE": ("**2026-01-01", "2026-01-01**", "Jan", "January 1", "1. Januar", "1.1.2026", "2026\u5e741\u6708"),
    "ANY_TIME_RE": ("(10:00", "10:00 "), "RANGE_END_RE": (" - 10:00", "-10:00 ", " to "),
    "STAMP_RE": ("2026-01-01T10:00", "[2026-01-01 10:00:00.", "2026-01-01 "), "YEAR_RE": ("1",),
    "PLACE_RE": ("memory/a.md#L1-", "a.md:1:"),
}


def _fill(prefix: str, unit: str, suffix: str = "") -> str:
    return prefix + unit * ((N - len(prefix) - len(suffix)) // len(unit) + 1) + suffix


BODIES: dict[str, Callable[[], str]] = {  # built on use (and once: see _body)
    "letters": lambda: _fill("", "a"),
    "blanks": lambda: _fill("", " ", "x"),
    "spaces-in-line": lambda: _fill("a", " ", "b"),
    "tabs-and-spaces": lambda: _fill("a", "\t ", "b"),
    "hyphenated": lambda: _fill("", "a-"),
    "scheme-run": lambda: _fill("", "a-", " ://"),
    "hexdump": lambda: "#debug " + _hex(N),
    "backticks": lambda: _fill("", "`"),
    "digits": lambda: _fill("", "1", ":"),
    "wikilink": lambda: _fill("[[", "a|"),
    "parens": lambda: _fill("", "(a"),
    "stars": lambda: _fill("", "*"),
    "heading-lines": lambda: _fill("", "## 1\n"),
}
@functools.cache
def _body(name: str) -> str:
    return BODIES[name]()


FAST_BODIES = ("blanks", "spaces-in-line", "hyphenated", "mix")


def _mix(pattern: re.Pattern, lines: bool) -> str:
    """Random text over the pattern's own punctuation and a few letters: its likeliest stall."""
    source = pattern.pattern if isinstance(pattern.pattern, str) else pattern.pattern.decode("latin-1")
    alphabet = {c for c in source if c.isprintable() and not c.isalnum()} | set("a1 ") | ({"\n"} if lines else set())
    return _random_text("".join(sorted(alphabet)), N, source)


def _inputs(pattern: re.Pattern, names: set[str], bodies: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    seeds = ("",) + tuple(s for name in sorted(names) for s in SEEDS.get(name, ()))
    for body in bodies:
        text = _mix(pattern, lines=False) if body == "mix" else _mix(pattern, lines=True) if body == "mix-lines" else _body(body)
        for seed in dict.fromkeys(seeds):
            yield f"{seed!r}+{body}", seed + text


PATTERNS = sorted(collect_patterns().values(), key=lambda p: p[0])


def _assert_linear(pattern: re.Pattern, names: set[str], bodies: tuple[str, ...], size: int = N) -> None:
    slow = []
    for label, text in _inputs(pattern, names, bodies):
        text = text[:size]  # a stall grows at least with the square: a quarter of the input still shows it
        data = text.encode() if isinstance(pattern.pattern, bytes) else text
        try:
            took = cpu_seconds(lambda data=data: sum(1 for _ in pattern.finditer(data)))
        except TimeoutError:
            took = float("inf")
        if took >= BOUND:
            slow.append(f"{label}: {took:.2f} s")
    assert not slow, f"{pattern.pattern!r} is slow on: {slow}"


@pytest.mark.parametrize("label, names, pattern", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_regex_is_linear_on_hostile_input(label, names, pattern):
    _assert_linear(pattern, names, FAST_BODIES, size=N // 4)  # the slow suite: every body, 1 MB


@pytest.mark.slow
@pytest.mark.parametrize("label, names, pattern", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_regex_is_linear_on_every_hostile_body(label, names, pattern):
    _assert_linear(pattern, names, (*BODIES, "mix", "mix-lines"))


def test_every_regex_is_collected_and_every_seed_names_one():
    collected = collect_patterns()
    labels = {label for label, _, _ in collected.values()}
    assert {"memvault.entries.markdown.URL_RE", "memvault.check.sourcefile.TRAILING_WS_RE", "memvault.entries.timeparse.AGO_RE"} <= labels
    assert any(label.startswith("memvault/curate/proposals.py:") for label in labels)  # an inline re.split(...)
    names = set().union(*(names for _, names, _ in collected.values()))
    assert not set(SEEDS) - names, "seeds for patterns that no longer exist"


@pytest.mark.parametrize("name, text", [
    ("unclosed backticks", "`" * N),
    ("alternating backticks", "`a" * (N // 2)),
    ("growing runs", "".join("`" * (i % 50 + 1) + "a" for i in range(N // 26))),
    ("url run", "#" + "a-" * (N // 2)),
    ("hex dump", "#debug " + _hex(N)),
])
def test_tag_and_code_span_scanning_is_linear(name, text):
    assert cpu_seconds(lambda: (inline_tags(text), code_spans(text))) < BOUND


def test_code_spans_pair_runs_of_equal_length_as_commonmark_does():
    assert code_spans("a `b` c") == [(2, 5)]
    assert code_spans("``a`b`` `c") == [(0, 7)]  # a single backtick inside a double-backtick span
    assert code_spans("`a``b") == []  # no partner of the same length: literal backticks
    assert blank_code_spans("x `#no` #yes ``#no``") == "x   #yes  "
    assert inline_tags("see `#code` and #real, ``#also code``") == ["real"]


def test_a_1mb_entry_parses_in_linear_time():
    from memvault.config.core import Config

    text = "# 2026-02-21\n\n## 09:00 - Observation\n#debug " + _hex(N) + " `" + "a-" * 1000 + "\nSource: a" + " " * 100_000 + "b\n"
    assert cpu_seconds(lambda: parse_log(text, "memory/2026-02-21.md", Config())) < BOUND


SECRET_CASES = [  # the bodies alone by default; after credential words, and the known-slow one, when slow
    pytest.param(seed, body, marks=[pytest.mark.slow] * bool(seed or body == "scheme-run"))
    for seed in ("", "password", "api_key = ", "the password is ") for body in BODIES
]


@pytest.mark.parametrize("seed, body", SECRET_CASES)
def test_secret_scan_is_linear_on_hostile_input(seed, body):
    text = seed + _body(body)
    try:
        took = cpu_seconds(lambda: find_secrets(text))
    except TimeoutError:
        took = float("inf")
    assert took < BOUND


# ------------------------------------------------------------------ 7. option values


@pytest.mark.parametrize("args, option", [
    (["search", "--since", "99999999999 days ago", "tea"], "'--since'"),
    (["asof", "99999999999 days ago"], "'T'"),
    (["search", "--limit", "99999999999999999999", "tea"], "'--limit' / '-n'"),
    (["search", "-n", "9223372036854775807", "tea"], "'--limit' / '-n'"),
    (["asof", "now", "tea", "--limit", "9223372036854775807"], "'--limit'"),
    (["list", "--since", "99999 years ago"], "'--since'"),
    (["list", "--until", "9999-12-31"], "'--until'"),  # the end of that day is past year 9999 in UTC
    (["log", "--at", "99999 years ago", "tea"], "'--at'"),
    (["log", "--expires", "1" + "0" * 5000 + " days ago", "tea"], "'--expires'"),
    (["log", "--confidence", "nan", "tea"], "'--confidence'"),
    (["changes", "--since", "0001-01-01"], "'--since'"),
    (["diff", "2026-01-01", "99999 weeks ago"], "'T2'"),
    (["curate", "--at", "99999 years ago", "--dry-run"], "'--at'"),
    (["index", "--wait", "--timeout", "inf"], "'--timeout'"),
    (["watch", "--debounce", "nan"], "'--debounce'"),
])
def test_out_of_range_option_values_are_usage_errors_naming_the_option(runner, vault_dir, args, option):
    # Before: each ended in an OverflowError traceback (nan passed silently).
    write_vault(vault_dir, {"memory/2026-02-21.md": GOOD_LOG})
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and not crashed(result), result.output
    assert f"Invalid value for {option}" in result.output


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago"])
@pytest.mark.parametrize("when", ["1000-01-01", "9999-12-30", "9999-12-30 23:59"])
def test_times_at_the_ends_of_the_range_work_in_every_command(runner, vault_dir, zone, when):
    write_vault(vault_dir, {"memvault.toml": f'[vault]\ntimezone = "{zone}"\n', "memory/2026-02-21.md": GOOD_LOG})
    for args in (
        ["list", "--since", when], ["list", "--until", when], ["search", "--until", when, "tea"],
        ["asof", when], ["asof", when, "tea"], ["curate", "--at", when, "--dry-run"], ["log", "--at", when, "--future", "x"],
        ["log", "--expires", when, "y"], ["list", "--all"], ["search", "x"],
    ):
        result = runner.invoke(cli, args)
        # An expiry before now is refused (the entry would never be live), as a usage error.
        refused = args[1] == "--expires" and when.startswith("1000") and "would never be live" in result.output
        assert (result.exit_code in (0, 1) or refused) and not crashed(result), (args, result.output)


def test_time_range_in_the_library():
    from datetime import UTC

    for text in ("99999999999 days ago", "1" + "0" * 5000 + " days ago 10:00", "9999-12-31T23:00-12:00", "0999-12-31"):
        with pytest.raises(TimeOutOfRange):
            parse_time(text, UTC)
    assert parse_time("9999-12-30", UTC, day_end=True).year == 9999
