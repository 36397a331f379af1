"""The fence around trace text in a prompt, and how trace text is kept from breaking out of it.

Every prompt built from a trace puts the trace's text between tags named ``trace-NONCE``
(``<trace-NONCE>`` … ``</trace-NONCE>``, and ``-task``, ``-answer``, ``-hints`` variants),
and the system prompt says that nothing between them is an instruction. Two things keep a
trace author from closing that fence and writing text outside it:

* **The nonce cannot be guessed.** :func:`fence_nonce` is an HMAC-SHA256 of the trace's
  content hash keyed by a secret the trace author never sees (:func:`fence_secret`): the
  store's per-database secret when there is a store, so a rerun on the same database
  builds byte-identical prompts and is answered from the response cache; otherwise a random
  secret drawn once per process.
* **Look-alike tags are defused.** :func:`defuse` finds every ``<`` that opens a tag-like
  construct whose name starts with ``trace`` — ``<trace…``, ``</trace…``, ``< / TRACE``… — and
  replaces that ``<`` with ``‹`` (U+2039). The check runs on a normalised *view* of the text:
  compatibility forms are folded (fullwidth ``＜／ｔｒａｃｅ``, small ``﹤``), case is folded,
  accents, zero-width, bidi and other invisible characters are skipped, HTML/XML character
  references (``&lt;``, ``&#60;``, ``&#x3c;``, ``&sol;``, also double-encoded ``&amp;lt;``),
  backslash escapes (``\\u003c``, ``\\x3c``, ``\\074``, ``\\/``) and percent escapes (``%3C``)
  are decoded, and a small table maps confusables of ``<``, ``/`` and the letters of ``trace``
  (``‹ ❮ ˂ ᐸ``, ``∕ ⁄ ⧸ ╱``, Cyrillic ``т г а с е``…) onto them. Only the ``<`` itself (the
  one character or escape that stands for it) is replaced in the original text; everything
  else, including the invisible characters, is passed through untouched. Normalising the
  whole trace instead would also rewrite harmless text (fullwidth digits in CJK text, accents,
  ligatures) that the judge may need to quote as evidence.

``defuse`` is idempotent, and ordinary text (``<div>``, ``a < b``, ``tracer``, ``x/trace``)
is returned unchanged.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import re
import secrets
import unicodedata
from functools import lru_cache
from typing import Protocol, runtime_checkable

from mastkit.traces.model import Trace

__all__ = ["FenceSecretSource", "defuse", "fence_name", "fence_nonce", "fence_secret", "inline"]

NONCE_HEX = 16
"""Hex digits of the nonce: 64 bits."""

_PROCESS_SECRET = secrets.token_bytes(32)


@runtime_checkable
class FenceSecretSource(Protocol):
    """Anything that keeps a fence secret (``mastkit.store.Store`` does)."""

    def fence_secret(self) -> bytes: ...


def fence_secret(cache: object | None = None) -> bytes:
    """The secret fence nonces are keyed with: ``cache.fence_secret()`` when the cache (the
    store) keeps one, else a random secret drawn once per process."""
    get = getattr(cache, "fence_secret", None)
    if callable(get):
        secret = get()
        if isinstance(secret, bytes) and len(secret) >= 16:
            return secret
        raise ValueError("fence_secret() must return at least 16 random bytes")
    return _PROCESS_SECRET


def fence_nonce(trace: Trace, secret: bytes) -> str:
    """The nonce of ``trace``'s fence tags: HMAC-SHA256 of its content hash keyed by ``secret``
    (64 bits, hex). The same trace and secret always give the same nonce; without the secret
    it cannot be derived from the trace."""
    digest = hmac.new(secret, trace.content_hash().encode(), hashlib.sha256).hexdigest()
    return digest[:NONCE_HEX]


def fence_name(trace: Trace, secret: bytes) -> str:
    """The tag name of ``trace``'s fence: ``trace-NONCE``."""
    return f"trace-{fence_nonce(trace, secret)}"


# -- the normalised view -----------------------------------------------------------------------

_LT, _SLASH = "<", "/"

# Confusables that compatibility normalisation leaves alone (from Unicode's confusables list).
_CONFUSABLE: dict[str, str] = {
    **dict.fromkeys("‹❮˂ᐸᚲ〈〈⟨❬❰⧼", _LT),
    **dict.fromkeys("∕⁄⧸╱⟋᜵〳\\", _SLASH),
    **dict.fromkeys("тτᴛ", "t"),
    **dict.fromkeys("гᴦⲅ", "r"),
    **dict.fromkeys("аɑα⍺", "a"),
    **dict.fromkeys("сϲᴄⲥ", "c"),
    **dict.fromkeys("еҽ", "e"),
}
# Fillers that render as nothing but are letters, not format characters.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
_SKIPPED_CATEGORIES = frozenset({"Cf", "Mn", "Me"})

