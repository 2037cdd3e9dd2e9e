"""A KnowledgeContext (its JSON shape) as assembly items: one per entity, one per chunk.

Shared by the ``local`` and ``http`` sources, which both receive that shape. An entity
becomes a card of its facts, each with its citation, cited by its iri; an evidence chunk
becomes its text, cited by ``path:first-last`` line. ``origin`` (another server's URL)
is added to every citation, so two servers' notes at one path stay two items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Item


def items_from_context(ctx: Mapping[str, Any], *, origin: str | None = None) -> list[Item]:
    """The entities and evidence of ``ctx``, best first within each kind."""
    at = f" @ {origin}" if origin else ""
    out = [Item(_card(e), f"{e.get('iri', '')}{at}", _score(e)) for e in _list(ctx, "entities")]
    for ev in _list(ctx, "evidence"):
        text = str(ev.get("text") or "").strip()
        if text:
            where = f"{ev.get('path', '')}:{ev.get('line_start', '?')}-{ev.get('line_end', '?')}"
            out.append(Item(text, where + at, _score(ev)))
    return out


def _list(ctx: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = ctx.get(key) or []
    if not isinstance(value, list):
        raise ValueError(f"the answer's {key!r} is not a list")
    return [v for v in value if isinstance(v, Mapping)]


def _score(d: Mapping[str, Any]) -> float:
    return float(d.get("score") or 0.0)


def _card(e: Mapping[str, Any]) -> str:
    types = e.get("types") or []
    lines = [f"{e.get('label', '')}" + (f" ({', '.join(map(str, types))})" if types else "")]
    for f in e.get("facts") or []:
        entity = f.get("value_type") == "Entity"
        value = (f.get("value_label") or f.get("value")) if entity else f.get("value")
        lines.append(f"- {f.get('predicate')} {'→' if entity else '='} {value}{_cite(f)}")
    incoming = e.get("incoming") or []
    if incoming:
        lines.append("Referenced by:")
        lines.extend(f"- {f.get('subject_label') or f.get('subject')} —{f.get('predicate')}→"
                     f"{_cite(f)}" for f in incoming)
    return "\n".join(lines)


def _cite(f: Mapping[str, Any]) -> str:
    s = f.get("source") or {}
    if not s.get("path"):
        return ""
    a, b = s.get("line_start"), s.get("line_end")
    return f" [{s['path']}:{a if a == b else f'{a}-{b}'}]"
