"""Token counting and fitting an answer to a budget.

Budgets count what is sent: the caller passes ``measure``, which renders the answer in the
format the agent receives and counts its tokens; packing drops the lowest-scored item
(entity or evidence chunk) until the rendered answer fits.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from ..types import ContextEntity, Evidence, KnowledgeContext

_lock = threading.Lock()


@lru_cache(maxsize=4)
def _encoding(name: str):  # type: ignore[no-untyped-def]
    # bpe_openai loads its tables with importlib.resources.open_binary, deprecated since
    # Python 3.11; the warning is theirs, not the caller's.
    with _lock, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding(name)


def count_tokens(text: str, *, encoding: str = "o200k_base") -> int:
    """Tokens of ``text`` under an OpenAI encoding (offline tables; no download)."""
    if not text:
        return 0
    return len(_encoding(encoding).encode_ordinary(text))


Measure = Callable[[KnowledgeContext], int]
Finish = Callable[[KnowledgeContext], KnowledgeContext]
Loader = Callable[[], ContextEntity]
_TRIMMED_FACTS = 5
_MAX_MISSES = 3


def pack(header: KnowledgeContext, *, entities: Sequence[tuple[float, Loader]],
         evidence: Sequence[Evidence], max_tokens: int | None, measure: Measure,
         finish: Finish) -> KnowledgeContext:
    """Build the answer from ranked items, cut to ``max_tokens`` as rendered.

    ``entities`` are loaders in rank order, so an entity's facts are read only when the
    budget may still hold it: the work grows with the budget, not with the candidates.
    Items (entities and evidence chunks) are taken in score order while they fit, each
    costed by rendering it alone; an entity that does not fit whole is tried without its
    "referenced by" list, then with its first few facts. The result is measured once more
    as a whole and trimmed if joining the pieces cost a token more. ``finish`` recomputes
    what depends on the chosen items (summary counts, the evidence chain).
    """
    if max_tokens is None:
        full = finish(replace(header, entities=tuple(load() for _, load in entities),
                              evidence=tuple(evidence)))
        return _settle(full, measure, truncated=False)

    def build(ents: list[ContextEntity], evid: list[Evidence]) -> KnowledgeContext:
        return finish(replace(header, entities=tuple(ents), evidence=tuple(evid)))

    base = measure(_preset(build([], []), max_tokens, True))
    order: list[tuple[float, int, int]] = sorted(
        [(score, 1, i) for i, (score, _) in enumerate(entities)]
        + [(v.score, 0, i) for i, v in enumerate(evidence)], key=lambda t: (-t[0], -t[1], t[2]))
    used, misses, truncated = base, 0, False
    kept_e: dict[int, ContextEntity] = {}
    kept_v: dict[int, Evidence] = {}
    for _, kind, i in order:
        if misses >= _MAX_MISSES:
            truncated = True  # the rest rank lower still; stop costing them
            break
        if kind == 0:
            cost = measure(_preset(build([], [evidence[i]]), max_tokens, True)) - base
            if used + cost <= max_tokens:
                used, kept_v[i] = used + cost, evidence[i]
                continue
        else:
            variants = _variants(entities[i][1]())  # whole first, smallest last
            costs = {len(variants) - 1: measure(_preset(build([variants[-1]], []), max_tokens,
                                                        True)) - base}
            if used + costs[len(variants) - 1] <= max_tokens:
                # the smallest fits: take the largest that does (a miss costs one render)
                for n, item in enumerate(variants):
                    if n not in costs:
                        costs[n] = measure(_preset(build([item], []), max_tokens, True)) - base
                    if used + costs[n] <= max_tokens:
                        used, kept_e[i] = used + costs[n], item
                        truncated |= n > 0
                        break
                continue
        truncated, misses = True, misses + 1
    ents = [kept_e[i] for i in sorted(kept_e)]
    evid = [kept_v[i] for i in sorted(kept_v)]
    packed = build(ents, evid)
    while (ents or evid) and not _fits(packed, max_tokens, measure):
        if evid and (not ents or evid[-1].score <= ents[-1].score):
            evid.pop()
        elif len(ents) == 1 and ents[0].facts:
            ents[0] = replace(ents[0], facts=ents[0].facts[:-1], incoming=())
        else:
            ents.pop()
        packed, truncated = build(ents, evid), True
    truncated |= len(ents) < len(entities) or len(evid) < len(evidence)
    return _settle(packed, measure, truncated=truncated)


def _variants(e: ContextEntity) -> list[ContextEntity]:
    out = [e]
    if e.incoming:
        out.append(replace(e, incoming=()))
    if len(e.facts) > _TRIMMED_FACTS:
        out.append(replace(e, facts=e.facts[:_TRIMMED_FACTS], incoming=()))
    return out


def _fits(ctx: KnowledgeContext, max_tokens: int, measure: Measure) -> bool:
    # the count shown is at most max_tokens, so render it with that many digits
    return measure(_preset(ctx, max_tokens, True)) <= max_tokens


def _preset(ctx: KnowledgeContext, tokens: int, truncated: bool) -> KnowledgeContext:
    return replace(ctx, summary=replace(ctx.summary, tokens=tokens, truncated=truncated))


def _number_tokens(n: int) -> int:
    # OpenAI encodings split digit runs into groups of at most three, context-free
    return -(-len(str(n)) // 3)


def _settle(ctx: KnowledgeContext, measure: Measure, *, truncated: bool) -> KnowledgeContext:
    """Set ``summary.tokens`` to the count of the answer that shows that very count.

    Rendered with ``tokens=0`` once; writing the real number changes only that number's
    own tokens (digit groups of three), so the fixed point is arithmetic, not re-rendering.
    """
    base = measure(_preset(ctx, 0, truncated)) - _number_tokens(0)
    tokens = base + 1
    for _ in range(4):
        tokens = base + _number_tokens(tokens)
    return _preset(ctx, tokens, truncated)
