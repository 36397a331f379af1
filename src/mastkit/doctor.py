"""``doctor()``: is this installation ready to run? Each check says OK, WARN or FAIL and what to fix.

Checks: the configuration in effect (``MASTKIT_*`` variables, ``mastkit.toml``), the model
provider (one tiny call, ``max_tokens=1``: a rejected key and an unreachable server are told
apart), whether the model has a known price, the database (opens read-only, schema version,
``PRAGMA quick_check``, size of the write-ahead log), optional extras, and a Chromium for the
report's browser tests. Nothing is written: a missing database is not created.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mastkit.errors import MastkitError
from mastkit.providers import (
    ChatMessage,
    ChatRequest,
    ProviderAuthError,
    ProviderError,
    ProviderUnavailableError,
    RetryPolicy,
    get_provider,
    run_sync,
)
from mastkit.providers.base import BaseProvider
from mastkit.providers.pricing import price_info

__all__ = ["Check", "Status", "doctor", "failed"]

Status = Literal["OK", "WARN", "FAIL"]

WAL_WARN_BYTES = 256 * 1024 * 1024
"""A write-ahead log above this size is reported: readers held open keep it from being checkpointed."""

_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
EXTRAS = {"anthropic": "anthropic", "pyarrow": "parquet", "ray": "ray"}
"""Optional packages and the mastkit extra that installs each."""
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


@dataclass(frozen=True)
class Check:
    """One check's result."""

    name: str
    status: Status
    detail: str
    """What was found."""
    fix: str | None = None
    """What to do about a WARN or FAIL."""


def failed(checks: list[Check]) -> bool:
    """Whether any check failed."""
    return any(c.status == "FAIL" for c in checks)


def _masked(name: str, value: str) -> str:
    return "set (hidden)" if any(w in name.upper() for w in _SECRET_WORDS) else repr(value)


def check_config(
    env: Mapping[str, str], settings_file: Path | None, in_effect: Mapping[str, object] | None = None
) -> Check:
    """The settings in effect, the ``MASTKIT_*`` variables set and the settings file (secrets are not shown)."""
    parts = [", ".join(f"{k}={v!s}" for k, v in (in_effect or {}).items())] if in_effect else []
    names = sorted(k for k in env if k.startswith("MASTKIT_"))
    parts += [f"{k}={_masked(k, env[k])}" for k in names] or ["no MASTKIT_* variables set"]
    if settings_file is not None and settings_file.is_file():
        parts.append(f"settings file {settings_file}")
    else:
        parts.append("no mastkit.toml")
    return Check("config", "OK", "; ".join(parts) + " (flags > MASTKIT_* > mastkit.toml > defaults)")


def check_provider(
    model: str | None, *, base_url: str | None = None, api_key: str | None = None, timeout: float = 10.0
) -> list[Check]:
    """The provider answers one tiny request (``max_tokens=1``), and the model's price is known."""
    if not model:
        return [
            Check(
                "provider",
                "WARN",
                "no model configured (only the offline rules annotator will work)",
                "set MASTKIT_MODEL or pass --model provider:name (e.g. openai:gpt-4o-mini)",
            )
        ]
    try:
        provider = get_provider(
            model, base_url=base_url, api_key=api_key, timeout=timeout, retry=RetryPolicy(max_attempts=1)
        )
    except MastkitError as exc:
        return [Check("provider", "FAIL", str(exc), "fix the model spec or set the API key it names")]
    where = (provider.base_url if isinstance(provider, BaseProvider) else None) or f"the {provider.name} API"
    checks = [_ping(provider, where), _price(provider)]
    return checks


def _ping(provider: BaseProvider, where: str) -> Check:
    req = ChatRequest(messages=[ChatMessage(role="user", content="Reply with OK.")], max_tokens=1)

    async def call() -> None:
        try:
            await provider.complete(req)
        finally:
            await provider.aclose()

    quiet = logging.getLogger("mastkit.providers")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the check reports the failure itself
    try:
        run_sync(call())
    except ProviderAuthError as exc:
        return Check(
            "provider",
            "FAIL",
            f"key rejected by {where} (HTTP {exc.status})" if exc.status else f"no key for {provider.spec}",
            f"set {provider._key_hint()} to a valid key",
        )
    except ProviderUnavailableError as exc:
        if exc.kind in ("connection", "timeout"):
            return Check(
                "provider",
                "FAIL",
                f"cannot reach {where} ({exc.kind})",
                "start the server or fix --base-url / MASTKIT_BASE_URL",
            )
        return Check("provider", "WARN", f"{where} answered with an error: {exc.message}", "try again later")
    except ProviderError as exc:
        return Check("provider", "FAIL", f"{where}: {exc.message}", "check the model name and the base URL")
    finally:
        quiet.setLevel(level)
    return Check("provider", "OK", f"{provider.spec} at {where}: key accepted, model answered")


