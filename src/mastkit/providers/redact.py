"""Secret redaction for text sent to a model or written to a shareable file.

Agent traces routinely contain credentials (environment dumps, config files, curl
commands, tool outputs). Whole traces are redacted once, before they are rendered
(:func:`mastkit.llm.redact.redact_trace`), and providers pass every outgoing message
through a :class:`Redactor` again (``redact=True`` by default) as a second net.

Each secret is replaced by ``[REDACTED:<kind>]``. Built-in kinds:

=====================  ============================================================
kind                   what is matched
=====================  ============================================================
private_key            PEM private key blocks (``-----BEGIN ... PRIVATE KEY-----`` ...,
                       also JSON-escaped and cut-off ones)
anthropic_key          ``sk-ant-...``
openai_key             ``sk-...``, ``sk-proj-...``, ``sk-svcacct-...`` (20+ characters, a digit)
stripe_key             ``sk_live_``/``rk_live_``/``sk_test_``/``rk_test_`` keys, ``whsec_`` secrets
github_token           ``ghp_``/``gho_``/``ghs_``/``ghu_``/``ghr_`` tokens, ``github_pat_...``
gitlab_token           ``glpat-``, ``gldt-``, ``glrt-``, ``glptt-``, ... tokens, runner tokens
google_api_key         ``AIza`` + 35 characters
google_oauth           ``GOCSPX-`` client secrets, ``ya29.`` access and ``1//0`` refresh tokens
huggingface_token      ``hf_`` + 30+ letters/digits
slack_token            ``xoxa-``/``xoxb-``/``xoxp-``/``xoxr-``/``xoxs-``/``xoxe-`` tokens
slack_webhook          the secret path of ``hooks.slack.com/services/T../B../...`` URLs
discord_webhook        the secret path of ``discord.com/api/webhooks/...`` URLs
npm_token              ``npm_`` + 36 characters
pypi_token             ``pypi-AgE...`` upload tokens
aws_access_key_id      ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 upper-case letters/digits
aws_secret_key         the 40-character value after ``aws_secret_access_key``, ``"SecretAccessKey"``
                       or the ``aws configure`` prompt ``AWS Secret Access Key [None]:``
aws_session_token      the value of ``"SessionToken"``/``aws_session_token``
azure_key              ``AccountKey=``/``SharedAccessKey=`` values of connection strings
azure_sas              the ``sig=`` signature of a SAS URL
vendor_token           other vendors' prefixed tokens: SendGrid ``SG.``, Twilio ``AC``/``SK``,
                       Mailchimp ``-usNN``, Telegram bot, Discord bot, Square ``sq0``,
                       Shopify ``shpat_``, DigitalOcean ``dop_v1_``, Databricks ``dapi``,
                       Artifactory ``AKCp``, Groq ``gsk_``, Replicate ``r8_``, xAI ``xai-``,
                       Perplexity ``pplx-``, Linear ``lin_api_``, Postman ``PMAK-``,
                       Doppler ``dp.pt.``, Vault ``hvs.``, Terraform ``.atlasv1.``,
                       Atlassian ``ATATT``, Notion ``ntn_``, Sentry ``sntrys_``,
                       Grafana ``glsa_``/``glc_``, age ``AGE-SECRET-KEY-1``, Mapbox ``sk.eyJ``
jwt                    JSON web tokens: three base64url segments whose first decodes to a
                       JSON object with ``"alg"`` (``eyJ...``, ``eyA...``, ``ewog...``)
url_password           the password in ``scheme://user:PASSWORD@host`` (may contain ``/``;
                       the user is kept)
authorization          the credential of an ``Authorization:`` header (the scheme is kept)
bearer_token           ``Bearer <token>`` outside a header
cli_password           command-line credentials: ``curl -u user:PASS``, ``--password X``,
                       ``--token X``, ``--api-key X``, ``mysql -pX``, ``sshpass -p X``
password / token /     the value of ``password=``, ``"api_key": "..."``, ``SECRET: ...``,
api_key / secret       ``DB_PASSWORD=...``, ``PGPASSWORD=...``, ``client_secret=...``
                       assignments (in ``UPPER_CASE=value`` environment assignments whose
                       name is a credential name, letters-only values too)
email (PII)            e-mail addresses (``pii=True``, the default)
phone (PII)            phone numbers with separators (``pii=("email", "phone")``; off by default)
=====================  ============================================================

To keep ordinary text and code intact, values must look like secrets: token patterns
are anchored on their vendor prefixes; assignment values that are placeholders
(``${VAR}``, ``$(cmd)``, ``<token>``, ``***``, ``null``, ``[REDACTED:...]``), pure numbers,
dotted names (``settings.API_KEY``) or code (``getpass()``, ``tokens[0]``) are left alone,
and an unquoted value needs a digit or a symbol (except in credential-named environment
assignments and command-line flags). ``max_tokens=4096`` and ``tokenizer`` are not secrets.
E-mail addresses on the documentation domains (``example.com``/``.org``/``.net``, ``*.test``,
``*.invalid``, ``*.example``, ``localhost``) and ``git@host`` remotes are kept. Known gaps:
assignment values containing spaces (``password = "correct horse"``) and unlabelled random
strings (a bare 40-character AWS secret) are not caught; add a pattern if your traces have them.

Add patterns with ``Redactor(extra_patterns=[("employee_id", r"EMP-\\d{6}")])``: a
pattern with a named group ``secret`` replaces only that group.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["PII_KINDS", "Redacted", "Redactor", "is_credential_name", "redact"]

PatternLike = str | re.Pattern[str]
ExtraPattern = PatternLike | tuple[str, PatternLike]

PII_KINDS: tuple[str, ...] = ("email", "phone")
"""Personal data kinds :class:`Redactor` knows (``pii=True`` means e-mail only)."""


class Redacted(NamedTuple):
    """Redacted text and what was removed."""

    text: str
    counts: Counter[str]
    """Number of secrets removed, by kind."""


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...] = ()
    """Cheap pre-filter: skip the rule unless one of these occurs in the lower-cased text."""
    check: Callable[[re.Match[str]], bool] | None = None
    """Return False to leave a match alone."""
    kind_of: Callable[[re.Match[str]], str] | None = None
    gate: re.Pattern[str] | None = None
    """A cheaper pattern that must match somewhere in the lower-cased text before the rule runs."""


_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{?[A-Za-z_][A-Za-z0-9_]*\}? | \$\(.*\) | \{\{.*\}\} | %\(?[A-Za-z_]\w*\)?s? | <[^<>]*> |
        \*+ | [xX]+ | \.\.\.+ | …  | (?i:null|none|nil|true|false|undefined|redacted|changeme|your[_-].*|xxx.*)
        | \[REDACTED.*
    )$""",
    re.VERBOSE,
)
_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_NUMBER = re.compile(r"^[+-]?[0-9][0-9_.,eE+-]*$")


