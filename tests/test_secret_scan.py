"""The secret detector against a corpus of true and false positives; it never echoes a value."""

from __future__ import annotations

import json

import pytest

from memvault.check.secrets.scan import (
    ALLOW_MARK,
    entropy,
    find_secrets,
    looks_random,
    refuse_secrets,
)
from memvault.errors import SecretRefused

from .helpers_secrets import false_positives, secret_parts, true_positives

TRUE = true_positives()
FALSE = false_positives()


def test_corpus_is_big_enough_to_mean_something():
    assert len(TRUE) >= 50 and len(FALSE) >= 50
    from memvault.check.registry import RULES

    assert {code for _, code, _ in TRUE} == {c for c, r in RULES.items() if c.startswith("MV5") and r.severity == "error"}


@pytest.mark.parametrize(("case", "code", "text"), TRUE, ids=[c for c, _, _ in TRUE])
def test_true_positive_is_found_with_its_code(case: str, code: str, text: str):
    found = find_secrets(text)
    assert found, f"{case}: nothing found"
    assert found[0].code == code, f"{case}: {found[0].code} {found[0].kind}"


@pytest.mark.parametrize(("case", "text"), FALSE, ids=[c for c, _ in FALSE])
def test_false_positive_is_not_flagged(case: str, text: str):
    assert find_secrets(text) == [], case


PARTS = secret_parts()


def _secret_bits(text: str) -> list[str]:
    """The random parts of the secrets in `text`: any of them in a message would be an echo."""
    return [p for p in PARTS if p in text]


@pytest.mark.parametrize(("case", "code", "text"), TRUE, ids=[c for c, _, _ in TRUE])
def test_findings_never_echo_the_value(case: str, code: str, text: str):
    for hit in find_secrets(text):
        message = hit.message() + hit.kind
        for bit in _secret_bits(text):
            assert bit not in message, f"{case}: message repeats part of the secret"
    with pytest.raises(SecretRefused) as info:
        refuse_secrets(text, where="the new entry")
    for bit in _secret_bits(text):
        assert bit not in str(info.value)


def test_allow_marker_skips_only_its_line():
    secret = next(t for _, c, t in TRUE if c == "MV503")
    text = f"{secret} <!-- {ALLOW_MARK} -->\n{secret}\n"
    found = find_secrets(text)
    assert [(f.line, f.code) for f in found] == [(2, "MV503")]


def test_line_and_column_point_at_the_secret():
    secret = next(t for _, c, t in TRUE if c == "MV502" and t.startswith("AWS key"))
    found = find_secrets(f"first line\n\n  {secret}\n", first_line=10)
    assert len(found) == 1
    assert (found[0].line, found[0].col) == (12, 3 + secret.index("AKIA"))


def test_one_finding_per_secret_most_specific_kind_wins():
    token = next(t for _, c, t in TRUE if c == "MV503" and t.startswith("GitHub"))
    found = find_secrets(f"export GITHUB_TOKEN={token.split()[-1]}")
    assert [f.code for f in found] == ["MV503"]


def test_entropy_and_randomness_heuristics():
    assert entropy("") == 0 and entropy("aaaa") == 0 and entropy("abcd") == 2
    assert looks_random("Zk3Qp9Lm2Xv8Rt5Yw7Nb4Hc6")
    assert not looks_random("UserPreferencesPanelV2Controller")
    assert not looks_random("3f9a1c2b7d10e4f5a6b7c8d9e0f1a2b3c4d5e6f7")
    assert not looks_random("https://example.com/Ab1Cd2Ef3Gh4Ij5Kl6")


def test_log_refuses_a_secret_without_echoing_it(runner, vault_dir):
    from memvault.cli import cli

    assert runner.invoke(cli, ["init", str(vault_dir / "v"), "--no-git"]).exit_code == 0
    secret = next(t for _, c, t in TRUE if c == "MV504" and "sk-proj-" in t)
    result = runner.invoke(cli, ["--vault", str(vault_dir / "v"), "log", secret])
    assert result.exit_code == 1
    assert "OpenAI API key" in result.output and "allow-secret" in result.output
    assert secret.split()[-1] not in result.output
    assert not list((vault_dir / "v" / "memory").glob("*.md"))


def test_check_json_does_not_echo_secrets(runner, vault_dir):
    from memvault.cli import cli

    body = "\n".join(t for _, _, t in TRUE)
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text(f"# 2026-02-21\n\n## 09:00 - Observation\n{body}\n")
    result = runner.invoke(cli, ["check", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["errors"] >= len(TRUE)
    assert len(_secret_bits(body)) >= 50
    for bit in _secret_bits(body):
        assert bit not in result.output


def test_passwords_stated_in_prose():
    from memvault.check.secrets.scan import find_secrets

    for text in ("my password is hunter2", "The wifi password was Tr0ub4dor&3",
                 "passphrase is correct-horse-battery-staple"):
        assert find_secrets(text), text
    for text in ("the password is stored in 1Password", "password is changed monthly",
                 "the token is rotated every 90 days", "Password is not required"):
        assert not find_secrets(text), text


def test_passphrases_of_letters_only_stated_as_the_password():
    """A long run of letters stated as the password, ending its sentence (no digit or symbol
    for the prose rule to see); words said about a password are not passphrases."""
    from memvault.check.secrets.scan import find_secrets

    for text in ("my password is correcthorsebatterystaple", "the wifi password is sunflowerfields.",
                 "Mein Passwort ist sonnenblumenfeld", 'Das WLAN-Passwort lautet "sonnenblumenfeld"'):
        assert [f.code for f in find_secrets(text)] == ["MV507"], text
    for text in ("the password is incomprehensible", "the password is unchangeable.", "password is confidential",
                 "the password is automatically rotated", "the new password is stored in bitwarden",
                 "das Passwort ist unveränderlich.", "the password is expired", "my password is short"):
        assert not find_secrets(text), text


def test_the_finding_message_reads_as_english():
    from memvault.check.secrets.scan import find_secrets

    url = find_secrets("postgres://user:pw4x@db.internal/x")
    aws = find_secrets("key AKIAZ3X5Q7W9E2R4T6Y8 here")
    assert url and url[0].message().startswith("looks like credentials in a URL;")
    assert aws and aws[0].message().startswith("looks like an AWS access key id;")
