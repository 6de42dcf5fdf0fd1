"""Issue 12: the secret scan's precision on real agent notes, one table per decision.

Every judgement the scan makes about a value's shape or a key's name is a pure function
(memvault/check/secrets/shapes.py, words.py, seed.py); each is tested here on a table of
cases that must go each way. The whole scan is then run on the shapes the issue reported and
on secrets people write, through `check` and the pre-commit hook on real files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memvault.check.secrets.scan import find_secrets, random_assigned
from memvault.check.secrets.seed import seed_phrase
from memvault.check.secrets.shapes import (
    caps_name,
    chain_address,
    colon_path,
    date_or_time,
    identifier,
    key_qualifier,
    label_names_id,
    manager_ref,
    number_with_unit,
    object_id,
    public_name,
    redacted_key,
    ref_or_url,
    result_verdict,
    verdict_name,
)
from memvault.check.secrets.values import password_like, token_like
from memvault.check.secrets.words import credential_name, recovery_code, stated_before
from memvault.cli import cli

from .helpers_check import commit, git, git_repo, run_memvault
from .helpers_secrets import expand

EVM = expand("0x{{xdigit:40}}", 1)
B58 = expand("{{b58:44}}", 2)
RAND = expand("{{rand:24}}", 3)


def _table(fn, yes: list[str], no: list[str]) -> None:
    assert [v for v in yes if not fn(v)] == [], f"{fn.__name__} should hold"
    assert [v for v in no if fn(v)] == [], f"{fn.__name__} should not hold"


# ------------------------------------------------------------------ what a value is


def test_chain_address():
    _table(chain_address,
           [EVM, EVM.lower(), "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
            B58[:40] + "pump"],
           ["0x" + "ab" * 32, "0x12345", B58, RAND, "bc1qNOTbech32!!", "pump", EVM + "0"])


def test_identifier():
    _table(identifier,
           ["launchpad_platform_v2", "trading.config.2026", "order-2026-02-21-4706", "atlas-prod-readonly",
            "tenant_39217501", "agent:main:telegram:dm:260276541", "user:519989:profile:v2", "s3_bucket_name"],
           [RAND, "k3j4-h5g6-x9q2", "7f3c9e2a-1b4d-4c8e-a9f0-123456789abc", "abcdef", "a_b", "Launchpad_Platform",
            expand("{{lower:32}}", 4), "12_34"])


def test_colon_path():
    _table(colon_path,
           ["agent:main:subagent:e5e3a521", "user:42:profile", "agent:main:main"],
           ["ana:" + RAND, "a:b", "x:y:z", "12:30:00", "host:5432:db:user:Xk7pQ29b"])


def test_caps_name():
    _table(caps_name,
           ["OPENAI_API_KEY", "OPENAI_API_KEY_2", "PLATFORM_LAUNCHPAD_ID", "DB_PASSWORD", "S3_BUCKET_NAME"],
           ["WINTER_2025", "AKIAIOSFODNN7", "TOKEN", "Db_Password", "A1_B2_C3"])


def test_number_with_unit():
    _table(number_with_unit, ["800yr", "128k", "15min", "91%", "3.5h", "200000tokens", "4096px"],
           ["hunter2", "Sommer2024", "800", "2024abc", "1Password"])


def test_manager_ref():
    _table(manager_ref, ["1Password", "1password", "Bitwarden", "KeePassXC", "Keychain"],
           ["1Password!", "Passw0rd1", "vault"])


def test_ref_or_url():
    _table(ref_or_url,
           ["github.com/acme/atlas", "feature/" + RAND, "claude/fix-token-refresh-a8f3k", "docs.acme.dev/api/auth#tokens",
            "uploads/2026/02/" + RAND + ".png", "refs/heads/main"],
           [RAND, "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "abc/def", "ana:pw@host"])


def test_object_id():
    _table(object_id, ["dpl_" + RAND, "msg_01" + RAND, "cus_" + RAND[:14], "chatcmpl-" + RAND],
           [RAND, "sk_live_" + RAND, "ghp_" + RAND, "whsec_" + RAND])


def test_date_or_time():
    _table(date_or_time, ["2026-02-21", "21.02.2026", "14:30:00", "2026-02-21T16:00", "09/27", "1.26.4"],
           ["4711-0815-2026", "123.456", "hunter2", "20260221"])


# ------------------------------------------------------------------ what a key names


def test_public_name():
    _table(public_name,
           ["id", "ID", "post_id", "postId", "PLATFORM_LAUNCHPAD_ID", "X-Request-Id", "wallet_address", "mint", "CA",
            "owner", "Branch", "contentHash", "publicKey", "pubkey", "next_cursor", "blockhash", "signature",
            "password_hash", "sha256"],
           ["secret_id", "VAULT_SECRET_ID", "private_key_id", "session_id", "sessionId", "auth_id", "session", "nonce", "DATABASE_URL_SIG", "token",
            "api_key", "invite", "walletKey"])


def test_key_qualifier_and_credential_names():
    assert all(key_qualifier(w) for w in ("config", "Cache", "sort", "primary", "public", "idempotency"))
    assert not any(key_qualifier(w) for w in ("api", "secret", "private", "signing", "openai", "wallet", "search",
                                              "stream", "routing", "message"))
    names = {"configKey": None, "cacheKey": None, "sort_key": None, "publicKey": None, "apiKeyName": None,
             "TOKEN_LIMIT": None, "password_min_length": None, "apiKey": "token", "OPENAI_KEY": "token",
             "privateKey": "token", "walletKey": "token", "JWT_SIGNING_KEY": "token", "DB_PASS": "password"}
    assert {k: credential_name(k) for k in names} == names


def test_label_names_id():
    _table(label_names_id, ["Nano ID for the invite", "- **Post ID", "user IDs for the"],
           ["session for the invite", "the idea", "identity of"])


def test_random_assigned_judges_key_label_and_value():
    assert random_assigned("session", RAND, "")
    assert random_assigned("FOO_SIG", RAND, "export ")
    assert not random_assigned("post_id", RAND, "")
    assert not random_assigned("invite", RAND, "Nano ID for the ")
    assert random_assigned("invite", RAND, "user id 42, the ")  # the id belongs to another field
    assert not random_assigned("treasury", EVM, "")
    assert not random_assigned("Branch", "feature/" + RAND, "Repo: github.com/acme/atlas, ")
    assert not random_assigned("deployment", "dpl_" + RAND, "vercel ")
    assert random_assigned("deployment", RAND, "vercel ")
    assert not random_assigned("key", RAND, "cache ")
    assert random_assigned("key", RAND, "license ")


# ------------------------------------------------------------------ values judged as secrets


def test_password_and_token_shapes():
    _table(password_like, ["hunter2!", "Sommer2024!", "4711-0815-2026", "Tr0ub4dor&3"],
           ["800yr", "1Password", "2026-02-21", "OPENAI_API_KEY_2", EVM, "feature/x1"])
    assert token_like(RAND, hex_ok=True) and token_like(expand("{{hex:40}}", 7), hex_ok=True)
    assert not any(token_like(v, hex_ok=True) for v in
                   ("launchpad_platform_v2", "agent:main:telegram:dm:260276541", EVM, "OPENAI_API_KEY_2",
                    "uploads/2026/02/a8f3k2.png"))


def test_recovery_code():
    _table(recovery_code, ["4821-9377", "8F3K-2Q9M-7X4P-1L6N", "a1b2c-3d4e5"],
           ["used-2026", "dead-beef", "v2-beta", "4821", "ABCD-EFGH"])


BEFORE = [  # (line, the value stated before its word, or None)
    ("hunter2 is the wifi password", "hunter2"),
    ("Kaffee#2026 is the new password for the staging DB", "Kaffee#2026"),
    ("Sommer2024! ist das WLAN-Passwort", "Sommer2024"),
    ("Sommer2024! \u2014 that's the NAS password", "Sommer2024"),
    (f"new one is {RAND} (the api token)", RAND),
    ("Room 4711 \u2014 that's the door code", "4711"),
    ("password123 is the most common password on breach lists", None),
    ("Password1 is on every list of banned passwords", None),
    ("v2.1 is the password policy version", None),
    ("Ana (the password guru) helped", None),
    ("14:30 - the password reset", None),
    ("Summer2024 is not a password", None),
    ("See ticket #4821 \u2014 that's the token issue", None),
]
QUALIFIED_KEYS = [f"cache key: {RAND}", f"partition key: {RAND}", f"public key {B58}", f"sort key = {RAND}"]
CREDENTIAL_KEYS = [f"key: {RAND}", f"license key: {RAND}", f"API key {RAND}", f"the key is {RAND}",
                   f"Brave search key: {RAND}", f"stream key: {RAND}", f"routing_key: {RAND}"]


def test_a_lookup_key_is_not_a_credential_key():
    assert [t for t in QUALIFIED_KEYS if find_secrets(t)] == []
    assert [t for t in CREDENTIAL_KEYS if not find_secrets(t)] == []


@pytest.mark.parametrize(("line", "value"), BEFORE, ids=[b[0][:30] for b in BEFORE])
def test_a_value_stated_before_its_word(line: str, value: str | None):
    found = find_secrets(line)
    assert [line[f.col - 1 : f.col - 1 + len(value)] for f in found] == ([value] if value else [])
    if value:
        assert "before" in found[0].kind or found[0].code == "MV510"


def test_stated_before_is_a_pure_judgement_of_the_window():
    assert stated_before("pw", "password", "hunter2 is the wifi ", "") == (0, 7)
    assert stated_before("pw", "password", "hunter2 is the wifi ", " policy") is None
    assert stated_before("pw", "password", "hunter2 is the most common ", "") is None
    assert stated_before("tok", "api token", f"x {RAND} (the ", ")") == (2, 2 + len(RAND))


SEEDS = [  # (text after the word, stated?)
    (": rocket velvet island orbit thunder pencil garden silver anchor winter echo canyon", True),
    (" for the cold wallet: 1. rocket 2. velvet 3. island 4. orbit 5. thunder 6. pencil 7. garden 8. silver "
     "9. anchor 10. winter 11. echo 12. canyon", True),
    (" is `rocket velvet island orbit thunder pencil garden silver anchor winter echo canyon` (Phantom)", True),
    (": never typed into any computer since setup because malware could steal those words", False),
    (": written on paper, two copies, never typed into a computer", False),
    (": rocket velvet island orbit thunder pencil garden silver anchor winter echo canyon and more after it", False),
    (": rocket velvet island orbit thunder pencil garden silver anchor winter echo", False),  # 11 words
    (": 42", False),
]


@pytest.mark.parametrize(("tail", "stated"), SEEDS, ids=[s[0][:30] for s in SEEDS])
def test_seed_phrase(tail: str, stated: bool):
    assert (seed_phrase(tail) is not None) is stated
    assert bool(find_secrets("seed phrase" + tail)) is stated


# ------------------------------------------------------------------ test verdicts, shortened keys, seed phrases


def test_verdict_name():
    _table(verdict_name, ["test_login", "ACL-Check", "T3-lint", "tests/test_x.py::test_y", "\u6a29\u9650\u30c1\u30a7\u30c3\u30af",
                          "Login-Flow(2FA)"],
           ["Sommer2024!", "hunter2#", "4711", "x7Kp$2", "", "p@ss-word"])


VERDICTS = [  # (word, before, sign, value, after, a verdict?)
    ("PASS", "- ", ":", "test_login:", " ok", True),
    ("PASS", "\u2713 ", ":", "ACL-Check:", " admin denied", True),
    ("PASS", "\u2713 PASS: ACL-Check: a \u2705 ", ":", "T3:", " c", True),  # the third verdict on a line
    ("PASS", "", ":", "\u6a29\u9650\u30c1\u30a7\u30c3\u30af:", " \u7ba1\u7406\u8005", True),
    ("PASS", "1. ", ":", "T3-lint", "", True),  # built like a test's name
    ("PASS", "| ", ":", "login", " flow green |", True),  # more words: a description
    ("PASS", "- [x] ", ":", "smoke_test", "", True),
    ("pass", "- ", ":", "test_login:", " ok", False),  # only capitals are a verdict
    ("Pass", "", ":", "Sommer2024!", "", False),
    ("PASS", "", ":", "Sommer2024!", "", False),  # a password's symbol
    ("PASS", "- ", ":", "hunter2", "", False),  # a bare word, nothing after: could be either
    ("PASS", "USER: ana ", ":", "x7Kp2", "", False),  # a login's second half
    ("PASS", "", "=", "T3-lint", "", False),  # a shell variable
    ("PASS", "ana, ", ":", "test_login:", " ok", False),  # not where a verdict stands
]


@pytest.mark.parametrize(("word", "before", "sign", "value", "after", "verdict"), VERDICTS,
                         ids=[f"{v[0]}-{v[1]}{v[3]}"[:40] for v in VERDICTS])
def test_result_verdict(word, before, sign, value, after, verdict):
    assert result_verdict(word, before, sign, value, after) is verdict


# What a QA pass found on four public agent workspaces (the hook refused these lines), and the
# credentials written the same way that must still be caught.
VERDICT_LINES = [
    "- PASS: test_login: ok",
    "\u2713 PASS: ACL-Check: admin cannot read other tenants",
    "\u2713 PASS: ACL-Check: a \u2713 PASS: ACL-Check: b \u2713 PASS: Token-Refresh: c",
    "\u2713 PASS: \u6a29\u9650\u30c1\u30a7\u30c3\u30af: \u7ba1\u7406\u8005\u306f\u62d2\u5426 \u2713 PASS: RBAC-2: ok",
    "- FAIL: test_x2: expected 3, got 4",
    "OK: build-42 green",
    "| PASS: Login-Flow(2FA): 12/12 |",
]
PASSWORD_LINES = ["pass: hunter2!", "Pass: Sommer2024!", "password: Sommer2024!", "PASS: Sommer2024!",
                  "- PASS: hunter2", "USER: ana PASS: x7Kp2", "export PASS=T3-lint"]


def test_test_verdicts_are_not_passwords_and_passwords_still_are():
    assert [t for t in VERDICT_LINES if find_secrets(t)] == []
    assert [t for t in PASSWORD_LINES if not find_secrets(t)] == []


def test_redacted_key():
    _table(redacted_key, ["sk-proj-abc\u2026", "sk-proj-abc...", "sk-...Xy12", "sk-ant-api03-AbC9\u2026", "ghp_4fG7...",
                          "xoxb-12\u2026", "Ab3dE5fG\u2026"],
           ["sk-proj-abc", "sk-proj-4fG7hK2mQ9\u2026", "sk-proj-Ab3dE5fG...hJ9k", RAND + "\u2026", "hunt\u2026x!",
            "sk-proj-abc\u2026 more"])


SHORTENED = ["OPENAI_API_KEY=sk-proj-abc\u2026", "api_key: sk-proj-Abc3\u2026 (rotated).", "token sk-ant-api03-xyz\u2026",
             "Token: sk-ant-api03-AbC9\u2026", "key: sk-...Xy12", "the key is sk-proj-abc..."]
NOT_SHORT_ENOUGH = ["OPENAI_API_KEY=sk-proj-4fG7hK2mQ9\u2026", "api key sk-proj-abc123def\u2026",
                    "password: Sommer\u2026", expand("api_key: {{rand:24}}\u2026", 8)]


def test_a_key_shortened_to_its_prefix_is_not_a_key():
    assert [t for t in SHORTENED if find_secrets(t)] == []
    assert [t for t in NOT_SHORT_ENOUGH if not find_secrets(t)] == []


def test_a_seed_phrase_has_its_own_code_and_title():
    from memvault.check.registry import RULES

    found = find_secrets(SEEDS_LINE)
    assert [(f.code, f.kind) for f in found] == [("MV511", "wallet seed phrase")]
    assert "seed phrase" in RULES["MV511"].title and "seed" not in RULES["MV507"].title


SEEDS_LINE = "seed phrase: rocket velvet island orbit thunder pencil garden silver anchor winter echo canyon"


# ------------------------------------------------------------------ the issue's shapes, through check and the hook

ISSUE_SHAPES = [
    f"- Posted to the gossip channel (id: sh_gossip_{RAND})",
    f"id: sh_gossip_{RAND}",
    "Lindy test for credentials: degrees=800yr",
    f"ID: {RAND}",
    f"PLATFORM_LAUNCHPAD_ID={RAND}",
    'configKey: "launchpad.platform.fee_bps"',
    "configKey: launchpad_platform_v2",
    f"wallet: {EVM}",
    f"Token: {EVM}",
    f"mint: {B58}",
    f"publicKey: {B58}",
    "BTC donations: bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    f"Repo: github.com/ana-dev/launchpad-bot, Branch: feature/{RAND}",
]
SECRETS = [
    "password is hunter2!",
    "hunter2 is the wifi password",
    "Passwort: Sommer2024!",
    expand("export GITHUB_TOKEN=ghp_{{rand:36}}", 5),
    expand("privateKey: 0x{{hex:64}}", 6),
    "seed phrase: rocket velvet island orbit thunder pencil garden silver anchor winter echo canyon",
]


def _log(lines: list[str]) -> str:
    return "# 2026-02-21\n" + "".join(f"\n## 09:{n:02d} - Observation\n{text}\n" for n, text in enumerate(lines))


def test_the_issue_shapes_pass_check_and_the_secrets_beside_them_do_not(runner, vault_dir: Path):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text(_log(ISSUE_SHAPES + SECRETS), encoding="utf-8")
    result = runner.invoke(cli, ["check", "--json"])
    data = json.loads(result.output)
    flagged = {p["line"] for p in data["problems"] if p["code"].startswith("MV5")}
    first_secret = 4 + 3 * len(ISSUE_SHAPES)
    assert flagged == {first_secret + 3 * n for n in range(len(SECRETS))}
    assert result.exit_code == 1


def test_the_hook_commits_the_issue_shapes(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memvault.toml": '[vault]\ntimezone = "UTC"\n'})
    assert run_memvault(repo, "hook", "install").returncode == 0
    (repo / "memory").mkdir()
    (repo / "memory" / "2026-02-21.md").write_text(_log(ISSUE_SHAPES), encoding="utf-8")
    git(repo, "add", "-A")
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    (repo / "memory" / "2026-02-22.md").write_text(_log(["hunter2 is the wifi password"]).replace(
        "2026-02-21", "2026-02-22"), encoding="utf-8")
    git(repo, "add", "-A")
    refused = commit(repo)
    assert refused.returncode != 0
    assert re.search(r"memory/2026-02-22\.md:4:1: MV507 error", refused.stdout + refused.stderr)


def test_the_hook_commits_test_verdicts_and_refuses_a_pass_written_as_a_password(tmp_path: Path):
    # The QA pass: the hook refused an agent's test log ("MV507 secret assigned to 'PASS'").
    repo = git_repo(tmp_path / "v", {"memvault.toml": '[vault]\ntimezone = "UTC"\n'})
    assert run_memvault(repo, "hook", "install").returncode == 0
    (repo / "memory").mkdir()
    (repo / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## Testlauf\n" + "\n".join(VERDICT_LINES) + "\n",
                                                   encoding="utf-8")
    git(repo, "add", "-A")
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    with (repo / "memory" / "2026-02-21.md").open("a", encoding="utf-8") as fh:
        fh.write("Pass: Sommer2024!\n")
    git(repo, "add", "-A")
    refused = commit(repo)
    assert refused.returncode != 0 and "MV507" in refused.stdout + refused.stderr
    assert "Sommer2024" not in refused.stdout + refused.stderr
