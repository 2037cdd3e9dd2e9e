"""Retrieval: candidates from full text, vectors and the graph; ranking; budgets."""

from .budget import Measure, TokenCounter, count_tokens, pack, token_counter
from .pipeline import ContextOptions, build_context

__all__ = ["ContextOptions", "Measure", "TokenCounter", "build_context", "count_tokens", "pack",
           "token_counter"]