def _random_looking(value: str) -> bool:
    """A token that is not a plain word: has a digit, or mixes upper and lower case."""
    return any(c.isdigit() for c in value) or (
        any(c.isupper() for c in value) and any(c.islower() for c in value)
    )


def _secret(m: re.Match[str]) -> str:
    return m.group("secret") if "secret" in m.re.groupindex else m.group(0)


def _check_token(m: re.Match[str]) -> bool:
    value = _secret(m)
    return _random_looking(value) and not _PLACEHOLDER.match(value)


def _not_placeholder(m: re.Match[str]) -> bool:
    value = _secret(m)
    return not (_PLACEHOLDER.match(value) or value.startswith("$"))


_CREDENTIAL_WORDS = (
    r"password|passwd|passphrase|pwd|secret|secret[_-]?key|token|api[_-]?key|apikey|access[_-]?key|"
    r"account[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|"
    r"client[_-]?secret|credentials?|auth[_-]?token|session[_-]?token"
)
_CREDENTIAL_NAME = re.compile(r"^[A-Za-z0-9_.-]*?(?i:" + _CREDENTIAL_WORDS + r")$")


def is_credential_name(name: str) -> bool:
    """True when a field or variable named ``name`` holds a credential (``DB_PASSWORD``,
    ``SecretAccessKey``, ``api_key``, ``authToken``); ``max_tokens`` and ``token_count`` do not."""
    return len(name) <= 80 and _CREDENTIAL_NAME.match(name) is not None


