"""Context assembly: tiers of sources queried in parallel, merged, deduplicated and packed
into an exact token budget (``assemble``), rendered as Markdown that cites every item.

The extension point is ``ContextSource`` (``name`` and ``fetch(query, *, limit, budget)
-> Fetched``); kinds a config can name come from ``sources.registry`` and the
``knotwork.sources`` entry-point group.
"""

from __future__ import annotations

from .assembler import assemble
from .config import AssembleConfig, default_config, from_mapping, load_config
from .model import Assembled, Budget, ContextSource, Fetched, Item, Override, SourceError, Tier
from .sources import ENTRY_POINT_GROUP, LocalQuery, SourceEnv

__all__ = ["ENTRY_POINT_GROUP", "AssembleConfig", "Assembled", "Budget", "ContextSource",
           "Fetched", "Item", "LocalQuery", "Override", "SourceEnv", "SourceError", "Tier",
           "assemble", "default_config", "from_mapping", "load_config"]
