"""The static table distilled from MiniLM keeps its sense of meaning (slow: ~40 s)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knotwork.embed.static import StaticEmbedder


def test_the_distilled_table_tells_near_from_far(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    emb = StaticEmbedder(dim=64)
    cat, kitten, tax = emb.embed(["a cat sat on the mat", "a kitten on a rug",
                                  "the quarterly tax filing deadline"])
    assert float(cat @ kitten) > float(cat @ tax) + 0.2
    assert list((tmp_path / "knotwork").glob("*.npy"))  # built once, kept
    assert np.array_equal(StaticEmbedder(dim=64).embed(["a cat"]), emb.embed(["a cat"]))