def _check_value(m: re.Match[str]) -> bool:
    """Assignment values: quoted ones need some length; unquoted ones a digit or symbol."""
    value = m.group("secret")
    if _PLACEHOLDER.match(value) or _NUMBER.match(value) or value.startswith("$"):
        return False
    if _DOTTED_NAME.match(value) and not any(c.isdigit() for c in value):  # settings.API_KEY
        return False
    core = value.rstrip(".,!?:")  # "The secret: patience." is prose
    has_special = any(not (c.isalpha() or c == "_") for c in core)
    key = m.group("key").lower().strip("\"'")
    quoted = m.group("quote") is not None if "quote" in m.re.groupindex else False
    if quoted:
        if key == "token":  # bare "token" keys also hold model tokens ({"token": "Hello", "logprob": ...})
            return len(value) >= 16
        return (len(value) >= 6 and has_special) or len(value) >= 12
    return len(value) >= 6 and has_special


def _check_env(m: re.Match[str]) -> bool:
    """``NAME=value`` in shell/env style: a credential name takes any non-placeholder value of
    4+ characters; other ``*_KEY`` names need a value with a digit or symbol."""
    value = m.group("secret")
    if _PLACEHOLDER.match(value) or _NUMBER.match(value) or value.startswith(("$", "[REDACTED")):
        return False
    if len(value) < 4:
        return False
    key = m.group("key")
    if is_credential_name(key):
        return not _DOTTED_NAME.match(value) or any(c.isdigit() for c in value)
    return len(value) >= 8 and any(not (c.isalpha() or c == "_") for c in value)


def kind_of_name(name: str) -> str:
    """The redaction kind for a credential held in a field or variable called ``name``."""
    key = name.lower().replace("-", "_")
    flat = key.replace("_", "")
    if "secretaccesskey" in flat or flat.startswith("awssecret"):
        return "aws_secret_key"
    if "sessiontoken" in flat:
        return "aws_session_token" if "aws" in flat or flat == "sessiontoken" else "token"
    if "pass" in key or "pwd" in key:
        return "password"
    if "token" in key:
        return "token"
    if "api" in key:
        return "api_key"
    return "secret"


def _kind_of_key(m: re.Match[str]) -> str:
    return kind_of_name(m.group("key").strip("\"'\\"))


def _b64json_alg(segment: str) -> bool:
    """True when a base64url segment decodes to a JSON object header naming an ``alg``."""
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        return False
    text = raw.decode("utf-8", "replace").lstrip()
    return text.startswith("{") and '"alg"' in text


def _check_jwt(m: re.Match[str]) -> bool:
    return _b64json_alg(m.group("head"))


def _check_url_password(m: re.Match[str]) -> bool:
    value = m.group("secret")
    if _PLACEHOLDER.match(value):
        return False
    first, slash, _rest = value.partition("/")
    return not (slash and first.isdigit())  # http://host:8080/path@x: a port, not a password


def _check_cli_pair(m: re.Match[str]) -> bool:
    value = m.group("secret")
    return not (_NUMBER.match(value) or _PLACEHOLDER.match(value) or value.startswith("$"))


def _check_flag(m: re.Match[str]) -> bool:
    value = next(v for v in (m.group("dq"), m.group("sq"), m.group("secret")) if v is not None)
    return not (_PLACEHOLDER.match(value) or value.startswith("$"))


_RESERVED_DOMAINS = re.compile(
    r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|[^.]+\.(?:test|invalid|example|localhost)|localhost)$"
)