REPLACEMENT = "‹"
"""What the ``<`` of a defused look-alike tag becomes."""


@lru_cache(maxsize=4096)
def _view(ch: str) -> str:
    """How one character reads in the normalised view ('' for invisible ones)."""
    if ch in _FILLERS:
        return ""
    cat = unicodedata.category(ch)
    if cat in _SKIPPED_CATEGORIES or (cat == "Cc" and not ch.isspace()):
        return ""
    out = []
    for c in unicodedata.normalize("NFKD", ch):
        if unicodedata.category(c) in _SKIPPED_CATEGORIES:
            continue
        for f in c.casefold():
            out.append(_CONFUSABLE.get(f, f))
    return "".join(out)


_ENTITY = re.compile(
    r"&(?:amp;|#0*38;|#x0*26;)*(#[0-9]{1,8};?|#[xX][0-9a-fA-F]{1,7};?|[A-Za-z][A-Za-z0-9]{1,31};?)"
)
_BACKSLASH = re.compile(
    r"\\+(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|([0-7]{3})|(/))"
)
_PERCENT = re.compile(r"%(?:25)*([0-9a-fA-F]{2})")


def _char(code: int) -> str | None:
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else None


def _token(text: str, i: int) -> tuple[str, int]:
    """The view of the token at ``text[i]`` (a character, or a character reference or escape
    standing for one) and where the next token starts."""
    ch = text[i]
    if ch == "&":
        m = _ENTITY.match(text, i)
        if m:
            decoded = html.unescape("&" + m.group(1))
            if decoded != "&" + m.group(1):
                return "".join(_view(c) for c in decoded), m.end()
    elif ch == "\\":
        m = _BACKSLASH.match(text, i)
        if m:
            if m.group(6):
                return _SLASH, m.end()
            digits = next(g for g in m.groups()[:5] if g)
            c = _char(int(digits, 8 if m.group(5) else 16))
            if c is not None:
                return _view(c), m.end()
    elif ch == "%":
        m = _PERCENT.match(text, i)
        if m and int(m.group(1), 16) < 0x80:
            return _view(chr(int(m.group(1), 16))), m.end()
    return _view(ch), i + 1


_NAME = "trace"


def _opens_fence_tag(text: str, i: int) -> int | None:
    """If a look-alike of ``<`` starts at ``text[i]`` and opens a tag named ``trace…`` (in the
    normalised view), the end of that ``<`` token; else None."""
    view, lt_end = _token(text, i)
    if view != _LT:
        return None
    matched = 0  # letters of the name matched so far; before the first, spaces and '/' are skipped
    j = lt_end
    while j < len(text):
        view, j = _token(text, j)
        for c in view:
            if matched == 0 and (c.isspace() or c == _SLASH):
                continue
            if c == _NAME[matched]:
                matched += 1
                if matched == len(_NAME):
                    return lt_end
            else:
                return None
    return None


def _lead_chars() -> str:
    leads = {"<", "&", "\\", "%"} | {c for c, v in _CONFUSABLE.items() if v == _LT}
    # characters whose view starts with '<' through their NFKD form (≮, ﹤, ＜, and 〈 ︿ via 〈);
    # a test walks all of Unicode to keep this list complete
    leads |= {chr(cp) for cp in (0x226E, 0x2329, 0xFE3F, 0xFE64, 0xFF1C)}
    return "".join(sorted(leads))


_LEAD = re.compile("[" + re.escape(_lead_chars()) + "]")


def defuse(text: str) -> str:
    """``text`` with the ``<`` of every look-alike of a fence tag replaced by ``‹`` (see the
    module docstring for what counts as a look-alike); all other text is left as it is."""
    out: list[str] = []
    done = 0
    for m in _LEAD.finditer(text):
        i = m.start()
        if i < done:
            continue
        end = _opens_fence_tag(text, i)
        if end is not None:
            out.append(text[done:i])
            out.append(REPLACEMENT)
            done = end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


_SPACE_RUN = re.compile(r"\s+")


def inline(text: str, limit: int = 80) -> str:
    """Trace text that must sit outside the fence (an agent name in a question): defused, on one
    line, at most ``limit`` characters, in double quotes."""
    flat = _SPACE_RUN.sub(" ", defuse(text)).strip()
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return '"' + flat.replace('"', "'") + '"'
