"""ask_json: a reply validated by a pydantic model, one repair request, nothing unusable cached
(against FakeLLMServer and a real store file)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mastkit.llm.ask import ask_json, parse_json
from mastkit.llm.call import CallUsage
from mastkit.llm.reply import ReplyError
from mastkit.providers import ChatMessage, get_provider
from mastkit.store import Store
from mastkit.testing import FakeLLMServer


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str
    ok: bool


class MyError(ReplyError):
    pass


MSGS = [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="u")]
GOOD = json.dumps({"reason": "r", "ok": True})


def _ask(srv: FakeLLMServer, store: Store | None = None, **kw: Any) -> Answer:
    provider = get_provider("openai:m", base_url=srv.openai_base_url, api_key="k", max_attempts=1)
    return asyncio.run(
        ask_json(
            provider,
            MSGS,
            Answer,
            cache=store,
            budget=None,
            trace_id="t",
            config_hash="c",
            version="v1",
            **kw,
        )
    )


def test_a_valid_reply_is_returned_and_the_schema_is_sent() -> None:
    usage = CallUsage()
    with FakeLLMServer([GOOD]) as srv:
        assert _ask(srv, usage=usage) == Answer(reason="r", ok=True)
        body = srv.chat_requests[0].json
    schema = body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["reason", "ok"] and schema["additionalProperties"] is False
    assert usage.calls == 1


def test_an_unusable_reply_gets_one_repair_and_is_not_cached(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store, FakeLLMServer(['{"ok": "maybe"}', GOOD]) as srv:
        assert _ask(srv, store).ok is True
        repair = srv.chat_requests[1].json["messages"]
        assert repair[-2] == {"role": "assistant", "content": '{"ok": "maybe"}'}
        assert "could not be used" in repair[-1]["content"] and "ok" in repair[-1]["content"]
        assert store._query("SELECT COUNT(*) FROM responses")[0][0] == 1  # only the good reply
    with Store(tmp_path / "m.db") as store, FakeLLMServer(['{"ok": "maybe"}', GOOD]) as srv:
        _ask(srv, store)
        assert srv.request_count == 1  # the first request is asked again; the repair is cached


def test_two_unusable_replies_raise_the_callers_error() -> None:
    with FakeLLMServer(["no json", "still none"]) as srv, pytest.raises(MyError, match="after one repair"):
        _ask(srv, error=MyError)


def test_structured_output_off_sends_no_schema() -> None:
    with FakeLLMServer([GOOD]) as srv:
        _ask(srv, structured_output=False)
        assert (
            "response_format" not in srv.chat_requests[0].json
            or srv.chat_requests[0].json.get("response_format", {}).get("type") != "json_schema"
        )


def test_parse_json_names_the_field() -> None:
    with pytest.raises(ReplyError, match=r"ok: Input should be a valid boolean"):
        parse_json('{"reason": "r", "ok": "maybe"}', Answer)
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_json("prose", Answer)