def _check_email(m: re.Match[str]) -> bool:
    local, _, domain = m.group(0).partition("@")
    if _RESERVED_DOMAINS.search(domain):
        return False
    return local.lower() != "git"


def _token(
    kind: str, pattern: str, *hints: str, check: Callable[[re.Match[str]], bool] | None = None
) -> _Rule:
    return _Rule(kind, re.compile(pattern), hints=tuple(h.lower() for h in hints), check=check)


_B = r"(?<![A-Za-z0-9_-])"  # token start: not inside a longer word
_E = r"(?![A-Za-z0-9_-])"  # token end

_KEY = r"(?P<key>(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?(?i:" + _CREDENTIAL_WORDS + r")(?![A-Za-z0-9]))"
_SEP = r"(?:\\?[\"'])?\s*(?:=>|[:=])\s*"
_KEY_GATE = re.compile(r"(?:" + _CREDENTIAL_WORDS + r")(?![a-z0-9])" + _SEP)
"""Run on the lower-cased text: far cheaper than the case-insensitive key rules it gates."""

_VENDOR_TOKENS: tuple[_Rule, ...] = (
    _token("anthropic_key", r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_\-]{20,}", "sk-ant-"),
    _token("openai_key", r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}", "sk-"),
    _token(
        "stripe_key",
        r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})",
        "_live_",
        "_test_",
        "whsec_",
    ),
    _token(
        "github_token",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})",
        "ghp_",
        "gho_",
        "ghs_",
        "ghu_",
        "ghr_",
        "github_pat_",
    ),
    _token(
        "gitlab_token",
        _B
        + r"(?:gl(?:pat|dt|rt|ptt|cbt|imt|oas|agent|soat|ffct|ft|wt)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})",
        "gl",
        "gr1348941",
    ),
    _token("google_api_key", _B + r"AIza[0-9A-Za-z_\-]{35}" + _E, "aiza"),
    _token(
        "google_oauth",
        _B + r"(?:GOCSPX-[A-Za-z0-9_\-]{24,}|ya29\.[A-Za-z0-9_\-]{20,}|1//0[A-Za-z0-9_\-]{30,})",
        "gocspx-",
        "ya29.",
        "1//0",
        check=_check_token,
    ),
    _token(
        "huggingface_token",
        r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])",
        "hf_",
        check=_check_token,
    ),
    _token("slack_token", r"(?<![A-Za-z0-9])xox[abeoprs]-[A-Za-z0-9\-]{10,}", "xox"),
    _token("npm_token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}" + _E, "npm_", check=_check_token),
    _token("pypi_token", r"(?<![A-Za-z0-9_])pypi-AgE[A-Za-z0-9_\-]{50,}", "pypi-"),
    _token(
        "aws_access_key_id",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
        "akia",
        "asia",
        "abia",
        "acca",
        "a3t",
    ),
    _token("vendor_token", r"(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", "sg."),
    _token("vendor_token", r"(?<![A-Za-z0-9])(?:AC|SK)[a-f0-9]{32}(?![A-Za-z0-9])", "ac", "sk"),
    _token("vendor_token", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])", "-us"),
    _token("vendor_token", r"(?<![A-Za-z0-9:])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}" + _E, ":aa"),
    _token(
        "vendor_token",
        _B + r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}" + _E,
        ".",
        check=_check_token,
    ),
    _token(
        "vendor_token", _B + r"(?:sq0(?:csp|atp)-[0-9A-Za-z_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60})", "sq0", "eaaa"
    ),
    _token("vendor_token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, "shp"),
    _token("vendor_token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E, "_v1_"),
    _token("vendor_token", _B + r"dapi[a-f0-9]{32}(?:-[0-9])?" + _E, "dapi"),
    _token("vendor_token", r"(?<![A-Za-z0-9])AKCp[A-Za-z0-9]{60,}", "akcp"),
    _token(
        "vendor_token",
        _B + r"(?:gsk_[A-Za-z0-9]{48,}|r8_[A-Za-z0-9]{37,}|xai-[A-Za-z0-9]{60,}|"
        r"pplx-[A-Za-z0-9]{48,}|lin_api_[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,}|sntrys_[A-Za-z0-9+/=_]{50,}|"
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",
        "gsk_",
        "r8_",
        "xai-",
        "pplx-",
        "lin_api_",
        "ntn_",
        "sntrys_",
        "glsa_",
        "glc_",
        check=_check_token,
    ),
    _token(
        "vendor_token",
        _B + r"(?:PMAK-[a-f0-9]{24}-[a-f0-9]{34}|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}|"
        r"hvs\.[A-Za-z0-9_\-]{24,}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}|ATATT3[A-Za-z0-9_\-=]{100,}|"
        r"AGE-SECRET-KEY-1[0-9A-Z]{58}|[ps]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,})",
        "pmak-",
        "dp.",
        "hvs.",
        ".atlasv1.",
        "atatt3",
        "age-secret-key-1",
        "k.eyj",
    ),
)

_BUILTIN: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,\-\s]|\\[nr])*)"
        ),
        hints=("private key",),
    ),
    *_VENDOR_TOKENS,
    _token(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/\-]{20,})",
        "hooks.slack.com",
    ),
    _token(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]+/[A-Za-z0-9_\-]+)",
        "/api/webhooks/",
    ),
    _token(
        "azure_key",
        r"(?i:AccountKey|SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "accountkey",
        "sharedaccesskey",
    ),
    _token("azure_sas", r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{20,})", "sig="),
    _Rule(
        "jwt",
        re.compile(
            r"(?<![A-Za-z0-9_\-.])(?P<head>e[wy][A-Za-z0-9_\-]{8,})\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*"
        ),
        hints=("ey", "ew"),
        check=_check_jwt,
    ),
    _token("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", "eyj"),
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?i:aws[_ ]?secret[_ ]?(?:access[_ ]?)?key|secretaccesskey)(?:\s*\[[^\]\n]{0,40}\])?"
            + _SEP
            + r"\\?[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        hints=("secret",),
    ),
    _Rule(
        "url_password",
        re.compile(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\"'<>\[\]\\]*:"
            r"(?P<secret>[^\s?#\"'<>\\]+)(?=@[A-Za-z0-9\[])"
        ),
        hints=("://",),
        check=_check_url_password,
    ),
    _Rule(
        "authorization",
        re.compile(
            r"(?i:authorization)(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
            r"(?:(?i:bearer|basic|token|digest|apikey)\s+)?(?P<secret>[A-Za-z0-9._~+/\-]{8,}=*)"
        ),
        hints=("authorization",),
        check=_check_token,
    ),
    _Rule(
        "bearer_token",
        re.compile(r"(?<![A-Za-z0-9])Bearer\s+(?P<secret>[A-Za-z0-9._~+/\-]{16,}=*)"),
        hints=("bearer",),
        check=_check_token,
    ),
    _Rule(  # curl -u user:pass, --user=user:pass
        "cli_password",
        re.compile(r"(?<![\w-])(?:-u|--user|--proxy-user)(?:\s+|=)?[\"']?[^\s:\"'@/]+:(?P<secret>[^\s\"']+)"),
        hints=("-u", "--user", "--proxy-user"),
        check=_check_cli_pair,
    ),
    _Rule(  # --password X, --token=X, --api-key 'X'
        "cli_password",
        re.compile(
            r"(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-key|apikey|access-key|"
            r"secret-key|client-secret|auth-token)(?![\w-])(?:\s+|=)(?:\"(?P<dq>[^\"\s]{3,})\"|'(?P<sq>[^'\s]{3,})'|"
            r"(?P<secret>[^\s\"'-][^\s\"']{2,}))"
        ),
        hints=("--",),
        check=_check_flag,
    ),
    _Rule(  # mysql -pSECRET, mysqldump -p'SECRET'
        "cli_password",
        re.compile(
            r"(?i:mysql\w*|mariadb\w*|mysqladmin|mysqldump)\b[^\n]*?\s-p(?P<q>[\"']?)(?P<secret>[^\s\"']{3,})"
        ),
        hints=("mysql", "mariadb"),
        check=_not_placeholder,
    ),
    _Rule(  # sshpass -p SECRET, redis-cli -a SECRET
        "cli_password",
        re.compile(r"(?:sshpass\s+-p|redis-cli\b[^\n]*?\s-a)\s*(?P<q>[\"']?)(?P<secret>[^\s\"']{3,})"),
        hints=("sshpass", "redis-cli"),
        check=_not_placeholder,
    ),
    _Rule(  # UPPER_CASE=value environment assignments (env dumps, .env files, `export X=...`)
        "secret",
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<key>[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY|CREDENTIALS?))"
            r"=(?P<quote>[\"']?)(?P<secret>[^\s\"'`]+)",
        ),
        hints=("pass", "pwd", "secret", "token", "key", "credential"),
        check=_check_env,
        kind_of=_kind_of_key,
    ),
    _Rule(
        "secret",  # quoted assignment: "api_key": "...", password='...', "SessionToken": "..."
        re.compile(_KEY + _SEP + r"(?P<quote>\\?[\"'])(?P<secret>[^\"'\s\\]{1,4096})\\?[\"']"),
        hints=("pass", "pwd", "secret", "token", "key", "credential"),
        check=_check_value,
        kind_of=_kind_of_key,
        gate=_KEY_GATE,
    ),
    _Rule(
        "secret",  # unquoted assignment: password=..., token: ...
        re.compile(
            _KEY + _SEP + r"(?P<secret>[^\s\"'`,;&<>(){}\[\]\\]{6,4096})(?=$|[\s\"'`,;&)}\]\\])", re.MULTILINE
        ),
        hints=("pass", "pwd", "secret", "token", "key", "credential"),
        check=_check_value,
        kind_of=_kind_of_key,
        gate=_KEY_GATE,
    ),
)

