"""Talk to any OpenAI-compatible ``POST /chat/completions`` endpoint with httpx.

Ollama, vLLM, llama.cpp's server, LM Studio, LiteLLM and hosted APIs speak this protocol,
so one small client covers them and no vendor SDK is needed. What it adds to a bare POST:

- a timeout per request, and retries with exponential backoff (honouring ``Retry-After``)
  on 429, 5xx, time-outs and dropped connections; other 4xx fail at once;
- a concurrency limit shared by every thread that uses the client;
- token accounting from each response's ``usage`` (``ChatClient.usage``);
- ``response_format`` with a JSON schema, dropped for the rest of the client's life when
  the server refuses it with a 400/422 (the caller's tolerant parser takes over).

The API key goes in the ``Authorization`` header and nowhere else: no error, log line or
``repr`` holds it. Every failure becomes ``BackendUnavailable`` whose hint names the URL.

    >>> c = ChatClient(LLMConfig("http://127.0.0.1:11434/v1", "qwen2.5:7b"))  # doctest: +SKIP
    >>> c.chat([{"role": "user", "content": "hi"}]).content                 # doctest: +SKIP
"""

from __future__ import annotations

import email.utils
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..errors import BackendUnavailable, ConfigError

__all__ = ["ChatClient", "ChatResult", "LLMConfig", "Usage"]

log = logging.getLogger("knotwork.llm")
_BACKEND = "openai-compatible chat"
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 30.0


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where the model is and how to call it. ``api_key`` is kept out of ``repr``."""

    url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0
    retries: int = 4
    backoff: float = 0.5  # seconds before the first retry; doubled each time
    concurrency: int = 4
    max_tokens: int = 1024  # the completion cap sent with every request

    def __post_init__(self) -> None:
        if not self.url:
            raise ConfigError("no model endpoint configured", key="llm_url",
                              hint="set KNOTWORK_LLM_URL, e.g. http://localhost:11434/v1")
        if not self.model:
            raise ConfigError("no model name configured", key="llm_model",
                              hint="set KNOTWORK_LLM_MODEL, e.g. qwen2.5:7b-instruct")
        if self.concurrency < 1 or self.retries < 0 or self.timeout <= 0:
            raise ConfigError("llm_concurrency must be >= 1, retries >= 0, timeout > 0")


@dataclass(frozen=True, slots=True)
class ChatResult:
    """One completion: its text and the tokens the server counted (``usage``)."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    usage_reported: bool  # False: the server sent no ``usage``; the caller estimated

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Usage:
    """Calls and tokens spent through one client, safe to update from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0  # HTTP requests sent, retries included
        self.completions = 0  # requests that returned a completion
        self.retries = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def add(self, *, calls: int = 0, completions: int = 0, retries: int = 0,
            prompt: int = 0, completion: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.completions += completions
            self.retries += retries
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {"calls": self.calls, "completions": self.completions,
                    "retries": self.retries, "prompt_tokens": self.prompt_tokens,
                    "completion_tokens": self.completion_tokens,
                    "total_tokens": self.prompt_tokens + self.completion_tokens}


class ChatClient:
    """A chat-completions client: one ``httpx.Client``, shared by the caller's threads."""

    def __init__(self, config: LLMConfig, *, estimate: Any = None) -> None:
        self.config = config
        self.url = config.url.rstrip("/") + "/chat/completions"
        self.usage = Usage()
        self._gate = threading.BoundedSemaphore(config.concurrency)
        self._schema_ok = True  # cleared when the server refuses ``response_format``
        self._estimate = estimate or (lambda text: len(text) // 4 + 1)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.Client(timeout=httpx.Timeout(config.timeout), headers=headers,
                                  limits=httpx.Limits(max_connections=config.concurrency))

    def __repr__(self) -> str:
        return f"ChatClient(url={self.url!r}, model={self.config.model!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat(self, messages: Sequence[Mapping[str, str]], *,
             schema: Mapping[str, Any] | None = None, max_tokens: int | None = None
             ) -> ChatResult:
        """Send ``messages``; with ``schema``, ask for JSON that follows it."""
        body: dict[str, Any] = {
            "model": self.config.model, "messages": [dict(m) for m in messages],
            "temperature": 0, "max_tokens": max_tokens or self.config.max_tokens}
        if schema is not None and self._schema_ok:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "knotwork", "schema": dict(schema), "strict": True}}
        with self._gate:
            payload = self._post(body)
        return self._result(payload, messages)

    def _post(self, body: dict[str, Any]) -> Any:
        """POST with retries; a refused ``response_format`` is dropped and sent again."""
        attempt = 0
        while True:
            self.usage.add(calls=1)
            try:
                response = self._http.post(self.url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                reason = "timed out" if isinstance(exc, httpx.TimeoutException) else str(exc)
                if attempt >= self.config.retries:
                    raise BackendUnavailable(
                        _BACKEND, hint=f"POST {self.url} failed after {attempt + 1}"
                        f" attempts: {reason}") from exc
                self._wait(attempt, None, reason)
                attempt += 1
                continue
            status = response.status_code
            if status < 400:
                try:
                    return response.json()
                except ValueError as exc:
                    raise BackendUnavailable(_BACKEND, hint=f"{self.url} did not return JSON:"
                                             f" {response.text[:120]!r}") from exc
            detail = response.text[:300].strip()
            if status in (400, 422) and "response_format" in body and self._refuses_schema(
                    detail):
                log.info("%s refuses response_format; parsing free text instead", self.url)
                self._schema_ok = False
                body = {k: v for k, v in body.items() if k != "response_format"}
                continue
            if status in _RETRY_STATUS and attempt < self.config.retries:
                self._wait(attempt, response.headers.get("retry-after"), f"HTTP {status}")
                attempt += 1
                continue
            raise BackendUnavailable(_BACKEND, hint=f"POST {self.url} returned HTTP {status}:"
                                     f" {detail or response.reason_phrase}")

    @staticmethod
    def _refuses_schema(detail: str) -> bool:
        low = detail.lower()
        return any(w in low for w in ("response_format", "json_schema", "schema"))

    def _wait(self, attempt: int, retry_after: str | None, why: str) -> None:
        delay = self.config.backoff * (2 ** attempt)
        given = _retry_after(retry_after)
        if given is not None:
            delay = min(max(delay, given), _MAX_RETRY_AFTER)
        self.usage.add(retries=1)
        log.info("%s: %s, retrying in %.2fs", self.url, why, delay)
        time.sleep(delay)

    def _result(self, payload: Any, messages: Sequence[Mapping[str, str]]) -> ChatResult:
        try:
            message = payload["choices"][0]["message"]
            content = message.get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BackendUnavailable(_BACKEND, hint=f"{self.url} returned an unexpected body:"
                                     f" {str(payload)[:120]}") from exc
        usage = payload.get("usage") if isinstance(payload, dict) else None
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            prompt = int(usage["prompt_tokens"])
            completion = int(usage.get("completion_tokens") or 0)
            reported = True
        else:  # a server that counts nothing: estimate, so a budget still holds
            prompt = sum(self._estimate(m.get("content", "")) for m in messages)
            completion = self._estimate(content)
            reported = False
        self.usage.add(completions=1, prompt=prompt, completion=completion)
        return ChatResult(str(content), prompt, completion, reported)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
