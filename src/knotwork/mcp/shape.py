"""What an MCP tool sends: prompt-ready Markdown as the text, the structured form once,
both cut to the tool's token budget.

A tool result carried everything twice — structured content plus the same data as
indented JSON text — so ``get_entity`` on a hub note was 237 KB and ``stats`` 20 KB. Now
the text is a Markdown rendering an agent can read as it is, the structured content
holds the data once (the transport writes it compact), and each tool cuts its lists from
the end until its text fits ``max_tokens``, saying so (``cut``, and ``total_<list>``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["fit", "md_changes", "md_entity", "md_find", "md_history", "md_search",
           "md_stats"]

Render = Callable[[dict[str, Any]], str]


def fit(data: dict[str, Any], lists: Sequence[str], render: Render,
        count: Callable[[str], int], max_tokens: int) -> tuple[dict[str, Any], str]:
    """``data`` and its Markdown, with items dropped from the end of ``lists`` (the
    longest first) until the Markdown counts at most ``max_tokens``; ``cut`` says
    whether any was, ``total_<list>`` how many there were."""
    for key in lists:
        data.setdefault(f"total_{key}", len(data[key]))
    text, cut = render(data), False
    while count(text) > max_tokens:
        longest = max(lists, key=lambda k: len(data[k]))
        items = data[longest]
        if not items:
            break
        # drop a share at a time on long lists, one at a time near the end
        drop = max(1, len(items) // 8) if count(text) > 2 * max_tokens else 1
        data[longest] = items[:-drop]
        text, cut = render(data), True
    data["cut"] = cut
    return data, text


def _where(source: Any) -> str:
    if not isinstance(source, dict):
        return ""
    a, b = source.get("line_start"), source.get("line_end")
    lines = f"{a}" if a == b else f"{a}-{b}"
    return f" [{source.get('path')}:{lines}]"


def _value(f: dict[str, Any]) -> str:
    if f.get("value_type") == "Entity":
        return f"→ {f.get('value_label') or f.get('value')}"
    return f"= {f.get('value')}"


def _fresh(data: dict[str, Any]) -> str:
    if data.get("index_fresh") is False:
        return (f"\n_still indexing the vault: {data.get('pending_changes', 0)} changed"
                " files not applied yet_\n")
    return ""


def _cut(data: dict[str, Any], key: str, what: str) -> str:
    shown, total = len(data[key]), data.get(f"total_{key}", len(data[key]))
    return f"\n_{shown} of {total} {what} shown (cut to the token budget)_\n" \
        if shown < total else ""


def md_search(data: dict[str, Any]) -> str:
    lines = [f"# Search: {data['query']}", _fresh(data)]
    for i, h in enumerate(data["hits"], 1):
        head = f" ({h['heading']})" if h.get("heading") else ""
        lines.append(f"[{i}] {h['path']}:{h['line_start']}-{h['line_end']}{head}")
        lines.extend("> " + line for line in str(h.get("text", "")).splitlines())
        lines.append("")
    if not data["hits"]:
        lines.append("No passage matches.")
    lines.append(_cut(data, "hits", "hits"))
    return "\n".join(lines).rstrip() + "\n"


def md_entity(data: dict[str, Any]) -> str:
    types = f" ({', '.join(data['types'])})" if data.get("types") else ""
    names = ", ".join(n["text"] for n in data.get("names", []))
    lines = [f"# {data['label']}{types}", f"`{data['iri']}`" + (f" · names: {names}"
                                                               if names else ""), _fresh(data)]
    lines += [f"- {f['predicate']} {_value(f)}{_where(f.get('source'))}" for f in data["facts"]]
    lines.append(_cut(data, "facts", "facts"))
    if data["incoming"]:
        lines.append("Referenced by:")
        lines += [f"- {f['subject_label']} —{f['predicate']}→{_where(f.get('source'))}"
                  for f in data["incoming"]]
        lines.append(_cut(data, "incoming", "incoming facts"))
    return "\n".join(line for line in lines if line is not None).rstrip() + "\n"


def md_history(data: dict[str, Any]) -> str:
    lines = [f"# History of {data['entity']}", _fresh(data)]
    for f in data["facts"]:
        gone = (f" · retracted {f['retracted_at']} ({f.get('retract_reason') or ''})"
                if f.get("retracted_at") else "")
        lines.append(f"- #{f['id']} {f['predicate']} {_value(f)}{_where(f.get('source'))}"
                     f" · recorded {f['recorded_at']}{gone}")
    lines.append(f"\n{len(data['events'])} events")
    lines.append(_cut(data, "facts", "facts of this page"))
    if data.get("next_offset") is not None:
        lines.append(f"next page: offset {data['next_offset']}")
    return "\n".join(lines).rstrip() + "\n"


def md_stats(data: dict[str, Any]) -> str:
    lines = ["# Knowledge base", _fresh(data)]
    for key, value in data.items():
        if key in ("ambiguous_names", "warnings", "cut", "index_fresh", "pending_changes") \
                or key.startswith("total_"):
            continue
        lines.append(f"- {key}: {value}")
    if data["ambiguous_names"]:
        lines.append(f"\nNames more than one note claims "
                     f"({data.get('total_ambiguous_names', len(data['ambiguous_names']))}):")
        lines += [f"- {a['name']}: {', '.join(a['paths'][:5])}"
                  + (f" (+{len(a['paths']) - 5})" if len(a['paths']) > 5 else "")
                  for a in data["ambiguous_names"]]
    if data["warnings"]:
        lines.append("\nWarnings:")
        lines += [f"- {w['path']}:{w.get('line') or ''} {w['reason']}" for w in data["warnings"]]
    lines.append(_cut(data, "ambiguous_names", "ambiguous names"))
    return "\n".join(lines).rstrip() + "\n"


def md_find(data: dict[str, Any]) -> str:
    asked = " AND ".join(w["predicate"] + ("" if w["value"] is None else f"={w['value']}")
                         for w in data["where"])
    lines = [f"# Find: {asked}", _fresh(data)]
    for e in data["entities"]:
        types = f" ({', '.join(e['types'])})" if e.get("types") else ""
        lines.append(f"## {e['label']}{types}\n`{e['iri']}`")
        lines += [f"- {f['predicate']} {_value(f)}{_where(f.get('source'))}"
                  + (f" “{' '.join(str(f['source'].get('supporting_text', '')).split())}”"
                     if f.get("source") else "") for f in e["facts"]]
    if not data["entities"]:
        lines.append("No entity matches.")
    lines.append(_cut(data, "entities", "entities"))
    if data.get("truncated"):
        lines.append(f"_the first {data['limit']} entities: raise limit for more_")
    return "\n".join(lines).rstrip() + "\n"


def md_changes(data: dict[str, Any]) -> str:
    lines = [f"# Changes since {data['since']}", _fresh(data)]
    lines += [f"- {c['at']} {c['change']} {c['path']}"
              + (f" (from {c['previous_path']})" if c.get("previous_path") else "")
              + f" by {c['actor']}" for c in data["changes"]]
    if not data["changes"]:
        lines.append("Nothing changed.")
    lines.append(_cut(data, "changes", "changes"))
    if data.get("truncated"):
        lines.append(f"_the newest {data['limit']} changes: raise limit for older ones_")
    return "\n".join(lines).rstrip() + "\n"
