"""The static embedder: a table looked up per token, kept in the user's cache, its own
model as far as the manifest check goes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knotwork import Knotwork
from knotwork.embed import open_embedder
from knotwork.embed.static import StaticEmbedder
from knotwork.errors import ConfigError


@pytest.fixture
def cached_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    # a table already built (the build itself, MiniLM over 30,522 tokens, is
    # test_static_build.py's, in the slow lane): random rows of 256 columns
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    emb = StaticEmbedder()
    vocab = emb_vocab()
    table = np.random.default_rng(1).standard_normal((vocab, 256)).astype(np.float32)
    safe = emb.version.replace("=", "-").replace(";", "_")
    (tmp_path / "cache" / "knotwork").mkdir(parents=True)
    np.save(tmp_path / "cache" / "knotwork" / f"{safe}.npy", table)
    return table


def emb_vocab() -> int:
    from knotwork.embed.minilm import MiniLMEmbedder

    return int(MiniLMEmbedder()._tokenizer().get_vocab_size())


def test_a_text_is_the_mean_of_its_tokens_rows(cached_table: np.ndarray) -> None:
    emb = open_embedder("minilm-static")
    vecs = emb.embed(["a cat", "", "a cat"])
    assert vecs.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vecs[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[2])
    from knotwork.embed.minilm import MiniLMEmbedder

    ids = MiniLMEmbedder()._tokenizer().encode("a cat").ids
    want = cached_table[ids].mean(axis=0)
    assert np.allclose(vecs[0], want / np.linalg.norm(want), atol=1e-5)
    with pytest.raises(TypeError):
        emb.embed("a cat")


def test_its_vectors_and_minilms_do_not_mix(cached_table: np.ndarray, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nSome text about cats.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="minilm-static") as kw:
        kw.ingest(embed=True)
        assert kw.embedding_status() == "complete"
        assert kw.search("cats", mode="vector")[0].path == "a.md"
    with (Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="minilm") as kw,
          pytest.raises(ConfigError, match="minilm-static")):
        kw.embed()


def test_dim_is_checked() -> None:
    with pytest.raises(ConfigError, match="dim in"):
        StaticEmbedder(dim=4)
