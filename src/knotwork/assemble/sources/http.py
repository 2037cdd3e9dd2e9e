"""The ``http`` source: another knotwork's REST API (``POST /context``).

``http://127.0.0.1:3031`` as a spec; as a table it also takes ``scope`` (a list, or
comma-separated) and ``token_env``, the environment variable holding the server's bearer
token (a token is never written in the config file). Standard library only: a request
bounded by the source's timeout, its failures reported with the server's own message.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ...errors import ConfigError
from ..model import Fetched
from .knowledge import items_from_context
from .local import _names
from .registry import SourceEnv, SourceSpec

OPTIONS = ("scope", "token_env", "min_confidence")
_MAX_ENTITIES = 200  # what the server's route accepts
_MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HttpSource:
    name: str
    url: str
    scopes: tuple[str, ...] | None = None
    token_env: str | None = None
    min_confidence: float = 0.0
    timeout: float = 30.0  # the socket's; the assembler bounds the whole call anyway

    @classmethod
    def from_spec(cls, spec: SourceSpec, env: SourceEnv) -> HttpSource:
        spec.refuse_unknown(OPTIONS)
        url = spec.target.rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"source {spec.name!r}: not an http(s) URL", key="source")
        token_env = spec.options.get("token_env")
        if token_env is not None and not isinstance(token_env, str):
            raise ConfigError(f"source {spec.name!r}: token_env names a variable", key="token_env")
        return cls(spec.name, url, _names(spec.options.get("scope")), token_env,
                   float(spec.options.get("min_confidence", 0.0)))

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched:
        body: dict[str, Any] = {"query": query, "max_entities": min(limit, _MAX_ENTITIES),
                                "max_tokens": 0, "min_confidence": self.min_confidence}
        if self.scopes:
            body["scopes"] = list(self.scopes)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token_env:
            token = os.environ.get(self.token_env)
            if not token:
                return Fetched(error=f"environment variable {self.token_env} (token_env) is"
                                     " not set")
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url + "/context", json.dumps(body).encode(),
                                         headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read(_MAX_BYTES))
        except urllib.error.HTTPError as exc:
            return Fetched(error=f"HTTP {exc.code} from {self.url}/context: {_message(exc)}")
        except urllib.error.URLError as exc:
            return Fetched(error=f"cannot reach {self.url}: {exc.reason}")
        except (OSError, ValueError) as exc:  # a reset, a time-out, a body that is not JSON
            return Fetched(error=f"{self.url}/context: {type(exc).__name__}: {exc}")
        if not isinstance(data, dict):
            return Fetched(error=f"{self.url}/context answered {type(data).__name__}, not an"
                                 " object")
        return Fetched(tuple(items_from_context(data, origin=self.url)))


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        data = json.loads(exc.read(64 * 1024))
        return str(data.get("message") or data.get("detail") or data)
    except (OSError, ValueError, AttributeError):
        return str(exc.reason)
