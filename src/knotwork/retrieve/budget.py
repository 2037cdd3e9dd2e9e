"""Token counting and fitting an answer to a budget.

Budgets count what is sent: the caller passes ``measure``, which renders the answer in the
format the agent receives and counts its tokens; packing drops the lowest-scored item
(entity or evidence chunk) until the rendered answer fits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from ..types import ContextEntity, Evidence, KnowledgeContext

_lock = threading.Lock()


@lru_cache(maxsize=4)
def _encoding(name: str):  # type: ignore[no-untyped-def]
    import bpe_openai

    with _lock:
        return bpe_openai.get_encoding(name)


def count_tokens(text: str, *, encoding: str = "o200k_base") -> int:
    """Tokens of ``text`` under an OpenAI encoding (offline tables; no download)."""
    if not text:
        return 0
    return len(_encoding(encoding).encode_ordinary(text))


Measure = Callable[[KnowledgeContext], int]


def pack(ctx: KnowledgeContext, *, max_tokens: int | None, measure: Measure) -> KnowledgeContext:
    """Return ``ctx`` cut to ``max_tokens`` as rendered, with ``summary.tokens`` set."""
    if max_tokens is None:
        return _settle(ctx, measure, truncated=ctx.summary.truncated)
    probe = _preset(ctx, max_tokens, ctx.summary.truncated)
    if measure(probe) <= max_tokens:
        return _settle(ctx, measure, truncated=ctx.summary.truncated)
    entities, evidence = list(ctx.entities), list(ctx.evidence)
    # First the cheapest loss: the "referenced by" lists, lowest-ranked entity first.
    for i in range(len(entities) - 1, -1, -1):
        if entities[i].incoming:
            entities[i] = replace(entities[i], incoming=())
            cut = _recount(ctx, entities, evidence)
            if measure(_preset(cut, max_tokens, True)) <= max_tokens:
                return _settle(cut, measure, truncated=True)
    while entities or evidence:
        drop_evidence = bool(evidence) and (
            not entities or evidence[-1].score <= entities[-1].score or len(entities) == 1)
        if drop_evidence:
            evidence.pop()
        elif len(entities) == 1 and (entities[0].facts or entities[0].incoming):
            e = entities[0]
            entities[0] = replace(e, facts=e.facts[:-1], incoming=())
        else:
            entities.pop()
        cut = _recount(ctx, entities, evidence)
        if measure(_preset(cut, max_tokens, True)) <= max_tokens:
            return _settle(cut, measure, truncated=True)
    return _settle(_recount(ctx, [], []), measure, truncated=True)


def _recount(ctx: KnowledgeContext, entities: list[ContextEntity], evidence: list[Evidence]
             ) -> KnowledgeContext:
    s = ctx.summary
    summary = replace(
        s, total_entities=len(entities),
        total_facts=sum(len(e.facts) + len(e.incoming) for e in entities),
        direct_hits=sum(e.relevance == "Direct" for e in entities),
        linked_additions=sum(e.relevance == "Linked" for e in entities),
        semantic_hits=sum(e.relevance == "Semantic" for e in entities))
    return replace(ctx, entities=tuple(entities), evidence=tuple(evidence), summary=summary)


def _preset(ctx: KnowledgeContext, tokens: int, truncated: bool) -> KnowledgeContext:
    return replace(ctx, summary=replace(ctx.summary, tokens=tokens, truncated=truncated))


def _settle(ctx: KnowledgeContext, measure: Measure, *, truncated: bool) -> KnowledgeContext:
    """Set ``summary.tokens`` to the count of the answer that shows that very count.

    Why iterate: the count is part of the rendered text, so writing it can change it by a
    token; two or three rounds reach the fixed point.
    """
    tokens = 0
    for _ in range(4):
        cand = _preset(ctx, tokens, truncated)
        counted = measure(cand)
        if counted == tokens:
            return cand
        tokens = counted
    return _preset(ctx, tokens, truncated)
