"""The secret scan's fixed-shape patterns: provider tokens, key blocks, credentials in URLs.

Each pattern carries literal hints; a pattern runs only on a line where one of its hints
occurs, which keeps a whole-vault scan cheap (most notes contain none). Every regex here runs
in linear time: each starts at a literal or after a lookbehind that admits only the start of
a run, and every repetition is bounded, so no input makes one backtrack over the text twice
(tests/test_secret_corpus.py feeds each one a 1 MB pathological input).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from memvault.check.secrets.values import TEMPLATE_RE, demo, password_like


@dataclass(frozen=True, slots=True)
class Pattern:
    code: str
    kind: str
    source: str
    flags: int
    hints: tuple[str, ...]  # lower-case literals, one of which every match contains

    @property
    def regex(self) -> re.Pattern[str]:
        """Compiled on first use: the hook's one-file check needs few of these."""
        return _compile(self.source, self.flags)


@cache
def _compile(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


def _p(code: str, kind: str, regex: str, *hints: str, flags: int = 0) -> Pattern:
    return Pattern(code, kind, regex, flags, hints)


B64 = r"A-Za-z0-9+/"
B64URL = r"A-Za-z0-9_-"
END = r"(?![A-Za-z0-9_-])"  # a token ends where its alphabet does
KEY_BODY = "private key (its body, without the BEGIN line)"
PATTERNS: tuple[Pattern, ...] = (
    _p("MV501", "private key block",
       r"(?<!-)-{3,}[ \t]{0,8}BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?", "private key", flags=re.I),
    _p("MV501", "private key block", r"PuTTY-User-Key-File-\d", "putty-user-key"),
    # A pasted key body: the DER/OpenSSH encodings of private keys begin with fixed bytes.
    # (16 more base64 characters: a body, not the prefix quoted in documentation)
    _p("MV501", KEY_BODY, r"(?<![" + B64 + r"])MII[" + B64 + r"]{2}[AQgw]IBA(?:AK|DANBgkqhkiG9w0BAQEFAAS)[" + B64
       + r"]{16}", "mii"),
    _p("MV501", KEY_BODY, r"(?<![" + B64 + r"])MII[" + B64 + r"]{5}BgkqhkiG9w0BBQ0w[" + B64 + r"]{16}", "mii"),
    _p("MV501", KEY_BODY, r"(?<![" + B64 + r"])(?:MHcCAQEEI|MIGkAgEBBD|MIHcAgEBBE|MC4CAQAwBQYDK2V[uw]BCIEI|"
       r"MI[" + B64 + r"]{2}AgEAMB[AM]GByqGSM49|b3BlbnNzaC1rZXktdjE)[" + B64 + r"]{16}", "mhccaqeei", "migkagebbd",
       "mihcagebbe", "mc4caqawbqydk2v", "ageamb", "b3blbnnzac1rzxktdje"),
    # -- cloud providers
    _p("MV502", "AWS access key id",
       r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16}\b",
       "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca"),
    _p("MV502", "Google Cloud service-account key", r"\"type\"\s{0,8}:\s{0,8}\"service_account\"", "service_account"),
    _p("MV502", "Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}" + END, "gocspx-"),
    _p("MV502", "Google OAuth access token", r"\bya29\.[A-Za-z0-9_-]{30,2048}", "ya29."),
    _p("MV502", "Azure storage account key", r"AccountKey=[" + B64 + r"]{40,128}", "accountkey="),
    _p("MV502", "Azure shared access signature", r"[?&]sig=[A-Za-z0-9%+/]{30,256}", "sig="),
    _p("MV502", "Azure client secret", r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])", "q~"),
    _p("MV502", "DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "_v1_"),
    # -- git hosting
    _p("MV503", "GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", "gh"),
    _p("MV503", "GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b", "github_pat_"),
    _p("MV503", "GitLab token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent|soat|ffct)-[A-Za-z0-9_-]{20,255}", "gl"),
    _p("MV503", "Bitbucket app password", r"\bATBB[A-Za-z0-9_=.-]{32,255}", "atbb"),
    _p("MV503", "Atlassian API token", r"\bATATT3[A-Za-z0-9_=-]{100,300}", "atatt3"),
    # -- hosted APIs
    _p("MV504", "Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,255}", "xox"),
    _p("MV504", "Slack token", r"\bxapp-\d-[A-Z0-9]{8,16}-\d{8,16}-[a-f0-9]{32,80}", "xapp-"),
    _p("MV504", "Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,200}",
       "hooks.slack.com"),
    _p("MV504", "Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d{15,22}/[A-Za-z0-9_-]{30,100}",
       "discord"),
    _p("MV504", "Microsoft Teams webhook URL",
       r"\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{60,400}", "webhook.office.com"),
    _p("MV504", "Telegram bot token", r"(?<![\w:])\d{6,12}:AA[A-Za-z0-9_-]{33}" + END, ":aa"),
    _p("MV504", "Twilio API key", r"\bSK[0-9a-fA-F]{32}\b", "sk"),
    _p("MV504", "Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}", "_live_", "_test_"),
    _p("MV504", "Stripe webhook secret", r"\bwhsec_[A-Za-z0-9+/]{24,100}", "whsec_"),
    _p("MV504", "Google API key", r"\bAIza[0-9A-Za-z_-]{35}" + END, "aiza"),
    _p("MV504", "Anthropic API key", r"\bsk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_-]{32,255}", "sk-ant-"),
    _p("MV504", "OpenAI API key",
       r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{32,255}", "sk-"),
    _p("MV504", "npm token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _p("MV504", "PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,300}", "pypi-age"),
    _p("MV504", "Hugging Face token", r"\b(?:hf|api_org)_[A-Za-z0-9]{34,64}\b", "hf_", "api_org_"),
    _p("MV504", "SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{20,30}\.[A-Za-z0-9_-]{20,60}", "sg."),
    _p("MV504", "Mailgun API key", r"\bkey-[0-9a-z]{32}\b", "key-"),
    _p("MV504", "Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b", "-us"),
    _p("MV504", "Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "shp"),
    _p("MV504", "Linear API key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", "lin_"),
    _p("MV504", "Notion token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,50})\b", "secret_", "ntn_"),
    _p("MV504", "HashiCorp Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,300}", "hvs.", "hvb.", "hvr."),
    _p("MV504", "Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,100}", ".atlasv1."),
    _p("MV504", "Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "pmak-"),
    _p("MV504", "Sentry token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,300}", "sntry"),
    _p("MV504", "New Relic key", r"\bNR(?:AK|II|JS|AA)-[A-Z0-9]{27}\b", "nrak-", "nrii-", "nrjs-", "nraa-"),
    _p("MV504", "Grafana token", r"\bgl(?:sa|c)_[A-Za-z0-9_=+/-]{32,200}", "glsa_", "glc_"),
    _p("MV504", "Databricks token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", "dapi"),
    _p("MV504", "Replicate token", r"\br8_[A-Za-z0-9]{37}\b", "r8_"),
    _p("MV504", "Groq API key", r"\bgsk_[A-Za-z0-9]{52}\b", "gsk_"),
    _p("MV504", "Perplexity API key", r"\bpplx-[A-Za-z0-9]{40,64}\b", "pplx-"),
    _p("MV504", "xAI API key", r"\bxai-[A-Za-z0-9]{60,100}\b", "xai-"),
    _p("MV504", "age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", "age-secret-key-"),
    _p("MV504", "Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9._-]{40,100}", "dp."),
    _p("MV504", "PlanetScale token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}", "pscale_"),
    _p("MV504", "Supabase token", r"\bsbp_[a-f0-9]{40}\b", "sbp_"),
    _p("MV504", "Fly.io token", r"\bfo1_[A-Za-z0-9_-]{43}" + END, "fo1_"),
    _p("MV504", "Mapbox secret token", r"\bsk\.eyJ[A-Za-z0-9_-]{40,200}\.[A-Za-z0-9_-]{20,50}", "sk.eyj"),
    _p("MV504", "Dropbox token", r"\bsl\.[A-Za-z0-9_-]{120,200}", "sl."),
    # -- tokens in transit
    _p("MV505", "bearer token", r"\b[Bb]earer[ \t]{1,8}[A-Za-z0-9._~+/-]{20,4096}", "bearer"),
    _p("MV505", "basic-auth header", r"\bAuthorization:[ \t]{0,8}Basic[ \t]{1,8}[" + B64 + r"]{12,1024}", "basic"),
    _p("MV505", "JSON web token",
       r"\beyJ[A-Za-z0-9_-]{10,4096}\.eyJ[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{10,1024}", "eyj"),
    _p("MV506", "credentials in a URL",
       r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@\[\]()<>\"']{0,128}:"
       r"(?P<secret>[^\s:/@\[\]()\"']{1,256})@(?P<host>[^\s/:?#\"'<>]{0,253})", "://"),
    _p("MV507", "password hash",
       r"(?<![\w$])\$(?:apr1|1|5|6)\$[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{20,86}|"
       r"(?<![\w$])\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$v=\d{1,3}\$m=\d{1,8},t=\d{1,4},p=\d{1,3}\$",
       "$"),
)
# Patterns that can match without a 15-character run: look at lines holding these.
SHORT_HINTS = ("private key", "://", "authorization:")
ALL_HINTS = frozenset(h for p in PATTERNS for h in p.hints)
DOC_HOSTS = ("example.com", "example.org", "example.net")
# .pgpass: host:port:database:user:password, a whole line
PGPASS_RE = re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,64}:[^\s:]{1,64}:(?P<secret>\S{1,256})")


def url_placeholder(m: re.Match[str]) -> bool:
    """`https://user:${TOKEN}@host`, `<password>`, and documentation hosts are examples.

    Only the template forms count here: `postgres://user:pass@host` is a password, however short.
    """
    host = m["host"].lower().rstrip(".")
    return bool(TEMPLATE_RE.match(m["secret"])) or demo(m["secret"]) or host.endswith(DOC_HOSTS) or host.endswith((".example", ".invalid"))


def pattern_hits(start: int, line: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, code) of every provider pattern matching `line` (at offset `start`)."""
    low = line.lower()
    present = {h for h in ALL_HINTS if h in low}
    for pat in PATTERNS if present else ():
        if present.intersection(pat.hints):
            for m in pat.regex.finditer(line):
                if url_placeholder(m) if pat.code == "MV506" else demo(m[0]):
                    continue
                yield start + m.start(), start + m.end(), pat.kind, pat.code
    stripped = line.strip()
    if stripped.count(":") == 4:
        pg = PGPASS_RE.fullmatch(stripped)
        if pg and password_like(pg["secret"]) and any(c.isalpha() or c == "." for c in pg[0].split(":", 1)[0]):
            offset = start + line.index(stripped)
            yield offset + pg.start("secret"), offset + pg.end("secret"), "password in a .pgpass line", "MV507"
