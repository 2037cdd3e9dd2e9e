"""Renderers: name → function(KnowledgeContext) → str."""

from __future__ import annotations

from collections.abc import Callable

from ..types import KnowledgeContext
from .json import render_json
from .markdown import render_markdown

RENDERERS: dict[str, Callable[[KnowledgeContext], str]] = {
    "json": render_json,
    "markdown": render_markdown,
}


def renderer(name: str) -> Callable[[KnowledgeContext], str]:
    """Pick a renderer by name; unknown names list the valid ones."""
    try:
        return RENDERERS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; valid: {', '.join(sorted(RENDERERS))}"
                         ) from None


__all__ = ["RENDERERS", "render_json", "render_markdown", "renderer"]
