"""Issue 10, point 12: the secret scan on a corpus of 150+ secrets and 150+ hard negatives.

The corpus (tests/data/secrets/positives.txt, negatives.txt) is synthetic: every random part
is generated at test time. Recall and false-positive rate are asserted here and printed by
bench/bench_secrets.py. The forms the issue listed are reproduced through `log`, `check` and
the pre-commit hook; every scan regex is timed on 1 MB pathological inputs.
"""

from __future__ import annotations

import json
import re
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from memvault.check.secrets import (
    cli as secretcli,
)
from memvault.check.secrets import (
    patterns as secretpatterns,
)
from memvault.check.secrets import (
    scan as secretscan,
)
from memvault.check.secrets import (
    seed as secretseed,
)
from memvault.check.secrets import (
    shapes as secretshapes,
)
from memvault.check.secrets import (
    values as secretvalues,
)
from memvault.check.secrets import (
    words as secretwords,
)
from memvault.check.secrets.scan import INVISIBLE_RE, find_secrets, scan_secrets
from memvault.cli import cli

from .helpers_check import commit, git, git_repo, run_memvault
from .helpers_secrets import corpus, corpus_with_fills, expand, expand_with_fills

POSITIVES = corpus("positives.txt")
NEGATIVES = corpus("negatives.txt")

# The forms issue 10 found passing `log`, `check` and the hook alike (synthetic values).
ISSUE_FORMS = [
    "postgres://user:pass@host",
    "aws secret access key {{b64:40}}",
    "{{dash}}begin rsa private key{{dash}}",
    "MIIEowIBAAKCAQEA{{b64:60}}",
    "the password for prod is hunter2",
    "machine api.internal login ana password hunter2",
    "DB_PASS=hunter2!",
    "wifi pw: Tr0ub4dor&3",
    "sshpass -p '{{rand:12}}' ssh root@10.0.0.1",
    "mysql -u root -p{{rand:12}} atlas",
    "card PIN is 4821",
    "CVV 123",
    "redis://:{{rand:32}}@cache.internal:6379",
    "the deploy token is {{rand:26}}",
    "API key {{rand:32}}",
    "webhook secret {{hex:64}}",
    "alerts bot {{digits:10}}:AA{{b64url:33}}",
    "https://discord.com/api/webhooks/{{digits:18}}/{{b64url:68}}",
    "twilio SK{{hex:32}}",
    "ghp_{{rand:18}}\\u200b{{rand:18}}",
]
FORMS = [expand(t, n) for n, t in enumerate(ISSUE_FORMS, 1)]


def rates() -> tuple[float, float, list[str], list[str]]:
    missed = [f"{case} {cat}: {text[:80]!r}" for case, cat, text in POSITIVES if not find_secrets(text)]
    flagged = [f"{case} {cat}: {text[:80]!r}" for case, cat, text in NEGATIVES if find_secrets(text)]
    return 1 - len(missed) / len(POSITIVES), len(flagged) / len(NEGATIVES), missed, flagged


def test_corpus_is_large_and_varied():
    assert len(POSITIVES) >= 150 and len(NEGATIVES) >= 150
    assert {"provider", "key", "url", "assign", "prose", "prose-de", "cli", "pin", "hidden"} <= {c for _, c, _ in POSITIVES}
    assert {"prose", "prose-de", "config", "url", "shell", "code", "hash", "data", "id", "address", "env"} <= {
        c for _, c, _ in NEGATIVES}


# Issue 12: secrets the scan is known to miss (docs/security.md, "What it misses").
KNOWN_MISSES = ("correct horse battery staple",)


def test_every_secret_is_caught_and_no_negative_flagged():
    """Issue 12 kept recall while cutting false alarms: the whole corpus, not a rate."""
    _, _, missed, flagged = rates()
    assert [m for m in missed if not any(k in m for k in KNOWN_MISSES)] == []
    assert flagged == []


def test_recall_and_false_positive_rate_meet_the_goal():
    recall, fp_rate, missed, flagged = rates()
    assert recall >= 0.95, "missed:\n" + "\n".join(missed)
    assert fp_rate <= 0.02, "flagged:\n" + "\n".join(flagged)


