"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 speaking /v1/embeddings."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from knotwork.embed import HashEmbedder, OpenAIEmbedder
from knotwork.errors import BackendUnavailable

DIM = 8


@dataclass
class Behaviour:
    """What the fake server does; tests change it and read what it saw."""

    status: int = 200
    body: Any = None  # when set, sent verbatim instead of embeddings
    delay: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def make_handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    reference = HashEmbedder(dim=DIM)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            request = json.loads(raw)
            behaviour.requests.append(request)
            behaviour.headers.append(dict(self.headers))
            if behaviour.delay:
                time.sleep(behaviour.delay)
            if self.path != "/v1/embeddings":
                self._send(404, {"error": f"no route {self.path}"})
            elif behaviour.status != 200:
                self._send(behaviour.status, {"error": {"message": "model exploded"}})
            elif behaviour.body is not None:
                self._send(200, behaviour.body)
            else:
                # un-normalised vectors, listed in reverse: the client must sort by index
                vectors = reference.embed(request["input"]) * 3.0
                data = [
                    {"object": "embedding", "index": i, "embedding": v.tolist()}
                    for i, v in enumerate(vectors)
                ]
                self._send(200, {"object": "list", "data": data[::-1], "model": request["model"]})

        def _send(self, status: int, payload: Any) -> None:
            body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            try:
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client already gave up (the timeout test)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Behaviour]]:
    behaviour = Behaviour()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(behaviour))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", behaviour
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_embeds_in_order_batched_and_normalised(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    texts = [f"text number {i} about topic {i % 3}" for i in range(5)]
    embedder = OpenAIEmbedder("fake-model", base_url=url, api_key="", batch_size=2)
    vectors = embedder.embed(texts)
    assert vectors.shape == (5, DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, HashEmbedder(dim=DIM).embed(texts), atol=1e-6)
    assert [len(r["input"]) for r in behaviour.requests] == [2, 2, 1]
    assert {r["model"] for r in behaviour.requests} == {"fake-model"}
    assert embedder.dim == DIM and len(behaviour.requests) == 3  # learnt, no probe


def test_dim_is_probed_when_unknown(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    embedder = OpenAIEmbedder("m", base_url=url)
    assert embedder.dim == DIM
    assert len(behaviour.requests) == 1


def test_without_normalisation_vectors_are_raw(server: tuple[str, Behaviour]) -> None:
    url, _ = server
    embedder = OpenAIEmbedder("m", base_url=url, normalize=False)
    assert not embedder.normalized
    norms = np.linalg.norm(embedder.embed(["raw vector"]), axis=1)
    np.testing.assert_allclose(norms, 3.0, atol=1e-5)


def test_url_and_key_from_environment(
    server: tuple[str, Behaviour], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, behaviour = server
    monkeypatch.setenv("KNOTWORK_EMBED_URL", url + "/")
    monkeypatch.delenv("KNOTWORK_EMBED_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    OpenAIEmbedder("m").embed(["hi"])
    assert behaviour.headers[0]["Authorization"] == "Bearer sk-test"


def test_http_500_is_backend_unavailable_with_status(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.status = 500
    with pytest.raises(BackendUnavailable) as info:
        OpenAIEmbedder("m", base_url=url).embed(["boom"])
    message = str(info.value)
    assert "HTTP 500" in message and url in message and "model exploded" in message


def test_wrong_path_reports_404(server: tuple[str, Behaviour]) -> None:
    url, _ = server
    with pytest.raises(BackendUnavailable, match="HTTP 404"):
        OpenAIEmbedder("m", base_url=url.removesuffix("/v1")).embed(["x"])


def test_unreachable_port_is_backend_unavailable() -> None:
    with socket.socket() as probe:  # find a free port, then leave it closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAIEmbedder("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
    with pytest.raises(BackendUnavailable, match=f"cannot reach http://127.0.0.1:{port}"):
        embedder.embed(["x"])


def test_timeout_is_backend_unavailable(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.delay = 0.5
    with pytest.raises(BackendUnavailable):
        OpenAIEmbedder("m", base_url=url, timeout=0.1).embed(["slow"])


@pytest.mark.parametrize(
    "body",
    [
        b"<html>not json</html>",
        {"unexpected": True},
        {"data": [{"index": 0, "embedding": [0.1, 0.2]}, {"index": 1, "embedding": [0.3]}]},
        {"data": [{"index": 0, "embedding": [0.1, 0.2]}]},  # one vector for two inputs
    ],
)
def test_malformed_responses_are_backend_unavailable(
    server: tuple[str, Behaviour], body: Any
) -> None:
    url, behaviour = server
    behaviour.body = body
    with pytest.raises(BackendUnavailable):
        OpenAIEmbedder("m", base_url=url).embed(["a", "b"])


def test_dimension_change_is_caught(server: tuple[str, Behaviour]) -> None:
    url, _ = server
    with pytest.raises(BackendUnavailable, match="expected 16"):
        OpenAIEmbedder("m", base_url=url, dim=16).embed(["a"])
