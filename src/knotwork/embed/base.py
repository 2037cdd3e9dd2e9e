"""The Embedder Protocol and its manifest (``embed.registry`` chooses a backend by name).

An embedder turns texts into a float32 matrix, one row per text. The store keeps the
embedder's :class:`EmbedderManifest` next to the vectors it wrote, so a change of model,
version or dimension is detected and the vector index rebuilt rather than silently
mixing incomparable vectors.

This module imports none of its sibling backends: they import it (``l2_normalize``,
``FloatMatrix``), and ``embed.registry`` imports them when one is chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # numpy loads with the first vector, not with the package
    import numpy as np
    import numpy.typing as npt

    FloatMatrix = npt.NDArray[np.float32]

__all__ = ["Embedder", "EmbedderManifest", "l2_normalize", "manifest"]

class Embedder(Protocol):
    """Turn texts into vectors: ``embed(texts)`` returns float32 ``[len(texts), dim]``.

    ``name`` and ``version`` identify the vector space: two embedders with the same
    name, version and dim must produce comparable vectors. ``normalized`` is True when
    every row is L2-normalised, so a dot product is the cosine.

    Deliberately not ``runtime_checkable``: on Python 3.11 ``isinstance`` reads every
    member, and a remote embedder's ``dim`` may cost a request to learn.
    """

    # Read-only properties, so both plain attributes and computed ones satisfy it.
    @property
    def name(self) -> str:
        """A stable identifier of the model, e.g. ``"minilm-l6-v2-int8"``."""
        ...

    @property
    def version(self) -> str:
        """The model or package version; a change invalidates stored vectors."""
        ...

    @property
    def dim(self) -> int:
        """The number of columns ``embed`` returns."""
        ...

    @property
    def normalized(self) -> bool:
        """True when every row ``embed`` returns has unit L2 norm."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return one float32 row per text, in input order."""
        ...


@dataclass(frozen=True, slots=True)
class EmbedderManifest:
    """What the store records about the embedder that wrote its vectors."""

    name: str
    version: str
    dim: int
    normalized: bool


def manifest(embedder: Embedder) -> EmbedderManifest:
    """Describe ``embedder`` as a plain record the store can persist and compare.

    >>> from knotwork.embed import open_embedder
    >>> manifest(open_embedder("hash"))
    EmbedderManifest(name='hash', version='1', dim=64, normalized=True)
    """
    return EmbedderManifest(
        name=embedder.name,
        version=embedder.version,
        dim=int(embedder.dim),
        normalized=bool(embedder.normalized),
    )


def l2_normalize(vectors: FloatMatrix) -> FloatMatrix:
    """Scale each row to unit length; all-zero rows stay zero (no NaN)."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    scaled: FloatMatrix = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return scaled
