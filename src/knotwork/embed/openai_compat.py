"""Embed through any OpenAI-compatible ``POST /embeddings`` endpoint, stdlib only.

Ollama, vLLM, llama.cpp's server, LM Studio, LiteLLM and OpenAI itself all speak this
protocol, so one small client covers them. It uses ``urllib.request`` rather than an
HTTP library so this backend adds no dependency.

Defaults come from the environment only when an argument is None: ``KNOTWORK_EMBED_URL``
(else Ollama's ``http://127.0.0.1:11434/v1``) and ``KNOTWORK_EMBED_API_KEY`` (else
``OPENAI_API_KEY``; a local server needs none). Why read the environment here, against
the "configuration is read once" rule: these are the conventional variables for this
protocol; the composition root should still pass ``base_url``/``api_key`` explicitly.

Every network, HTTP or protocol failure becomes ``BackendUnavailable`` whose hint names
the URL and, for HTTP errors, the status.

    >>> e = OpenAIEmbedder("nomic-embed-text")          # doctest: +SKIP
    >>> e.embed(["hello"]).shape                         # doctest: +SKIP
    (1, 768)
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from knotwork.embed.base import l2_normalize
from knotwork.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    from knotwork.embed.base import FloatMatrix

__all__ = ["DEFAULT_BASE_URL", "OpenAIEmbedder"]

DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"
_BACKEND = "openai-compatible embeddings"
_PROBE = "dimension probe"


class OpenAIEmbedder:
    """Embed with a model served behind an OpenAI-compatible embeddings API.

    ``dim`` is discovered from the first response; reading ``dim`` before any
    ``embed`` call sends one short probe request (pass ``dim=`` to avoid it, and to
    have a mismatching server caught). ``version`` cannot be known from the protocol:
    pass one (e.g. the model digest) to make a model upgrade invalidate stored vectors.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        normalize: bool = True,
        version: str = "unversioned",
    ) -> None:
        if not model:
            raise ConfigError("openai embedder needs a model name", key="model")
        if batch_size < 1:
            raise ConfigError("batch_size must be >= 1", hint=f"got {batch_size}")
        self.model = model
        self.name = f"openai:{model}"
        self.version = version
        self.normalized = normalize
        self.base_url = (
            base_url or os.environ.get("KNOTWORK_EMBED_URL") or DEFAULT_BASE_URL
        ).rstrip("/")
        self.api_key = (
            api_key or os.environ.get("KNOTWORK_EMBED_API_KEY") or os.environ.get("OPENAI_API_KEY")
        )
        self.batch_size = batch_size
        self.timeout = timeout
        self._dim = dim

    @property
    def url(self) -> str:
        """The full endpoint this embedder posts to."""
        return f"{self.base_url}/embeddings"

    @property
    def dim(self) -> int:
        """The vector dimension, asking the server once if not yet known."""
        if self._dim is None:
            self.embed([_PROBE])
        assert self._dim is not None  # set by embed(); for the type checker
        return self._dim

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return float32 ``[len(texts), dim]`` in input order, in requests of ``batch_size``."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._request(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        out = np.concatenate(parts, axis=0)
        return l2_normalize(out) if self.normalized else out

    def _request(self, batch: list[str]) -> FloatMatrix:
        """POST one batch and return its vectors, checking count and dimension."""
        body = json.dumps({"model": self.model, "input": batch}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        payload = self._send(request)
        vectors = _parse(payload, expected=len(batch), url=self.url)
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise BackendUnavailable(
                _BACKEND,
                hint=f"{self.url} returned {vectors.shape[1]}-d vectors, expected {self._dim}",
            )
        return vectors

    def _send(self, request: urllib.request.Request) -> Any:
        """Send ``request``; translate every transport failure at this one boundary."""
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            with exc:  # why: an unclosed error body leaks its socket (ResourceWarning)
                detail = exc.read(300).decode("utf-8", "replace").strip()
            raise BackendUnavailable(
                _BACKEND, hint=f"POST {self.url} returned HTTP {exc.code}: {detail or exc.reason}"
            ) from exc
        except urllib.error.URLError as exc:
            raise BackendUnavailable(
                _BACKEND, hint=f"cannot reach {self.url}: {exc.reason}"
            ) from exc
        except (TimeoutError, OSError) as exc:  # a read timeout or reset after connecting
            raise BackendUnavailable(_BACKEND, hint=f"POST {self.url} failed: {exc}") from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise BackendUnavailable(
                _BACKEND, hint=f"{self.url} did not return JSON: {raw[:120]!r}"
            ) from exc


def _parse(payload: Any, *, expected: int, url: str) -> FloatMatrix:
    """Read ``{"data": [{"index": i, "embedding": [...]}, ...]}`` into rows by index."""
    try:
        items = payload["data"]
        # Why sort: the protocol allows data in any order; "index" is the input position.
        ordered = sorted(enumerate(items), key=lambda p: int(p[1].get("index", p[0])))
        vectors = np.asarray([item["embedding"] for _, item in ordered], dtype=np.float32)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BackendUnavailable(
            _BACKEND, hint=f"{url} returned an unexpected body: {str(payload)[:120]}"
        ) from exc
    if vectors.ndim != 2 or vectors.shape[0] != expected:
        raise BackendUnavailable(
            _BACKEND, hint=f"{url} returned {vectors.shape[0]} vectors for {expected} inputs"
        )
    return vectors
