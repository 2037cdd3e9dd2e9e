"""The KnowledgeContext as JSON (the seed's shape plus evidence and summary)."""

from __future__ import annotations

import json

from ..types import ContextEntity, Evidence, KnowledgeContext

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

# Each entity's and evidence chunk's JSON, by the item's identity. An entry holds its item,
# so no other object can take that id while the entry lives. Why: packing an answer to a
# budget renders it many times over (every item alone, then together), and an entity's
# facts are most of the text; each item is now encoded once per answer.
_ITEMS: dict[tuple[int, bool], tuple[ContextEntity | Evidence, str]] = {}
_ITEMS_MAX = 256


def render_json(ctx: KnowledgeContext) -> str:
    """Compact JSON: what an agent receives, and what budgets count.

    The same text as ``json.dumps(ctx.as_dict(), ensure_ascii=False, separators=(",", ":"))``,
    joined from the items' cached JSON.
    """
    entities = ",".join(_item(e, ctx.explain) for e in ctx.entities)
    evidence = ",".join(_item(v, False) for v in ctx.evidence)
    return (f'{{"query":{_encode(ctx.query)},"entities":[{entities}],"evidence":[{evidence}],'
            + _encode(ctx.tail_dict())[1:])


def _item(item: ContextEntity | Evidence, explain: bool) -> str:
    key = (id(item), explain)
    hit = _ITEMS.get(key)
    if hit is not None and hit[0] is item:
        return hit[1]
    text = _encode(item.as_dict(explain=explain) if isinstance(item, ContextEntity)
                   else item.as_dict())
    if len(_ITEMS) >= _ITEMS_MAX:
        _ITEMS.clear()  # entries from answers already sent; simpler than LRU
    _ITEMS[key] = (item, text)
    return text