def _price(provider: BaseProvider) -> Check:
    info = price_info(provider)
    if info.known:
        return Check("price", "OK", info.describe())
    return Check(
        "price",
        "WARN",
        f"{info.describe()}: costs show as unknown and --budget is refused",
        "give --price-in/--price-out (USD per million tokens), --prices FILE, or --assume-price MAX",
    )


def check_database(path: Path) -> Check:
    """Opens read-only, schema version, ``PRAGMA quick_check``, write-ahead log size."""
    from mastkit.store import db as store_db

    if not path.exists():
        return Check("database", "WARN", f"{path} does not exist yet", "it is created by the first run")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            quick = con.execute("PRAGMA quick_check").fetchone()
        finally:
            con.close()
    except sqlite3.Error as exc:
        return Check(
            "database", "FAIL", f"{path}: cannot read it as a mastkit database: {exc}", "use another --db"
        )
    current = len(store_db._MIGRATIONS)
    version = int(row[0]) if row else 0
    wal = Path(f"{path}-wal")
    wal_size = wal.stat().st_size if wal.exists() else 0
    detail = (
        f"{path}: schema {version} (this mastkit: {current}), quick_check {quick[0]}, WAL {wal_size:,} bytes"
    )
    if quick[0] != "ok":
        return Check("database", "FAIL", detail, "the file is damaged: restore a copy or start a new --db")
    if version > current:
        return Check("database", "FAIL", detail, "written by a newer mastkit: upgrade mastkit")
    if wal_size > WAL_WARN_BYTES:
        return Check(
            "database", "WARN", detail, "close long-running readers so SQLite can checkpoint the WAL"
        )
    return Check("database", "OK", detail)


def check_extras(model: str | None) -> list[Check]:
    """Optional packages: missing is fine unless the configured model needs one."""
    checks = []
    vendor = (model or "").split(":", 1)[0].lower()
    for module, extra in EXTRAS.items():
        present = importlib.util.find_spec(module) is not None
        needed = module == "anthropic" and vendor in ("anthropic", "claude")
        if present:
            checks.append(Check(f"extra {module}", "OK", "installed"))
        elif needed:
            checks.append(
                Check(
                    f"extra {module}",
                    "FAIL",
                    f"not installed, needed by {model}",
                    f"pip install 'mastkit[{extra}]'",
                )
            )
        else:
            checks.append(
                Check(f"extra {module}", "OK", f"not installed (optional: pip install 'mastkit[{extra}]')")
            )
    return checks


def check_chromium(env: Mapping[str, str]) -> Check:
    """A Chromium for the HTML report's browser tests (``MASTKIT_CHROMIUM`` or on the PATH)."""
    configured = env.get("MASTKIT_CHROMIUM")
    if configured:
        found = shutil.which(configured) or (configured if os.path.exists(configured) else None)
    else:
        found = next((p for p in (shutil.which(n) for n in CHROMIUM_NAMES) if p), None)
    if found:
        return Check("chromium", "OK", found)
    return Check(
        "chromium",
        "WARN",
        "no Chromium found: the report's browser tests skip",
        "install chromium, or set MASTKIT_CHROMIUM to its path",
    )


def doctor(
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    db: str | Path = "mastkit.db",
    timeout: float = 10.0,
    env: Mapping[str, str] | None = None,
    settings_file: Path | None = None,
) -> list[Check]:
    """Run every check and return their results (nothing is printed; see :func:`failed`).

    ``model``, ``base_url`` and ``db`` default to nothing; the CLI fills them from flags,
    ``MASTKIT_*`` variables and ``mastkit.toml`` as every verb does.
    """
    env = os.environ if env is None else env
    return [
        check_config(env, settings_file, {"model": model, "base_url": base_url, "db": db}),
        *check_provider(model, base_url=base_url, api_key=api_key, timeout=timeout),
        check_database(Path(db)),
        *check_extras(model),
        check_chromium(env),
    ]