_PII: dict[str, _Rule] = {
    "email": _Rule(
        "email",
        re.compile(
            r"(?<![A-Za-z0-9._%+\-/])[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@"
            r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-])"
        ),
        hints=("@",),
        check=_check_email,
    ),
    "phone": _Rule(
        "phone",
        re.compile(
            r"(?<![\w+.\-/])(?:\+[1-9][0-9]{0,2}[ .\-]?)?(?:\([0-9]{2,4}\)[ .\-]?|[0-9]{2,4}[ .\-])"
            r"[0-9]{3,4}[ .\-][0-9]{3,4}(?![\w.\-/])"
        ),
    ),
}


def _compile_extra(extra: ExtraPattern) -> _Rule:
    kind, pattern = extra if isinstance(extra, tuple) else ("custom", extra)
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    return _Rule(kind, compiled)


def _pii_kinds(pii: bool | Collection[str]) -> tuple[str, ...]:
    if pii is True:
        return ("email",)
    if pii is False:
        return ()
    unknown = sorted(set(pii) - set(PII_KINDS))
    if unknown:
        raise ValueError(f"unknown PII kind(s) {unknown}: use {', '.join(PII_KINDS)}")
    return tuple(k for k in PII_KINDS if k in pii)


class Redactor:
    """Replaces secrets in text by ``[REDACTED:<kind>]`` and counts them.

    Args:
        extra_patterns: more patterns, each a regex (kind ``custom``) or ``(kind, regex)``;
            a named group ``secret`` limits the replacement to that group. They run after
            the built-in ones.
        literals: exact strings to remove wherever they occur (kind ``literal``), e.g. the
            API key in use.
        builtin: set False to use only ``extra_patterns``, ``literals`` and ``pii``.
        pii: personal data to remove too: True (the default) for e-mail addresses, False for
            none, or a collection of kinds from :data:`PII_KINDS` (``("email", "phone")``).
    """

    def __init__(
        self,
        extra_patterns: Sequence[ExtraPattern] = (),
        *,
        literals: Iterable[str] = (),
        builtin: bool = True,
        pii: bool | Collection[str] = True,
    ) -> None:
        self.pii = _pii_kinds(pii)
        self._rules: list[_Rule] = [
            *(_BUILTIN if builtin else ()),
            *(_compile_extra(p) for p in extra_patterns),
            *(_PII[k] for k in self.pii),
        ]
        self._literals = sorted({s for s in literals if s and len(s) >= 8}, key=len, reverse=True)

    def __repr__(self) -> str:
        # never show the literals: they are secrets
        return f"Redactor({len(self._rules)} patterns, {len(self._literals)} literal(s))"

    @property
    def kinds(self) -> list[str]:
        """The kinds this redactor can report."""
        kinds = {r.kind for r in self._rules if r.kind_of is None}
        if any(r.kind_of is not None for r in self._rules):
            kinds |= {"password", "token", "api_key", "secret", "aws_secret_key", "aws_session_token"}
        if self._literals:
            kinds.add("literal")
        return sorted(kinds)

    def with_literals(self, literals: Iterable[str]) -> Redactor:
        """A copy that also removes these exact strings."""
        clone = Redactor.__new__(Redactor)
        clone.pii = self.pii
        clone._rules = list(self._rules)
        clone._literals = sorted(
            {*self._literals, *(s for s in literals if s and len(s) >= 8)}, key=len, reverse=True
        )
        return clone

    def redact(self, text: str) -> Redacted:
        """``(redacted text, Counter of secrets removed by kind)``."""
        counts: Counter[str] = Counter()
        for literal in self._literals:
            n = text.count(literal)
            if n:
                text = text.replace(literal, "[REDACTED:literal]")
                counts["literal"] += n
        lowered = text.lower()
        for rule in self._rules:
            if rule.hints and not any(h in lowered for h in rule.hints):
                continue
            if rule.gate is not None and rule.gate.search(lowered) is None:
                continue
            new = rule.pattern.sub(functools.partial(self._replace, rule=rule, counts=counts), text)
            if new is not text and new != text:
                text = new
                lowered = text.lower()
        return Redacted(text, counts)

    def redact_field(self, name: str, value: str) -> Redacted:
        """Redact ``value``, the content of a field or variable called ``name``: as text, and
        when ``name`` is a credential name (:func:`is_credential_name`) a value that still looks
        like a secret (one word of 4+ characters, not a placeholder or number) goes whole."""
        text, counts = self.redact(value)
        if counts or not is_credential_name(name):
            return Redacted(text, counts)
        v = text.strip()
        if (
            len(v) < 4
            or any(c.isspace() for c in v)
            or _PLACEHOLDER.match(v)
            or _NUMBER.match(v)
            or v.startswith("$")
            or (_DOTTED_NAME.match(v) and not any(c.isdigit() for c in v))
        ):
            return Redacted(text, counts)
        if name.lower() == "token" and (len(v) < 16 or not _random_looking(v)):
            return Redacted(text, counts)  # {"token": "Hello"}: a model token
        kind = kind_of_name(name)
        return Redacted(f"[REDACTED:{kind}]", Counter({kind: 1}))

    @staticmethod
    def _replace(m: re.Match[str], rule: _Rule, counts: Counter[str]) -> str:
        if rule.check is not None and not rule.check(m):
            return m.group(0)
        kind = rule.kind_of(m) if rule.kind_of is not None else rule.kind
        marker = f"[REDACTED:{kind}]"
        groups = m.re.groupindex
        name = next((g for g in ("secret", "dq", "sq") if g in groups and m.group(g) is not None), None)
        if name is None and "secret" in groups:
            return m.group(0)
        counts[kind] += 1
        if name is not None:
            start, end = m.span(name)
            offset = m.start()
            whole = m.group(0)
            return whole[: start - offset] + marker + whole[end - offset :]
        return marker


_DEFAULT = Redactor()


def redact(text: str) -> Redacted:
    """Redact ``text`` with the built-in patterns (and e-mail addresses)."""
    return _DEFAULT.redact(text)
