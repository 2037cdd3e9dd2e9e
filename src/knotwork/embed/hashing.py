"""A deterministic hashing embedder, for unit tests only.

It has no semantics beyond shared words and spelling, so never use it for real
retrieval. What it offers tests is what a model cannot: it loads in microseconds, needs
no files, and gives the same vector for the same text in every process and on every
machine. That is why it hashes with ``blake2b`` and not the built-in ``hash()``, which
is salted per process (PYTHONHASHSEED).

Each text becomes lowercase word tokens; every token, and every character trigram of
``#token#``, is hashed to a bucket and a sign (a "signed bag", so collisions cancel out
on average instead of piling up), then the vector is L2-normalised. A text with no word
characters embeds as the zero vector.

    >>> HashEmbedder(dim=8).embed(["Hello, world"]).shape
    (1, 8)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from knotwork.embed.base import l2_normalize
from knotwork.errors import ConfigError

if TYPE_CHECKING:
    from knotwork.embed.base import FloatMatrix

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5  # why lower: trigrams add fuzziness; whole words should dominate


@lru_cache(maxsize=65536)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Hash a feature to (index, ±1), stable across processes and platforms."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


class HashEmbedder:
    """Embed texts as signed bags of hashed words and trigrams (unit tests only)."""

    name = "hash"
    version = "1"  # bump when the features or hashing change: vectors would differ
    normalized = True

    def __init__(self, *, dim: int = 64) -> None:
        if dim < 2:
            raise ConfigError("hash embedder needs dim >= 2", hint=f"got dim={dim}")
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return float32 ``[len(texts), dim]`` unit (or zero) vectors, in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _WORD.findall(text.lower()):
                index, sign = _bucket("w:" + token, self.dim)
                out[row, index] += sign * _WORD_WEIGHT
                padded = f"#{token}#"
                for i in range(len(padded) - 2):
                    index, sign = _bucket("c:" + padded[i : i + 3], self.dim)
                    out[row, index] += sign * _TRIGRAM_WEIGHT
        return l2_normalize(out)
