"""The hashing test embedder: deterministic within and across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from knotwork.embed import HashEmbedder
from knotwork.errors import ConfigError

TEXTS = ["Alice works at Acme.", "The knotwork graph", "héllo wörld 123", ""]


def test_same_vectors_on_every_call() -> None:
    first = HashEmbedder(dim=32).embed(TEXTS)
    second = HashEmbedder(dim=32).embed(TEXTS)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_same_vectors_in_another_process(seed: str) -> None:
    # a different PYTHONHASHSEED would change built-in hash(); blake2b must not care
    code = (
        "import json, sys; from knotwork.embed.hashing import HashEmbedder; "
        "print(json.dumps(HashEmbedder(dim=32).embed(json.loads(sys.argv[1])).tolist()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    result = subprocess.run(
        [sys.executable, "-c", code, json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=60,
    )
    theirs = np.asarray(json.loads(result.stdout), dtype=np.float32)
    np.testing.assert_array_equal(theirs, HashEmbedder(dim=32).embed(TEXTS))


def test_shape_dtype_norm_and_empty_text() -> None:
    vectors = HashEmbedder(dim=16).embed(TEXTS)
    assert vectors.shape == (4, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-6)
    assert not vectors[3].any()  # no words → zero vector, not NaN


def test_shared_words_score_higher() -> None:
    v = HashEmbedder(dim=256).embed(
        ["reset the password", "password reset steps", "banana bread recipe"]
    )
    assert v[0] @ v[1] > v[0] @ v[2]


def test_case_and_punctuation_do_not_matter() -> None:
    v = HashEmbedder().embed(["Hello, World!", "hello world"])
    np.testing.assert_allclose(v[0], v[1])


def test_rejects_tiny_dim() -> None:
    with pytest.raises(ConfigError):
        HashEmbedder(dim=1)
