"""Retrieval: candidates from full text, vectors and the graph; ranking; budgets."""

from .budget import count_tokens, pack
from .pipeline import ContextOptions, build_context

__all__ = ["ContextOptions", "build_context", "count_tokens", "pack"]
