"""Every rule code: a fixture that fails it and one that passes (tests/data/checks/<CODE>/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memvault.check.registry import RULES
from memvault.check.sourcefile import load_source
from memvault.config.core import Config
from memvault.parsed import BIG_FILE

from .helpers_check import CHECKS, NOW, codes, copy_fixture, run_check, write_vault
from .helpers_secrets import false_positives, true_positives

FIXTURE_CODES = sorted(p.name for p in CHECKS.iterdir() if p.is_dir())
# MV019 is --staged only: tests/test_reference_stability.py
RUNTIME_CODES = {"MV019", "MV024", "MV100", "MV102", "MV103", "MV110"} | {c for c in RULES if c.startswith("MV5")}
ALSO_FAILS = {"MV013": {"MV014"},  # a cycle always has an edge pointing at a later entry
              "MV020": {"MV009"}}  # git writes a marker line right above the heading it holds
DOCS = Path(__file__).parent.parent / "docs" / "checks.md"


def test_every_rule_has_fixtures_or_a_runtime_case():
    assert set(FIXTURE_CODES) | RUNTIME_CODES == set(RULES)
    for code in FIXTURE_CODES:
        assert (CHECKS / code / "bad").is_dir() and (CHECKS / code / "good").is_dir(), code


def test_every_code_is_documented_with_example_and_fix():
    text = DOCS.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### (MV\d{3})\b.*?\n(.*?)(?=^### |\Z)", text, re.M | re.S))
    assert set(sections) == set(RULES)
    for code, body in sections.items():
        assert "```" in body, f"{code}: no example"
        assert "Fix:" in body, f"{code}: no 'Fix:' line"


@pytest.mark.parametrize("code", FIXTURE_CODES)
def test_bad_fixture_fails_the_rule(code: str, tmp_path: Path):
    report = run_check(copy_fixture(code, "bad", tmp_path / "v"))
    assert code in codes(report)
    assert set(codes(report)) <= {code} | ALSO_FAILS.get(code, set())
    assert all(p.severity == RULES[p.code].severity or p.code in ("MV001", "MV003", "MV008") for p in report.problems)


@pytest.mark.parametrize("code", FIXTURE_CODES)
def test_good_fixture_is_clean(code: str, tmp_path: Path):
    report = run_check(copy_fixture(code, "good", tmp_path / "v"))
    assert report.problems == []


def test_mv100_unreadable_file_is_a_problem_not_a_crash():
    src = load_source("memory/2026-02-21.md", None, Config())
    assert [p.code for p in src.parsed.problems] == ["MV100"]


def test_mv102_invalid_utf8(tmp_path: Path):
    bad = write_vault(tmp_path / "bad", {"memory/2026-02-21.md": b"# 2026-02-21\n\n## 09:00 - Observation\ncaf\xe9\n"})
    good = write_vault(tmp_path / "good", {"memory/2026-02-21.md": "# 2026-02-21\n\n## 09:00 - Observation\ncafé\n"})
    assert codes(run_check(bad)) == ["MV102"]
    assert codes(run_check(good)) == []


def test_mv103_very_large_file():
    raw = b"# 2026-02-21\n\n## 09:00 - Observation\n" + b"x" * (BIG_FILE + 1) + b"\n"
    assert "MV103" in [p.code for p in load_source("memory/2026-02-21.md", raw, Config()).parsed.problems]
    assert load_source("memory/2026-02-21.md", raw[:1000], Config()).parsed.problems == []


SECRET_CODES = sorted(c for c in RULES if c.startswith("MV5") and RULES[c].severity == "error")


@pytest.mark.parametrize("code", SECRET_CODES)
def test_secret_rule_fails_on_a_credential_and_passes_when_marked(code: str, tmp_path: Path):
    text = next(t for _, c, t in true_positives() if c == code)
    entry = f"# 2026-02-21\n\n## 09:00 - Observation\n{text}\n"
    bad = write_vault(tmp_path / "bad", {"memory/2026-02-21.md": entry})
    report = run_check(bad)
    assert code in codes(report)
    hit = next(p for p in report.problems if p.code == code)
    assert hit.severity == "error" and hit.line >= 4
    marked = "\n".join(f"{line} <!-- memvault: allow-secret -->" if line.strip() else line for line in text.split("\n"))
    good = write_vault(tmp_path / "good", {"memory/2026-02-21.md": f"# 2026-02-21\n\n## 09:00 - Observation\n{marked}\n"})
    report = run_check(good)
    assert report.errors == 0 and "MV500" in codes(report)  # allowed, and shown as information
    assert {p.severity for p in report.problems} == {"info"}


def test_secret_false_positives_pass_a_whole_check(tmp_path: Path):
    body = "\n".join(t for _, t in false_positives())
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": f"# 2026-02-21\n\n## 09:00 - Observation\n{body}\n"})
    assert not [p for p in run_check(vault).problems if p.code.startswith("MV5") and p.severity != "info"]


def test_disabled_rule_is_not_reported(tmp_path: Path):
    vault = copy_fixture("MV014", "bad", tmp_path / "v")
    assert "MV014" in codes(run_check(vault))
    (vault / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n\n[checks]\ndisable = ["MV014"]\n')
    assert "MV014" not in codes(run_check(vault))


def test_unknown_code_in_disable_is_a_config_error(tmp_path: Path):
    from memvault.errors import ConfigError

    vault = write_vault(tmp_path / "v", {"memvault.toml": '[checks]\ndisable = ["MV999"]\n'})
    with pytest.raises(ConfigError, match="MV999"):
        run_check(vault)


def test_future_rule_uses_now(tmp_path: Path):
    vault = write_vault(tmp_path / "v", {"memory/2026-03-01.md": "# 2026-03-01\n\n## 12:03 - Observation\nsoon\n\n## 12:30 - Observation\nlater\n"})
    report = run_check(vault)
    assert [(p.code, p.line) for p in report.problems] == [("MV016", 6)]
    assert NOW.hour == 12


def test_cycle_is_reported_on_every_member_with_the_loop(tmp_path: Path):
    report = run_check(copy_fixture("MV013", "bad", tmp_path / "v"))
    cycle = [p for p in report.problems if p.code == "MV013"]
    assert [p.line for p in cycle] == [3, 8]
    assert all("b2 -> b1 -> b2" in p.message for p in cycle)


def test_unresolved_reference_lists_candidates(tmp_path: Path):
    vault = write_vault(tmp_path / "v", {"memory/2026-02-21.md": (
        "# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n\n## 09:00:30 - Belief\nUser likes coffee\n\n"
        "## 10:00 - Correction\nNeither\nSupersedes: [[2026-02-21#09:00]]\n")})
    problem = next(p for p in run_check(vault).problems if p.code == "MV011")
    assert "ambiguous" in problem.message
    assert "2026-02-21T09:00 (memory/2026-02-21.md:3), 2026-02-21T09:00-2 (memory/2026-02-21.md:6)" in problem.message


def test_mv006_vault_problems_and_check_report_the_same(tmp_path: Path):
    """One rule, one message: `Vault.problems` and `check` both report each of the two logs."""
    from memvault import Vault

    root = copy_fixture("MV006", "bad", tmp_path / "v")
    report = run_check(root)
    from_check = sorted((p.path, p.line, p.message) for p in report.problems if p.code == "MV006")
    with Vault.open(root) as vault:
        from_vault = sorted((p.path, p.line, p.message) for p in vault.problems if p.code == "MV006")
    assert len(from_check) == 2
    assert from_vault == from_check
