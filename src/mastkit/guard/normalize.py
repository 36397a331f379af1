"""Normalising tool arguments and results, so that calls differing only in noise compare equal."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_SPACE = re.compile(r"\s+")
_IDS = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # uuid
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b"  # long hex ids (hashes, request ids)
    r"|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"  # timestamps
    r"|\b\d{10,}\b",  # epoch times, long numeric ids
    re.IGNORECASE,
)
_ID_KEYS = frozenset({"id", "request_id", "requestid", "trace_id", "call_id", "nonce", "timestamp", "ts"})


def normalize_text(text: str) -> str:
    """``text`` with runs of whitespace collapsed and ids, hashes and timestamps replaced by ``<id>``."""
    return _IDS.sub("<id>", _SPACE.sub(" ", text).strip())


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return normalize_text(value)
    if isinstance(value, dict):
        return {str(k): ("<id>" if str(k).lower() in _ID_KEYS else _norm(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def normalize_args(arguments: Any, raw: str | None = None) -> str:
    """Canonical text of a call's arguments: JSON with sorted keys and no spaces, strings
    normalised by :func:`normalize_text`, id-like keys (``request_id``, ``nonce``) blanked.

    Arguments that are a JSON string are parsed first; unparsable text is normalised as text."""
    if arguments is None and raw is not None:
        try:
            arguments = json.loads(raw)
        except ValueError:
            return normalize_text(raw)
    if isinstance(arguments, str):
        stripped = arguments.strip()
        if stripped[:1] in ("{", "["):
            try:
                arguments = json.loads(stripped)
            except ValueError:
                return normalize_text(arguments)
        else:
            return normalize_text(arguments)
    try:
        return json.dumps(_norm(arguments), sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return normalize_text(repr(arguments))


def fingerprint(text: str | None) -> str:
    """A short hash of a normalised result text (equal results give equal fingerprints)."""
    if not text:
        return ""
    return hashlib.blake2b(normalize_text(text).encode(), digest_size=8).hexdigest()
