"""Renderers against golden files (regenerate with KNOTWORK_GOLDEN=update)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knotwork.render import renderer
from knotwork.retrieve import count_tokens
from knotwork.types import (
    ContextEntity,
    ContextSummary,
    Evidence,
    FactRow,
    KnowledgeContext,
    Source,
)

GOLDEN = Path(__file__).parent / "golden"


def _fact(fid: int, pred: str, value: str, label: str | None, line: int, **kw: object
          ) -> FactRow:
    fields: dict[str, object] = dict(
        id=fid, subject_id=1, subject_iri="kw:note/services/Traefik", subject_label="Traefik",
        predicate=pred, value=value, value_type="Entity" if label else "Literal",
        datatype=None if label else "string", object_id=2 if label else None,
        value_label=label, confidence=1.0, trust="stated", review="approved", scope="default",
        recorded_at="2026-11-29T10:00:00.000000Z", retracted_at=None, valid_from=None,
        valid_to=None, extractor="frontmatter",
        source=Source("services/Traefik.md", line, line, None, f"{pred}: {value}"))
    fields.update(kw)
    return FactRow(**fields)  # type: ignore[arg-type]


CTX = KnowledgeContext(
    query="traefik",
    entities=(ContextEntity(
        iri="kw:note/services/Traefik", label="Traefik", types=("service",), relevance="Direct",
        score=1.0, facts=(_fact(1, "runs_on", "kw:note/hosts/kota", "kota", 8),
                          _fact(2, "port", "443", None, 7, datatype="integer"),
                          _fact(3, "uses", "kw:name/kestrel%20queue", "Kestrel Queue", 19,
                                confidence=0.8, trust="asserted", actor="agent:x",
                                source=None)),
        incoming=(_fact(4, "links_to", "kw:note/services/Traefik", "Traefik", 28,
                        subject_label="kota", subject_iri="kw:note/hosts/kota"),),
        why=("exact name match",), entity_id=1),),
    evidence=(Evidence(7, "services/Traefik.md", "Traefik > Routing", 24, 26,
                       "## Routing\n\nTraefik routes [[Grafana]].", 0.8),),
    summary=ContextSummary(1, 4, 1, 0, 0, tokens=0, truncated=False, embedding_status="none"),
    evidence_chain=("Traefik --[runs_on]--> kota",),
    notes=("no chunk vectors: answered from full text and links only",),
)


@pytest.mark.parametrize("fmt,suffix", [("markdown", "md"), ("json", "json")])
def test_render_matches_golden(fmt: str, suffix: str) -> None:
    text = renderer(fmt)(CTX)
    path = GOLDEN / f"context.{suffix}"
    if os.environ.get("KNOTWORK_GOLDEN") == "update":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
    assert count_tokens(text) > 50


def test_unknown_format_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="json, markdown"):
        renderer("yaml")


def test_json_is_the_answer_dict_encoded_whatever_was_rendered_before() -> None:
    # items' JSON is cached by identity: a later answer holding other items, or the same
    # ones with explain on, must still come out as its own dict encoded
    import dataclasses
    import json

    def plain(ctx: KnowledgeContext) -> str:
        return json.dumps(ctx.as_dict(), ensure_ascii=False, separators=(",", ":"))

    render = renderer("json")
    entity = CTX.entities[0]
    other = dataclasses.replace(entity, label='Tr\u00e6fik "edge"', facts=entity.facts[:1])
    for ctx in (CTX, dataclasses.replace(CTX, explain=True),
                dataclasses.replace(CTX, entities=(other,), evidence=()),
                dataclasses.replace(CTX, entities=(other, entity), query='q "\u4e2d"\n'),
                dataclasses.replace(CTX, entities=(), evidence=(), evidence_chain=(), notes=()),
                CTX):
        assert render(ctx) == plain(ctx)
        json.loads(render(ctx))


def test_markdown_keeps_the_question_on_its_heading_and_says_why_it_is_empty() -> None:
    import dataclasses

    render = renderer("markdown")
    forged = render(dataclasses.replace(CTX, query="traefik\n## Injected (service)\n- x = y"))
    assert forged.splitlines()[0] == "# Context: traefik ## Injected (service) - x = y"
    assert "\n## Injected" not in forged
    empty = dataclasses.replace(CTX, entities=(), evidence=(), evidence_chain=())
    assert "Nothing in the knowledge base matches" in render(empty)
    cut = dataclasses.replace(empty, summary=dataclasses.replace(CTX.summary, truncated=True))
    assert "Nothing fits in the token budget" in render(cut)
