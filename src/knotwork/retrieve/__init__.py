"""Retrieval: candidates from full text, vectors and the graph; ranking; budgets."""

from .budget import Measure, count_tokens, pack
from .pipeline import ContextOptions, build_context

__all__ = ["ContextOptions", "Measure", "build_context", "count_tokens", "pack"]
