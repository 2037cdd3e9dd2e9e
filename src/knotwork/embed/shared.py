"""One embedder per process and spec, shared by every store open in it.

Why: each ``Knotwork`` opened its own embedder, and MiniLM's ONNX session alone is ~280
MB; ten LoCoMo stores open in one process peaked at 5.9 GB. An embedder holds no store's
state (the manifest check compares its name and version with each store's), and the
local ones are thread-safe (``MiniLMEmbedder``: a locked lazy session, a thread-safe
``run``), so one instance serves them all. Remote embedders (``openai:``) and
sentence-transformers keep one instance a store: their clients carry settings of their
own, and their memory is elsewhere; ``hash`` (tests) is a few bytes.
"""

from __future__ import annotations

import threading

from knotwork.embed.base import Embedder
from knotwork.embed.registry import DEFAULT_EMBEDDER, open_embedder

__all__ = ["SHARED_KINDS", "clear", "shared_embedder"]

#: The spec kinds one instance may serve every store of a process, each to its model.
SHARED_KINDS = {"minilm": "minilm", "minilm-l6-v2-int8": "minilm", "minilm-q8": "minilm-q8",
                "minilm-l6-v2-q8": "minilm-q8", "default": DEFAULT_EMBEDDER,
                "auto": DEFAULT_EMBEDDER}

_lock = threading.Lock()
_cache: dict[str, Embedder] = {}


def shared_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """The process's embedder for ``spec``: the same object for the same local spec.

    >>> shared_embedder("hash") is shared_embedder("hash")
    False
    """
    key = spec.strip().lower() or DEFAULT_EMBEDDER
    if key not in SHARED_KINDS:
        return open_embedder(spec)
    key = SHARED_KINDS[key]  # aliases name the same model
    with _lock:
        if key not in _cache:
            _cache[key] = open_embedder(key)
        return _cache[key]


def clear() -> None:
    """Forget the shared instances (a test that counts an embedder's tokens, a fork)."""
    with _lock:
        _cache.clear()
