"""The sources context is assembled from, and the registry that builds one from a spec.

Built in: ``local`` (this store's context pipeline), ``http``/``https`` (another
knotwork's REST API), ``qdrant`` (a Qdrant collection, embedded from a folder or on a
server) and ``memory`` (a fixed list). A package adds a kind through the entry-point
group ``knotwork.sources``: the entry point's name is the kind, its object a factory
``(spec: SourceSpec, env: SourceEnv) -> ContextSource``.
"""

from __future__ import annotations

from .registry import (
    ENTRY_POINT_GROUP,
    LocalQuery,
    SourceEnv,
    SourceSpec,
    kinds,
    open_source,
    parse_options,
)

__all__ = ["ENTRY_POINT_GROUP", "LocalQuery", "SourceEnv", "SourceSpec", "kinds",
           "open_source", "parse_options"]
