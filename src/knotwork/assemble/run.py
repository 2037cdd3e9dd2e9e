"""What ``Knotwork.assemble`` composes: the config resolved, the sources opened, the call.

Kept out of the facade so it stays a few lines: the facade hands over its context
pipeline (``context``), its embedder and its settings, and this module does the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..embed import Embedder, open_embedder
from ..errors import InvalidQuery
from .assembler import assemble
from .config import AssembleConfig, default_config, from_mapping, load_config
from .model import Assembled, Override
from .sources import LocalQuery, SourceEnv

ConfigLike = str | Path | Mapping[str, Any] | AssembleConfig | None
ContextFn = Callable[..., Any]  # Knotwork.context: keyword options -> KnowledgeContext

_embedders: dict[str, Embedder] = {}
_embedders_lock = threading.Lock()


def resolve(config: ConfigLike, *, max_tokens: int | None) -> AssembleConfig:
    """``config`` as a checked config: a TOML path, a dict of that shape, a config, or
    None for the default (one ``local`` tier, budget ``max_tokens``)."""
    if config is None:
        return default_config(max_tokens=max_tokens)
    if isinstance(config, AssembleConfig):
        return config
    if isinstance(config, Mapping):
        return from_mapping(config)
    return load_config(config)


def overrides_from(raw: Mapping[str, Any] | None) -> dict[str, Override]:
    """``{"notes": {"top_k": 3, "min_score": 0.2}}`` as per-tier ``Override``s."""
    out: dict[str, Override] = {}
    for name, o in (raw or {}).items():
        if isinstance(o, Override):
            out[name] = o
            continue
        if not isinstance(o, Mapping) or set(o) - {"top_k", "min_score"}:
            raise InvalidQuery(f"tier override {name!r} takes top_k and min_score only,"
                               f" got {o!r}")
        out[name] = Override(o.get("top_k"), o.get("min_score"))
    return out


def local_runner(context: ContextFn, scopes: Sequence[str] | None
                 ) -> Callable[[str, LocalQuery], Mapping[str, Any]]:
    """The ``local`` source's call into ``context``; ``scopes`` (the caller's, e.g. a
    server's ``--scope``) bound what a source's own ``scope=`` may read."""
    allowed = list(scopes) if scopes else None

    def run(query: str, q: LocalQuery) -> Mapping[str, Any]:
        asked = list(q.scopes) if q.scopes else None
        if allowed is not None:
            asked = [s for s in asked if s in allowed] if asked else allowed
            if not asked:
                return {"entities": [], "evidence": []}  # nothing it may read
        # no budget of its own: the items are bounded by limit (and max_facts, 8 chunks),
        # and the assembly's budget decides which fit (the pipeline's would cut each
        # answer as if it were the whole prompt)
        ctx = context(query, max_entities=q.limit, max_tokens=0, scopes=asked,
                      min_confidence=q.min_confidence, link_depth=q.link_depth,
                      expand_links=q.expand_links, as_of=q.as_of, valid_at=q.valid_at,
                      trusts=list(q.trusts) if q.trusts else None, fmt="json")
        data: Mapping[str, Any] = ctx.as_dict()
        return data

    return run


def embedder_opener(configured: tuple[str, Callable[[], Embedder | None]]
                    ) -> Callable[[str], Embedder]:
    """Open embedders by spec, once per process; the configured spec reuses the facade's."""
    spec, facade = configured

    def open_(wanted: str) -> Embedder:
        if wanted == spec and (mine := facade()) is not None:
            return mine
        with _embedders_lock:
            if wanted not in _embedders:
                _embedders[wanted] = open_embedder(wanted)
            return _embedders[wanted]

    return open_


def run(query: str, config: AssembleConfig, env: SourceEnv, *, encoding: str,
        max_tokens: int | None = None, allow_partial: bool | None = None,
        tiers: Mapping[str, Any] | None = None) -> Assembled:
    """Open ``config``'s sources in ``env`` and assemble the context for ``query``."""
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(
            max_tokens, int) or max_tokens < 0):
        raise InvalidQuery(f"max_tokens must be 0 (no limit) or a positive integer, got"
                           f" {max_tokens!r}")
    budget = config.budget(encoding=encoding, max_tokens=max_tokens,
                           allow_partial=allow_partial)
    return assemble(query, config.open_tiers(env), budget, overrides=overrides_from(tiers))