def test_findings_never_echo_a_corpus_value():
    for case, _, text, fills in corpus_with_fills("positives.txt"):
        for hit in find_secrets(text):
            for part in (f for f in fills if len(f) >= 6):
                assert part not in hit.message() + hit.kind, f"{case} echoes its value"


# ------------------------------------------------------------------ the issue's forms, through the CLI


@pytest.mark.parametrize("text", FORMS, ids=[f"form{n}" for n in range(1, len(FORMS) + 1)])
def test_log_refuses_each_form_the_issue_listed(text: str, runner, vault_dir: Path):
    assert runner.invoke(cli, ["init", str(vault_dir / "v"), "--no-git"]).exit_code == 0
    result = runner.invoke(cli, ["--vault", str(vault_dir / "v"), "log", "--", text])
    assert result.exit_code == 1, result.output
    assert "refusing to write the new entry" in result.output and "value not shown" in result.output
    assert not list((vault_dir / "v" / "memory").rglob("*.md"))


def _log_file(forms: list[str]) -> str:
    entries = "".join(f"\n## 09:{n:02d} - Observation\n{text}\n" for n, text in enumerate(forms))
    return "# 2026-02-21\n" + entries


def _form_lines() -> list[int]:
    """Line number of each form in _log_file(FORMS): title, then blank/heading/text per entry."""
    return [4 + 3 * n for n in range(len(FORMS))]


