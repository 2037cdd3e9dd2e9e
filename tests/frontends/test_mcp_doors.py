"""The MCP door refuses what is not what a tool's schema says: strict types, sizes.

Through the official client over stdio, one server for the module's calls. Before the
fix, ``retract_fact {"fact_id": true}`` retracted fact 1 and ``"7"`` fact 7.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession

from knotwork import limits

from .conftest import write_vault
from .test_mcp import data, error_text, run

WRONG_TYPES: list[tuple[str, dict[str, Any]]] = [
    ("retract_fact", {"fact_id": True, "reason": "x"}),
    ("retract_fact", {"fact_id": "1", "reason": "x"}),
    ("retract_fact", {"fact_id": 1.0, "reason": "x"}),
    ("context", {"query": "traefik", "max_entities": True}),
    ("context", {"query": "traefik", "link_depth": True}),
    ("context", {"query": "traefik", "max_tokens": "500"}),
    ("context", {"query": "traefik", "expand_links": "yes"}),
    ("context", {"query": "traefik", "expand_links": "true"}),
    ("context", {"query": "traefik", "expand_links": 1}),
    ("search", {"query": "traefik", "k": True}),
    ("search", {"query": "traefik", "k": "3"}),
    ("get_entity", {"ref": "Traefik", "max_facts": True}),
    ("history", {"ref": "Traefik", "limit": False}),
    ("assert_fact", {"subject": "X", "predicate": "p", "value": "v", "confidence": "0.5"}),
    ("assert_fact", {"subject": "X", "predicate": "p", "value": "v", "confidence": True}),
    ("assert_fact", {"subject": "X", "predicate": "p", "value": 5}),
    ("ingest_document", {"doc_id": "d", "title": "t", "raw_content": "text",
                         "min_confidence": "0.5"}),
    ("ingest_document", {"doc_id": "d", "title": "t", "raw_content": "text",
                         "entities": '[{"name": "text"}]'}),
]

TOO_LONG: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "x" * (limits.QUERY_CHARS + 1)}),
    ("context", {"query": "x" * (limits.QUERY_CHARS + 1)}),
    ("get_entity", {"ref": "x" * (limits.REF_CHARS + 1)}),
    ("assert_fact", {"subject": "s" * (limits.SUBJECT_CHARS + 1), "predicate": "p",
                     "value": "v"}),
    ("assert_fact", {"subject": "s", "predicate": "p", "value": "v" * (limits.VALUE_CHARS + 1)}),
    ("retract_fact", {"fact_id": 1, "reason": "r" * (limits.REASON_CHARS + 1)}),
    ("ingest_document", {"doc_id": "d", "title": "t", "raw_content": "text",
                         "entities": [{"name": "n" * (limits.NAME_CHARS + 1)}]}),
]


def test_wrong_types_and_sizes_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")

    async def body(s: ClientSession) -> None:
        before = data(await s.call_tool("stats", {}))
        for tool, args in WRONG_TYPES + TOO_LONG:
            result = await s.call_tool(tool, args)
            assert result.is_error, (tool, args)
            assert "validation error" in error_text(result).lower(), (tool, args)
        after = data(await s.call_tool("stats", {}))
        assert (after["facts"], after["retracted_facts"], after["documents"]) == (
            before["facts"], before["retracted_facts"], before["documents"])
        # the right types still work: an int fact id, a float confidence, an int for it too
        fact = data(await s.call_tool("assert_fact", {
            "subject": "X", "predicate": "p", "value": "v", "confidence": 1}))
        gone = data(await s.call_tool("retract_fact", {"fact_id": fact["id"], "reason": "r"}))
        assert gone["retracted_at"]
        assert not (await s.call_tool("context", {"query": "traefik", "max_tokens": 500,
                                                  "expand_links": False})).is_error

    run(vault, tmp_path, body)
