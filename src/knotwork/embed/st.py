"""Embed with sentence-transformers, for users who already have torch (optional).

Why optional: torch and transformers add ~1.4 GB to an install, and the default MiniLM
ONNX embedder gives the same vectors as the torch model (cosine >= 0.999) without them.
This backend is for other models (any sentence-transformers name or local path).
``sentence_transformers`` is imported when an embedder is constructed, never at module
import, so knotwork imports cleanly without it.

    >>> e = SentenceTransformerEmbedder("all-MiniLM-L6-v2")   # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from knotwork.embed.base import l2_normalize
from knotwork.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    from knotwork.embed.base import FloatMatrix

__all__ = ["SentenceTransformerEmbedder"]

_BACKEND = "sentence-transformers"
_HINT = "pip install 'knotwork[torch]'"


class SentenceTransformerEmbedder:
    """Embed with a sentence-transformers model named by hub id or local path.

    The model loads in the constructor because its dimension is only known then. A hub
    id needs network on first use unless it is cached (respects ``HF_HUB_OFFLINE``).
    """

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        batch_size: int = 32,
        normalize: bool = True,
    ) -> None:
        if not model:
            raise ConfigError("st embedder needs a model name or path", key="model")
        try:
            st = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise BackendUnavailable(_BACKEND, hint=_HINT) from exc
        try:
            self._model: Any = st.SentenceTransformer(model, device=device)
        except OSError as exc:  # not found locally, or the hub cannot be reached
            raise BackendUnavailable(_BACKEND, hint=f"cannot load model {model!r}: {exc}") from exc
        self.name = f"st:{model}"
        self.version = f"sentence-transformers=={st.__version__}"
        self.dim = int(self._model.get_sentence_embedding_dimension())
        self.normalized = normalize
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return float32 ``[len(texts), dim]`` in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        out = np.asarray(vectors, dtype=np.float32)
        return l2_normalize(out) if self.normalized else out