def test_check_reports_every_form_and_never_the_value(runner, vault_dir: Path):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text(_log_file(FORMS), encoding="utf-8")
    result = runner.invoke(cli, ["check", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    flagged = {p["line"] for p in data["problems"] if p["code"].startswith("MV5") and p["severity"] == "error"}
    assert flagged == set(_form_lines())
    for n, template in enumerate(ISSUE_FORMS, 1):
        for part in expand_with_fills(template, n)[1]:
            assert len(part) < 8 or part not in result.output


def test_the_hook_refuses_a_commit_holding_the_forms(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memvault.toml": '[vault]\ntimezone = "UTC"\n'})
    assert run_memvault(repo, "hook", "install").returncode == 0
    (repo / "memory").mkdir()
    (repo / "memory" / "2026-02-21.md").write_text(_log_file(FORMS), encoding="utf-8")
    git(repo, "add", "-A")
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    for line in _form_lines():
        assert re.search(rf"memory/2026-02-21\.md:{line}:\d+: MV5\d\d error", out), (line, out)


# ------------------------------------------------------------------ invisible characters


def test_every_unicode_format_character_is_removed_before_scanning():
    missing = [f"U+{cp:04X}" for cp in range(sys.maxunicode + 1)
               if unicodedata.category(chr(cp)) == "Cf" and not INVISIBLE_RE.match(chr(cp))]
    assert missing == []


def test_a_token_split_by_invisible_characters_is_found_at_its_real_column():
    token = expand("ghp_{{rand:36}}", 7)
    hidden = token[:10] + "\u200b\u2060" + token[10:20] + "\u00ad" + token[20:]
    text = f"first line\n\u200bsee {hidden} here\n"
    (hit,) = find_secrets(text)
    assert (hit.line, hit.col, hit.code) == (2, 6, "MV503")
    assert not find_secrets("plain\u200bwords\u2060 with\u00ad soft hyphens")


# ------------------------------------------------------------------ linear time

ATOMS = ["a", "A1", "-", " ", ":", "=", "/", "0", "a=", "a:", "@", "a://a:b@", "password ", "password=",
         "PIN: ", "key is ", "cvv ", "the password for ", "sshpass -p x ", "--password x ", "\u200b", "a\u200b",
         "-----BEGIN ", "MII", "$1$", "host:5432:a:b:", "<password>", "eyJa.", "xoxb-", "AAAAAAAAAAAAAAA ",
         # issue 12: values before their word, table cells, seed phrases, public names and shapes
         "hunter2 is the wifi password ", "x1! (the token) ", "| password | ", "seed phrase: ", "seed abandon ",
         "abandon ", "post_id: ", "a:b:", "0x", "feature/", "uploads/a.png ", "Zugang X: ",
         # the QA pass: test verdicts, keys shortened with an ellipsis
         "\u2713 PASS: ACL-Check: ", "PASS: ", "- PASS: T3-lint ", "key: sk-proj-abc\u2026 ", "token sk-..."]
MB = 1_000_000


def _fill(unit: str, size: int = MB) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _regexes() -> list[tuple[str, re.Pattern[str]]]:
    out = [(f"PATTERNS[{i}] {p.kind}", p.regex) for i, p in enumerate(secretpatterns.PATTERNS)]
    for mod in (secretscan, secretpatterns, secretwords, secretvalues, secretcli, secretshapes, secretseed):
        out += [(f"{mod.__name__.split('.')[-1]}.{name}", value) for name, value in vars(mod).items()
                if isinstance(value, re.Pattern)]
    return out


def _inputs_for(regex: re.Pattern[str], size: int = MB) -> list[str]:
    """Runs of each character class the scan cares about, and the regex's own literals repeated."""
    units = ["a", "A1", "-", " ", "=", ":", "/", "0", "a:b@", "\u200b"]
    literals = re.findall(r"[A-Za-z0-9_~.:/@$-]{2,}", re.sub(r"\\.|\[[^\]]*\]|\{[\d,]+\}|\(\?[^:]", " ", regex.pattern))
    for lit in literals[:4]:
        units += [lit, lit + "a", lit[:-1]]
    return [_fill(u, size) for u in dict.fromkeys(units) if u]


def _each_linear(name: str, regex: re.Pattern[str], size: int, bound: float) -> None:
    for text in _inputs_for(regex, size):
        start = time.process_time()  # CPU time: a machine busy with other work does not count
        regex.findall(text)  # every match, iterated in C
        elapsed = time.process_time() - start
        assert elapsed < bound, f"{name}: {elapsed:.2f} s on {size // 1000} kB of {text[:20]!r}"


@pytest.mark.parametrize(("name", "regex"), _regexes(), ids=[n for n, _ in _regexes()])
def test_each_scan_regex_is_linear_on_256kb_pathological_input(name: str, regex: re.Pattern[str]):
    # a stall grows at least with the square of the input: on a quarter of it, it still takes seconds
    _each_linear(name, regex, MB // 4, 0.5)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "regex"), _regexes(), ids=[n for n, _ in _regexes()])
def test_each_scan_regex_is_linear_on_1mb_pathological_input(name: str, regex: re.Pattern[str]):
    _each_linear(name, regex, MB, 1.0)


def _timed(text: str) -> float:
    start = time.process_time()
    scan_secrets(text)
    return time.process_time() - start


@pytest.mark.parametrize("unit", ATOMS, ids=[repr(a) for a in ATOMS])
def test_the_whole_scan_is_linear_on_pathological_input(unit: str):
    _whole_scan_linear(unit, MB // 4)


@pytest.mark.slow
@pytest.mark.parametrize("unit", ATOMS, ids=[repr(a) for a in ATOMS])
def test_the_whole_scan_is_linear_on_1mb_of_pathological_input(unit: str):
    _whole_scan_linear(unit, MB)


def _whole_scan_linear(unit: str, size: int) -> None:
    """A quadratic step shows as 16x from a quarter of the size to all of it; linear is 4x (5 s
    allows a loaded machine)."""
    small, big = _fill(unit, size // 4), _fill(unit, size)
    t_small, t_big = _timed(small), _timed(big)
    if t_big >= 10 * max(t_small, 0.02):  # one scheduling hiccup on a busy machine is no quadratic step:
        t_small, t_big = min(_timed(small) for _ in range(3)), min(_timed(big) for _ in range(3))  # best of 3
    assert t_big < 5.0, f"{t_big:.2f} s"
    assert t_big < 10 * max(t_small, 0.02), f"{size // 4000} kB {t_small:.3f} s, {size // 1000} kB {t_big:.3f} s"
