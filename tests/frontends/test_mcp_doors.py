"""The MCP door refuses what is not what a tool's schema says: strict types, sizes.

Through the official client over stdio, one server for the module's calls. Before the
fix, ``retract_fact {"fact_id": true}`` retracted fact 1 and ``"7"`` fact 7.
"""

from __future__ import annotations

import random
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
    ("add_context", {"dry_run": 0}),
    ("add_context", {"type": "no-such-parser"}),
    ("write_page", {"category": "nope", "title": "t", "content": "c"}),
    ("list_pages", {"category": "nope"}),
    ("assemble", {"query": "q", "allow_partial": 0}),
    ("find", {"where": "type=host"}),
    ("find", {"where": ["type"], "limit": "5"}),
    ("recent_changes", {"limit": True}),
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
    ("add_context", {"path": "p" * (limits.PATH_CHARS + 1)}),
    ("write_page", {"category": "topic", "title": "t" * (limits.PAGE_TITLE_CHARS + 1),
                    "content": "c"}),
    ("search_wiki", {"query": "x" * (limits.QUERY_CHARS + 1)}),
    ("assemble", {"query": "x" * (limits.QUERY_CHARS + 1)}),
    ("list_notes", {"since": "2" * (limits.DATE_CHARS + 1)}),
    ("find", {"where": ["x" * (limits.VALUE_CHARS + 1)]}),
    ("find", {"where": ["type"] * (limits.WHERE_MAX + 1)}),
    ("recent_changes", {"since": "1" * (limits.SPAN_CHARS + 1)}),
]


def test_wrong_types_and_sizes_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")

    async def body(s: ClientSession) -> None:
        before = data(await s.call_tool("stats", {}))
        for tool, args in WRONG_TYPES + TOO_LONG:
            result = await s.call_tool(tool, args)
            assert result.is_error, (tool, args)
            said = error_text(result)
            assert said.startswith(f"invalid arguments for {tool}: "), (tool, args, said)
            # the field and why, in knotwork's words: no validator boilerplate, no input
            assert "pydantic" not in said and "input_value" not in said, said
            assert "http" not in said and len(said) < 400, said
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


def test_a_refused_argument_says_which_and_why_in_knotworks_words(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")

    async def body(s: ClientSession) -> None:
        huge = "s" * 200_000
        said = error_text(await s.call_tool("assert_fact", {
            "subject": huge, "predicate": "p", "value": "v", "frob": 1, "confidence": 2}))
        assert said == (
            "invalid arguments for assert_fact: subject: at most 1000 characters; confidence:"
            " must be at most 1; frob: not an argument of assert_fact (it takes: confidence,"
            " datatype, predicate, reason, subject, supporting_text, valid_from, valid_to,"
            " value, value_type)")
        said = error_text(await s.call_tool("retract_fact", {"fact_id": True}))
        assert said == ("invalid arguments for retract_fact: fact_id: must be an integer;"
                        " reason: required")

    run(vault, tmp_path, body)


def _value(rnd: random.Random) -> Any:
    return rnd.choice([
        True, False, None, 0, 1, -1, 7, 2**63, 0.5, -0.0, float("1e308"), "", " ", "7",
        "true", "0.5", "Traefik", "x" * rnd.choice([10, 3000, 20_000]), "\x00", "[[kota]]",
        [], ["a"], [{"name": "kota"}], {}, {"name": 5}, "kw:note/services/Traefik"])


def test_random_arguments_to_every_tool_never_break_the_server(tmp_path: Path) -> None:
    """About 300 calls with arguments of any JSON type and size, the tools' own keys and
    others: each is an answer or a tool error, and the server answers after them all."""
    vault = write_vault(tmp_path / "vault")
    rnd = random.Random(30)

    async def body(s: ClientSession) -> None:
        tools = (await s.list_tools()).tools
        calls = errors = 0
        for tool in tools:
            keys = list((tool.input_schema or {}).get("properties", {}))
            for _ in range(36):
                args = {k: _value(rnd) for k in keys if rnd.random() < 0.7}
                if rnd.random() < 0.1:
                    args["unknown_key"] = 1
                result = await s.call_tool(tool.name, args)
                calls += 1
                errors += bool(result.is_error)
                if not result.is_error and tool.name != "stats":
                    assert result.structured_content is not None, (tool.name, args)
        assert calls >= 280 and errors > calls // 2
        assert data(await s.call_tool("stats", {}))["documents"] >= 4

    run(vault, tmp_path, body)
    assert "Traceback" not in (tmp_path / "mcp.log").read_text(encoding="utf-8")
