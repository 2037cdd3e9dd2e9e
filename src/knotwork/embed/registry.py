"""Choose an embedder by name: ``open_embedder(spec)`` and the specs it accepts.

Backends are chosen by a short spec string, so a setting can name one::

    "auto"              the setting's default: the model a store's vectors were made
                        with (its manifest), else DEFAULT_EMBEDDER (``spec_for``)
    "minilm-q8"         the default for new stores: MiniLM with int8 arithmetic
                        (embed.quantized), built once here from the bundled one
    "minilm"            all-MiniLM-L6-v2 as bundled (int8 weights, float arithmetic)
    "minilm-static"     opt-in: a static table distilled from it (embed.static), fast
    "hash"              a deterministic bag-of-hashes, for unit tests only
    "openai:<model>"    any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, vLLM, …)
    "st:<model>"        sentence-transformers (optional, needs ``knotwork[torch]``)

The one module that knows every backend: each is imported only when chosen, so ``hash``
never loads onnxruntime, and ``embed.base`` (which the backends import) imports none.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from knotwork.embed.base import Embedder
from knotwork.errors import ConfigError

__all__ = ["AUTO", "DEFAULT_EMBEDDER", "open_embedder", "spec_for", "valid_specs"]

#: The model of new stores, and the spec ``open_embedder`` uses when none is given:
#: MiniLM with int8 arithmetic: a complete index sooner than with the bundled graph, at
#: the same hybrid quality (bench/README.md, "A first index sooner").
DEFAULT_EMBEDDER = "minilm-q8"
#: The setting's default: a store keeps the model its vectors were made with.
AUTO = "auto"

# -- the registry ---------------------------------------------------------------------
# Factories import their backend module on call: a spec that is never chosen never
# costs an import (onnxruntime alone takes ~0.3 s to import).


def _minilm(**options: Any) -> Embedder:
    from knotwork.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(**options)


def _minilm_q8(**options: Any) -> Embedder:
    from knotwork.embed.quantized import QuantizedMiniLMEmbedder

    return QuantizedMiniLMEmbedder(**options)


def _hash(**options: Any) -> Embedder:
    from knotwork.embed.hashing import HashEmbedder

    return HashEmbedder(**options)


def _static(**options: Any) -> Embedder:
    from knotwork.embed.static import StaticEmbedder

    return StaticEmbedder(**options)


def _openai(model: str, **options: Any) -> Embedder:
    from knotwork.embed.openai_compat import OpenAIEmbedder

    return OpenAIEmbedder(model, **options)


def _st(model: str, **options: Any) -> Embedder:
    from knotwork.embed.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model, **options)


def _options_of(class_path: str) -> Callable[[], set[str]]:
    """Return a function listing the keyword options a backend's constructor accepts."""

    def accepted() -> set[str]:
        module_name, _, class_name = class_path.rpartition(".")
        module = __import__(module_name, fromlist=[class_name])
        params = inspect.signature(getattr(module, class_name)).parameters
        return {n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}

    return accepted


# name → (factory, lister of accepted options); _WITH_MODEL names take "name:<model>".
_PLAIN: dict[str, tuple[Callable[..., Embedder], Callable[[], set[str]]]] = {
    "minilm": (_minilm, _options_of("knotwork.embed.minilm.MiniLMEmbedder")),
    "minilm-q8": (_minilm_q8, _options_of("knotwork.embed.quantized.QuantizedMiniLMEmbedder")),
    "hash": (_hash, _options_of("knotwork.embed.hashing.HashEmbedder")),
    "minilm-static": (_static, _options_of("knotwork.embed.static.StaticEmbedder")),
}
_WITH_MODEL: dict[str, tuple[Callable[..., Embedder], Callable[[], set[str]]]] = {
    "openai": (_openai, _options_of("knotwork.embed.openai_compat.OpenAIEmbedder")),
    "st": (_st, _options_of("knotwork.embed.st.SentenceTransformerEmbedder")),
}
# Why aliases: the manifest stores the embedder's ``name``; reopening by that name works.
_ALIASES = {"minilm-l6-v2-int8": "minilm", "minilm-l6-v2-q8": "minilm-q8",
            "default": DEFAULT_EMBEDDER, AUTO: DEFAULT_EMBEDDER}


def spec_for(configured: str, stored_name: str | None) -> str:
    """The spec to open for a store: ``configured``, unless it is ``auto``.

    ``auto`` opens the local model a store's vectors name (``stored_name``, from its
    manifest; None when it holds none), so a store embedded before the default changed
    keeps its model and never mixes two; a store without vectors, or of a remote model,
    gets ``DEFAULT_EMBEDDER``.

    >>> spec_for("auto", "minilm-l6-v2-int8"), spec_for("auto", None)
    ('minilm', 'minilm-q8')
    >>> spec_for("minilm-q8", "minilm-l6-v2-int8")
    'minilm-q8'
    """
    if configured.strip().lower() != AUTO:
        return configured
    if stored_name:
        kind = _ALIASES.get(stored_name.lower(), stored_name.lower())
        if kind in _PLAIN:
            return kind
    return DEFAULT_EMBEDDER


def valid_specs() -> list[str]:
    """List the spec forms ``open_embedder`` accepts, for error messages and ``--help``."""
    return [AUTO, *_PLAIN, *(f"{name}:<model>" for name in _WITH_MODEL)]


def open_embedder(spec: str = DEFAULT_EMBEDDER, **options: Any) -> Embedder:
    """Open the embedder named by ``spec``; ``options`` go to its constructor.

    Raises ``ConfigError`` (listing the valid specs or options) for an unknown name, a
    missing model after ``openai:``/``st:``, or an option the backend does not take.

    >>> e = open_embedder("hash", dim=32)
    >>> e.embed(["hello world"]).shape
    (1, 32)
    """
    spec = spec.strip() or DEFAULT_EMBEDDER
    kind, sep, model = spec.partition(":")
    kind = _ALIASES.get(kind.lower(), kind.lower())
    hint = "valid embedders: " + ", ".join(valid_specs())

    if kind in _PLAIN and not sep:
        factory, accepted = _PLAIN[kind]
        args: tuple[str, ...] = ()
    elif kind in _WITH_MODEL:
        if not model.strip():
            raise ConfigError(f"embedder {spec!r} needs a model name after ':'", hint=hint)
        factory, accepted = _WITH_MODEL[kind]
        args = (model.strip(),)
    else:
        raise ConfigError(f"unknown embedder {spec!r}", key="embedder", hint=hint)

    unknown = sorted(set(options) - accepted())
    if unknown:
        raise ConfigError(
            f"embedder {kind!r} does not take option(s) {', '.join(unknown)}",
            hint="valid options: " + ", ".join(sorted(accepted())),
        )
    return factory(*args, **options)
