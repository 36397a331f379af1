"""Secret redaction for text sent to a model.

Agent traces routinely contain credentials (environment dumps, config files, curl
commands, tool outputs). Providers pass every outgoing message through a
:class:`Redactor` (``redact=True`` by default) and report what was removed, by kind.

Each secret is replaced by ``[REDACTED:<kind>]``. Built-in kinds:

==================  ===============================================================
kind                what is matched
==================  ===============================================================
private_key         PEM private key blocks (``-----BEGIN ... PRIVATE KEY-----`` ...)
anthropic_key       ``sk-ant-...``
openai_key          ``sk-...``, ``sk-proj-...`` (20+ characters, with a digit)
stripe_key          ``sk_live_``/``rk_live_``/``sk_test_``/``rk_test_`` keys
github_token        ``ghp_``/``gho_``/``ghs_``/``ghu_``/``ghr_`` tokens, ``github_pat_...``
google_api_key      ``AIza`` + 35 characters
huggingface_token   ``hf_`` + 30+ letters/digits
slack_token         ``xoxa-``/``xoxb-``/``xoxp-``/``xoxr-``/``xoxs-`` tokens
aws_access_key_id   ``AKIA``/``ASIA`` + 16 upper-case letters/digits
aws_secret_key      the 40-character value after ``aws_secret_access_key`` (``=``/``:``)
jwt                 ``eyJ...eyJ...`` JSON web tokens
url_password        the password in ``scheme://user:PASSWORD@host`` (the user is kept)
authorization       the credential of an ``Authorization:`` header (the scheme is kept)
bearer_token        ``Bearer <token>`` outside a header
password / token /  the value of ``password=``, ``"api_key": "..."``, ``SECRET: ...``,
api_key / secret    ``db_password=...``, ``client_secret=...`` assignments
==================  ===============================================================

To keep ordinary text and code intact, values must look like secrets: token patterns
are anchored on their vendor prefixes; assignment values that are placeholders
(``${VAR}``, ``<token>``, ``***``, ``null``, ``[REDACTED:...]``), pure numbers, dotted
names (``settings.API_KEY``) or code (``getpass()``, ``tokens[0]``) are left alone, and
an unquoted value needs a digit or a symbol. ``max_tokens=4096`` and ``tokenizer`` are
not secrets. Known gaps: assignment values containing spaces (``password = "correct horse"``)
and letters-only unquoted values (``PASSWORD=changeme``) are not caught; add a pattern if
your traces have them.

Add patterns with ``Redactor(extra_patterns=[("employee_id", r"EMP-\\d{6}")])``: a
pattern with a named group ``secret`` replaces only that group.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["Redacted", "Redactor", "redact"]

PatternLike = str | re.Pattern[str]
ExtraPattern = PatternLike | tuple[str, PatternLike]


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


def _check_value(m: re.Match[str]) -> bool:
    """Assignment values: quoted ones need some length; unquoted ones a digit or symbol."""
    value = m.group("secret")
    if _PLACEHOLDER.match(value) or _NUMBER.match(value):
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


def _kind_of_key(m: re.Match[str]) -> str:
    key = m.group("key").lower()
    if "pass" in key:
        return "password"
    if "token" in key:
        return "token"
    if "api" in key:
        return "api_key"
    return "secret"


_KEY = (
    r"(?P<key>(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*"
    r"(?i:password|passwd|passphrase|secret|secret[_-]?key|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|signing[_-]?key|encryption[_-]?key)(?![A-Za-z0-9]))"
)
_SEP = r"(?:\\?[\"'])?\s*(?:=>|[:=])\s*"

_BUILTIN: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,\-\s]|\\[nr])*)"
        ),
        hints=("private key",),
    ),
    _Rule(
        "anthropic_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_\-]{20,}"),
        hints=("sk-ant-",),
    ),
    _Rule(
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}"),
        hints=("sk-",),
    ),
    _Rule(
        "stripe_key",
        re.compile(r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        hints=("_live_", "_test_"),
    ),
    _Rule(
        "github_token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        hints=("gh", "github_pat_"),
    ),
    _Rule(
        "google_api_key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_-])"),
        hints=("aiza",),
    ),
    _Rule(
        "huggingface_token",
        re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])"),
        hints=("hf_",),
        check=_check_token,
    ),
    _Rule(
        "slack_token",
        re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9\-]{10,}"),
        hints=("xox",),
    ),
    _Rule(
        "aws_access_key_id",
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
        hints=("akia", "asia"),
    ),
    _Rule(
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
        hints=("eyj",),
    ),
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?i:aws_?secret_?(?:access_?)?key)"
            + _SEP
            + r"\\?[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        hints=("secret",),
    ),
    _Rule(
        "url_password",
        re.compile(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\"'<>\[\]\\]*:"
            r"(?P<secret>[^\s/?#@\"'<>\\]+)(?=@)"
        ),
        hints=("://",),
        check=lambda m: not _PLACEHOLDER.match(m.group("secret")),
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
    _Rule(
        "secret",  # quoted assignment: "api_key": "...", password='...'
        re.compile(_KEY + _SEP + r"(?P<quote>\\?[\"'])(?P<secret>[^\"'\s\\]{1,512})\\?[\"']"),
        hints=("pass", "secret", "token", "key"),
        check=_check_value,
        kind_of=_kind_of_key,
    ),
    _Rule(
        "secret",  # unquoted assignment: PASSWORD=..., token: ...
        re.compile(
            _KEY + _SEP + r"(?P<secret>[^\s\"'`,;&<>(){}\[\]\\]{6,512})(?=$|[\s\"'`,;&)}\]\\])", re.MULTILINE
        ),
        hints=("pass", "secret", "token", "key"),
        check=_check_value,
        kind_of=_kind_of_key,
    ),
)


def _compile_extra(extra: ExtraPattern) -> _Rule:
    kind, pattern = extra if isinstance(extra, tuple) else ("custom", extra)
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    return _Rule(kind, compiled)


class Redactor:
    """Replaces secrets in text by ``[REDACTED:<kind>]`` and counts them.

    Args:
        extra_patterns: more patterns, each a regex (kind ``custom``) or ``(kind, regex)``;
            a named group ``secret`` limits the replacement to that group. They run after
            the built-in ones.
        literals: exact strings to remove wherever they occur (kind ``literal``), e.g. the
            API key in use.
        builtin: set False to use only ``extra_patterns`` and ``literals``.
    """

    def __init__(
        self,
        extra_patterns: Sequence[ExtraPattern] = (),
        *,
        literals: Iterable[str] = (),
        builtin: bool = True,
    ) -> None:
        self._rules: list[_Rule] = [
            *(_BUILTIN if builtin else ()),
            *(_compile_extra(p) for p in extra_patterns),
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
            kinds |= {"password", "token", "api_key", "secret"}
        if self._literals:
            kinds.add("literal")
        return sorted(kinds)

    def with_literals(self, literals: Iterable[str]) -> Redactor:
        """A copy that also removes these exact strings."""
        clone = Redactor.__new__(Redactor)
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
            new = rule.pattern.sub(functools.partial(self._replace, rule=rule, counts=counts), text)
            if new is not text and new != text:
                text = new
                lowered = text.lower()
        return Redacted(text, counts)

    @staticmethod
    def _replace(m: re.Match[str], rule: _Rule, counts: Counter[str]) -> str:
        if rule.check is not None and not rule.check(m):
            return m.group(0)
        kind = rule.kind_of(m) if rule.kind_of is not None else rule.kind
        counts[kind] += 1
        marker = f"[REDACTED:{kind}]"
        if "secret" in m.re.groupindex and m.group("secret") is not None:
            start, end = m.span("secret")
            offset = m.start()
            whole = m.group(0)
            return whole[: start - offset] + marker + whole[end - offset :]
        return marker


_DEFAULT = Redactor()


def redact(text: str) -> Redacted:
    """Redact ``text`` with the built-in patterns."""
    return _DEFAULT.redact(text)
