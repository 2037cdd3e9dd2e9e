"""The chat client against a local server: retries, time-outs, schema fallback, the key."""

from __future__ import annotations

import logging

import pytest

from knotwork.errors import BackendUnavailable, ConfigError
from knotwork.llm import ChatClient, LLMConfig

from .chatserver import ChatServer

KEY = "sk-test-SECRET-0123456789"
HI = [{"role": "user", "content": "hello there"}]


def client(server: ChatServer, **kw: object) -> ChatClient:
    opts: dict[str, object] = {"retries": 3, "backoff": 0.01, "timeout": 2.0, "api_key": KEY}
    opts.update(kw)
    return ChatClient(LLMConfig(server.url, "m", **opts))  # type: ignore[arg-type]


def test_429_and_5xx_are_retried_and_usage_is_counted(server: ChatServer) -> None:
    server.script.extend([{"status": 429, "headers": {"Retry-After": "0"}},
                          {"status": 503}, {"content": "hi!"}])
    with client(server) as c:
        result = c.chat(HI)
        assert result.content == "hi!" and result.usage_reported
        usage = c.usage.as_dict()
    assert usage["calls"] == 3 and usage["retries"] == 2 and usage["completions"] == 1
    assert usage["prompt_tokens"] == result.prompt_tokens > 0
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_a_timeout_is_retried(server: ChatServer) -> None:
    server.script.append({"delay": 1.0, "content": "late"})
    with client(server, timeout=0.3) as c:
        assert c.chat(HI).content == "I cannot answer that from the notes."  # the retry's
        assert c.usage.calls == 2 and c.usage.retries == 1


def test_giving_up_names_the_url_and_never_the_key(server: ChatServer,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    server.script.extend([{"status": 500, "text": "boom"}] * 3)
    caplog.set_level(logging.DEBUG)
    with client(server, retries=2) as c, pytest.raises(BackendUnavailable) as info:
        c.chat(HI)
    message = str(info.value)
    assert "HTTP 500" in message and server.url in message
    assert KEY not in message and KEY not in caplog.text and KEY not in repr(c)
    assert KEY not in repr(c.config)


def test_a_4xx_other_than_429_fails_at_once(server: ChatServer) -> None:
    server.script.append({"status": 401, "text": "bad key"})
    with client(server) as c, pytest.raises(BackendUnavailable, match="HTTP 401"):
        c.chat(HI)
    assert len(server.requests) == 1


def test_a_server_refusing_response_format_is_asked_without_it() -> None:
    with ChatServer(refuse_schema=True) as server, client(server) as c:
        schema = {"type": "object"}
        c.chat(HI, schema=schema)
        c.chat(HI, schema=schema)
    assert ["response_format" in r for r in server.requests] == [True, False, False]


def test_missing_usage_is_estimated(server: ChatServer) -> None:
    server.script.append({"content": "an answer of some words", "usage": False})
    with client(server) as c:
        result = c.chat(HI)
    assert not result.usage_reported and result.prompt_tokens > 0 and result.completion_tokens > 0


def test_config_needs_url_and_model() -> None:
    with pytest.raises(ConfigError, match="KNOTWORK_LLM_URL"):
        LLMConfig("", "m")
    with pytest.raises(ConfigError, match="KNOTWORK_LLM_MODEL"):
        LLMConfig("http://127.0.0.1:1/v1", "")
