"""Turn source files into ``ParsedDocument`` values: names, chunks and fact drafts.

Only ``knotwork.types`` and ``knotwork.errors`` are imported from the package, so
parsing can run in worker processes without a store.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .markdown import parse_markdown

__all__ = ["parse_markdown"]


def __getattr__(name: str) -> Any:
    # Why lazily: the parser's modules take ~0.15 s to import, and a process that only
    # queries (every CLI ``context`` or ``search``) reaches this package for a constant.
    if name == "parse_markdown":
        from .markdown import parse_markdown

        return parse_markdown
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
