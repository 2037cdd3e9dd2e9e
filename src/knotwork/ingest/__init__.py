"""Turn source files into ``ParsedDocument`` values: names, chunks and fact drafts.

Only ``knotwork.types`` and ``knotwork.errors`` are imported from the package, so
parsing can run in worker processes without a store.
"""

from .markdown import parse_markdown

__all__ = ["parse_markdown"]
