"""The KnowledgeContext as prompt-ready Markdown: entities, facts with citations, evidence."""

from __future__ import annotations

from ..types import ContextEntity, FactRow, KnowledgeContext


def _cite(f: FactRow) -> str:
    if not f.source or not f.source.path:
        return f" [asserted by {f.actor}]" if f.actor else ""
    s = f.source
    lines = f"{s.line_start}" if s.line_start == s.line_end else f"{s.line_start}-{s.line_end}"
    return f" [{s.path}:{lines}]"


def _fact_line(f: FactRow) -> str:
    value = f.value_label or f.value if f.value_type == "Entity" else f.value
    arrow = "→" if f.value_type == "Entity" else "="
    marks = []
    if f.confidence < 1.0:
        marks.append(f"conf {f.confidence:.2f}")
    if f.trust != "stated":
        marks.append(f.trust)
    if f.review != "approved":
        marks.append(f.review)
    if f.valid_from or f.valid_to:
        marks.append(f"valid {f.valid_from or '…'}–{f.valid_to or '…'}")
    if f.valid_to_reason:
        marks.append(f.valid_to_reason)
    if f.retracted_at:
        marks.append(f"retracted {f.retracted_at}")
    extra = f" ({', '.join(marks)})" if marks else ""
    return f"- {f.predicate} {arrow} {value}{extra}{_cite(f)}"


def _entity(e: ContextEntity, explain: bool) -> list[str]:
    types = f" ({', '.join(e.types)})" if e.types else ""
    wiki = " · wiki page" if e.wiki else ""
    out = [f"## {e.label}{types}", f"`{e.iri}` · {e.relevance}{wiki} · score {e.score:.2f}"]
    if explain and e.why:
        out.append("why: " + "; ".join(e.why))
    out.extend(_fact_line(f) for f in e.facts)
    if e.incoming:
        out.append("Referenced by:")
        out.extend(f"- {f.subject_label} —{f.predicate}→{_cite(f)}" for f in e.incoming)
    return out


def render_markdown(ctx: KnowledgeContext) -> str:
    s = ctx.summary
    # one line, whatever the question holds: a newline in it made headings of its own
    lines = [f"# Context: {' '.join(ctx.query.split())}",
             f"_{s.total_entities} entities · {s.total_facts} facts · {s.direct_hits} direct,"
             f" {s.linked_additions} linked, {s.semantic_hits} semantic · {s.tokens} tokens"
             f"{' · truncated' if s.truncated else ''} · embeddings {s.embedding_status}_", ""]
    lines.extend(f"> note: {n}" for n in ctx.notes)
    if ctx.notes:
        lines.append("")
    if not ctx.entities and not ctx.evidence:
        lines.append("Nothing fits in the token budget: raise it to see the matches."
                     if s.truncated else "Nothing in the knowledge base matches this query.")
    for e in ctx.entities:
        lines.extend(_entity(e, ctx.explain))
        lines.append("")
    if ctx.evidence_chain:
        lines.append("## Links")
        lines.extend(f"- {c}" for c in ctx.evidence_chain)
        lines.append("")
    if ctx.evidence:
        lines.append("## Evidence")
        for i, ev in enumerate(ctx.evidence, 1):
            head = f" ({ev.heading})" if ev.heading else ""
            lines.append(f"[{i}] {ev.path}:{ev.line_start}-{ev.line_end}{head}")
            lines.extend("> " + line for line in ev.text.splitlines())
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
