"""``mastkit doctor`` against FakeLLMServer (key accepted, key rejected, nothing listening) and temp databases."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mastkit.cli.main import app
from mastkit.doctor import Check, check_database, doctor, failed
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply

KEY = "sk-doctor-test-123456"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MASTKIT_MODEL", "MASTKIT_BASE_URL", "MASTKIT_DB", "MASTKIT_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_doctor_ok_makes_one_tiny_call(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    Store(db).close()
    with FakeLLMServer(default=Reply("OK"), api_key=KEY) as srv:
        checks = doctor(model="openai:gpt-4o-mini", base_url=srv.openai_base_url, db=db)
        assert srv.request_count == 1
        assert srv.requests[0].json["max_tokens"] == 1
    c = _by_name(checks)
    assert c["provider"].status == "OK" and "key accepted" in c["provider"].detail
    assert c["price"].status == "OK" and "$0.15/$0.60" in c["price"].detail
    assert c["database"].status == "OK" and "quick_check ok" in c["database"].detail
    assert not failed(checks)


def test_doctor_key_rejected(tmp_path: Path) -> None:
    with FakeLLMServer(default=Reply("OK"), api_key="another-key") as srv:
        checks = doctor(model="openai:gpt-4o-mini", base_url=srv.openai_base_url, db=tmp_path / "m.db")
        assert srv.request_count == 1  # one attempt, no retries
    c = _by_name(checks)["provider"]
    assert c.status == "FAIL" and "key rejected" in c.detail and "401" in c.detail
    assert c.fix is not None and "OPENAI_API_KEY" in c.fix
    assert KEY not in json.dumps([c.__dict__ for c in checks])
    assert failed(checks)


def test_doctor_cannot_reach(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    checks = doctor(model="openai:gpt-4o-mini", base_url=url, db=tmp_path / "m.db", timeout=2.0)
    c = _by_name(checks)["provider"]
    assert c.status == "FAIL" and f"cannot reach {url}" in c.detail


def test_doctor_unknown_price_and_no_model(tmp_path: Path) -> None:
    with FakeLLMServer(default=Reply("OK")) as srv:
        c = _by_name(doctor(model="openai:mystery", base_url=srv.openai_base_url, db=tmp_path / "m.db"))
    assert c["price"].status == "WARN" and "--budget is refused" in c["price"].detail
    none = _by_name(doctor(model=None, db=tmp_path / "m.db"))
    assert none["provider"].status == "WARN" and "price" not in none


def test_doctor_database_states(tmp_path: Path) -> None:
    missing = check_database(tmp_path / "none.db")
    assert missing.status == "WARN" and not (tmp_path / "none.db").exists()  # not created
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    assert check_database(junk).status == "FAIL"
    newer = tmp_path / "newer.db"
    Store(newer).close()
    with sqlite3.connect(newer) as con:
        con.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    result = check_database(newer)
    assert result.status == "FAIL" and "newer mastkit" in (result.fix or "")


def test_doctor_cli_exit_codes_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "m.db"
    Store(db).close()
    monkeypatch.setenv("MASTKIT_API_KEY", "sk-secret-should-not-show")
    with FakeLLMServer(default=Reply("OK"), api_key=KEY) as srv:
        ok = CliRunner().invoke(app, ["doctor", "--model", "openai:gpt-4o-mini", "--base-url",
                                      srv.openai_base_url, "--db", str(db), "--json"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    rows = {r["name"]: r for r in json.loads(ok.stdout)}
    assert rows["provider"]["status"] == "OK"
    assert "MASTKIT_API_KEY=set (hidden)" in rows["config"]["detail"]
    assert "sk-secret-should-not-show" not in ok.output
    bad = CliRunner().invoke(app, ["doctor", "--model", "openai:gpt-4o-mini", "--base-url",
                                   f"http://127.0.0.1:{_closed_port()}/v1", "--db", str(db)])  # fmt: skip
    assert bad.exit_code == 1
    assert "cannot reach" in bad.output
