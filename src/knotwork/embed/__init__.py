"""Embedders: the Protocol, the default offline model, and the alternatives.

``open_embedder("minilm-q8")`` (the default) runs all-MiniLM-L6-v2 with int8 arithmetic
on onnxruntime, built once from the bundled ``open_embedder("minilm")``, offline.
``"hash"`` is a deterministic test double; ``"openai:<model>"`` calls an
OpenAI-compatible server; ``"st:<model>"`` uses sentence-transformers if installed.
Importing this package loads none of onnxruntime, tokenizers or torch: each backend
loads what it needs when first used.

    >>> from knotwork.embed import open_embedder, manifest
    >>> manifest(open_embedder("hash", dim=16)).dim
    16
"""

import importlib
from typing import TYPE_CHECKING, Any

from knotwork.embed.base import Embedder, EmbedderManifest, l2_normalize, manifest
from knotwork.embed.registry import DEFAULT_EMBEDDER, open_embedder, valid_specs

if TYPE_CHECKING:
    from knotwork.embed.hashing import HashEmbedder
    from knotwork.embed.minilm import MiniLMEmbedder
    from knotwork.embed.openai_compat import OpenAIEmbedder
    from knotwork.embed.st import SentenceTransformerEmbedder

# The backends load when first named: a process that never embeds (``knotwork facts``,
# a store without vectors) imports no numpy, which cost ~50-100 ms of every CLI call.
_BACKENDS = {
    "HashEmbedder": "knotwork.embed.hashing",
    "MiniLMEmbedder": "knotwork.embed.minilm",
    "OpenAIEmbedder": "knotwork.embed.openai_compat",
    "SentenceTransformerEmbedder": "knotwork.embed.st",
}


def __getattr__(name: str) -> Any:
    if name in _BACKENDS:
        return getattr(importlib.import_module(_BACKENDS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DEFAULT_EMBEDDER",
    "Embedder",
    "EmbedderManifest",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "l2_normalize",
    "manifest",
    "open_embedder",
    "valid_specs",
]
