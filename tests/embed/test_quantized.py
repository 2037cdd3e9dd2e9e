"""MiniLM with int8 arithmetic: made here from the bundled model, offline, kept in the
cache, close to the bundled model's vectors and telling meaning apart as well."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from knotwork.embed import manifest, open_embedder
from knotwork.embed.quantized import QuantizedMiniLMEmbedder

from .test_minilm import PAIRS


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture
def q8(cache: Path, monkeypatch: pytest.MonkeyPatch) -> QuantizedMiniLMEmbedder:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    emb = open_embedder("minilm-q8")
    assert isinstance(emb, QuantizedMiniLMEmbedder)
    return emb


def test_built_from_the_bundled_model_with_no_network(q8: QuantizedMiniLMEmbedder,
                                                      cache: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"building the model tried to open a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    assert q8.embed(["offline is fine"]).shape == (1, 384)
    built = list((cache / "knotwork").glob("*.onnx"))
    assert [p.name for p in built] == [q8._model_path.name]
    import onnx

    ops = {n.op_type for n in onnx.load(str(built[0])).graph.node}
    # the products run in int8: weights quantised, activations quantised per call
    assert {"MatMulInteger", "DynamicQuantizeLinear"} <= ops
    stamp = built[0].stat().st_mtime_ns
    again = QuantizedMiniLMEmbedder()
    again.embed(["kept, not built again"])
    assert built[0].stat().st_mtime_ns == stamp


def test_close_to_the_bundled_model_and_tells_meaning(q8: QuantizedMiniLMEmbedder) -> None:
    bundled = open_embedder("minilm")
    texts = [t for pair in PAIRS for t in pair]
    ours, theirs = q8.embed(texts), bundled.embed(texts)
    assert float((ours * theirs).sum(axis=1).min()) > 0.97
    sims = q8.embed([q for q, _ in PAIRS]) @ q8.embed([d for _, d in PAIRS]).T
    assert list(sims.argmax(axis=1)) == list(range(len(PAIRS)))
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_its_manifest_is_another_models(q8: QuantizedMiniLMEmbedder) -> None:
    m, bundled = manifest(q8), manifest(open_embedder("minilm"))
    assert (m.name, m.dim, m.normalized) == ("minilm-l6-v2-q8", 384, True)
    assert "q8-dynamic-per-channel" in m.version and "max_length=256" in m.version
    assert (m.name, m.version) != (bundled.name, bundled.version)
    assert open_embedder("minilm-l6-v2-q8").version == q8.version  # reopened by its name


def test_a_vector_depends_on_its_text_alone(q8: QuantizedMiniLMEmbedder) -> None:
    """Activations are quantised with one scale a run: texts batched together would move
    each other's vectors, and `knotwork check` would find stored vectors stale."""
    alone = q8.embed(["a kitten naps on the couch"])[0]
    long = "the quarterly tax filing deadline moved again " * 30
    among = q8.embed(["a kitten naps on the couch", long, "x"])[0]
    assert float(alone @ among) > 0.99999
