"""open_embedder chooses by name and explains its refusals; manifests describe embedders."""

from __future__ import annotations

import subprocess
import sys

import pytest

from knotwork.embed import (
    EmbedderManifest,
    HashEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    manifest,
    open_embedder,
    valid_specs,
)
from knotwork.errors import BackendUnavailable, ConfigError


def test_valid_specs_are_listed() -> None:
    assert valid_specs() == ["auto", "minilm", "minilm-q8", "hash", "minilm-static",
                            "openai:<model>", "st:<model>"]


@pytest.mark.parametrize("spec", ["bogus", "minilm:extra", "hash:64", "OPENAI", "st:", "openai:  "])
def test_bad_specs_list_the_valid_ones(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        open_embedder(spec)
    for valid in valid_specs():
        assert valid in str(info.value)


def test_unknown_option_lists_valid_options() -> None:
    with pytest.raises(ConfigError, match="valid options: dim"):
        open_embedder("hash", size=3)


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ("minilm", MiniLMEmbedder),
        ("", MiniLMEmbedder),
        ("minilm-l6-v2-int8", MiniLMEmbedder),
        ("hash", HashEmbedder),
        ("openai:nomic-embed-text", OpenAIEmbedder),
    ],
)
def test_specs_open_their_backend(spec: str, cls: type) -> None:
    embedder = open_embedder(spec)
    assert isinstance(embedder, cls)


def test_options_reach_the_constructor() -> None:
    embedder = open_embedder("openai:m", base_url="http://127.0.0.1:1/v1", dim=8)
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.url == "http://127.0.0.1:1/v1/embeddings"
    assert manifest(embedder) == EmbedderManifest("openai:m", "unversioned", 8, True)


def test_manifest_of_hash() -> None:
    assert manifest(open_embedder("hash", dim=32)) == EmbedderManifest("hash", "1", 32, True)


def test_sentence_transformers_missing_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import → ImportError
    with pytest.raises(BackendUnavailable) as info:
        open_embedder("st:all-MiniLM-L6-v2")
    assert info.value.backend == "sentence-transformers"
    assert "pip install 'knotwork[torch]'" in str(info.value)


def test_importing_the_package_loads_no_runtime() -> None:
    code = (
        "import sys, knotwork.embed; "
        "print([m for m in ('onnxruntime', 'tokenizers', 'torch') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_base_imports_none_of_its_backends() -> None:
    """The backends import ``embed.base``; the registry, not base, imports them."""
    import ast
    from pathlib import Path

    import knotwork.embed.base as base

    tree = ast.parse(Path(base.__file__).read_text(encoding="utf-8"))
    names = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in names if m.startswith("knotwork.embed")}
