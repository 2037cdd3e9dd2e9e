"""``knotwork mcp`` through the official MCP client over stdio: a real subprocess.

Each test spawns the server on a fresh store over a fresh vault (about 2 s each), so the
tests do not depend on one another's writes.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

from knotwork.retrieve.budget import count_tokens

from .conftest import child_env, knotwork_cmd

TOOLS = {"context", "search", "get_entity", "ingest_document", "assert_fact", "retract_fact",
         "history", "stats", "write_page", "read_page", "list_pages", "search_wiki", "get_log",
         "lint", "assemble", "add_context", "read_note", "list_notes", "find",
         "recent_changes"}
READ_ONLY = {"context", "search", "get_entity", "history", "stats", "read_page", "list_pages",
             "search_wiki", "get_log", "lint", "assemble", "read_note", "list_notes", "find",
             "recent_changes"}
DESTRUCTIVE = {"ingest_document", "retract_fact", "add_context"}


@asynccontextmanager
async def mcp_session(vault: Path, tmp: Path, *, wait: bool = True
                      ) -> AsyncIterator[ClientSession]:
    """A client session with ``knotwork --db <tmp>/s.db mcp --vault <vault>``, once its
    catch-up with the vault is done (unless not ``wait``)."""
    cmd = knotwork_cmd("--db", str(tmp / "s.db"), "mcp", "--vault", str(vault))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=child_env())
    log = tmp / "mcp.log"
    with open(log, "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=30) as session:
            await session.initialize()  # answered at once: the catch-up runs beside it
            deadline = time.monotonic() + 30
            while wait and "applied:" not in log.read_text(encoding="utf-8"):  # its report
                assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
                await anyio.sleep(0.05)
            yield session


def run(vault: Path, tmp: Path, body: Callable[[ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        async with mcp_session(vault, tmp) as session:
            await body(session)

    anyio.run(main)


def data(result: CallToolResult) -> dict[str, Any]:
    """The structured content; the text beside it is Markdown (or, for a write tool's
    receipt, the same data as compact JSON), never the data twice as indented JSON."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    block = result.content[0]
    assert isinstance(block, TextContent)
    if block.text.startswith("{"):
        assert json.loads(block.text) == result.structured_content
        assert "\n" not in block.text  # compact
    else:
        assert block.text.startswith("#"), block.text[:80]
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_tools_are_listed_with_schemas_descriptions_and_annotations(vault: Path,
                                                                      tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS
        for name, tool in tools.items():
            assert tool.description and len(tool.description) > 40, name
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema is not None, name
            hints = tool.annotations
            assert hints is not None, name
            assert hints.read_only_hint is (name in READ_ONLY), name
            assert hints.destructive_hint is (name in DESTRUCTIVE), name
            assert hints.idempotent_hint is not None, name
        props = tools["context"].input_schema["properties"]
        assert tools["context"].input_schema["required"] == ["query"]
        assert {"query", "max_entities", "link_depth", "max_tokens"} <= set(props)
        assert props["max_tokens"]["default"] == 4000
        assert tools["search"].input_schema["properties"]["k"]["maximum"] == 50

    run(vault, tmp_path, body)
    log = (tmp_path / "mcp.log").read_text(encoding="utf-8")
    assert "applied: +4" in log  # the catch-up ran, and its log went to stderr


def test_read_tools_return_bounded_structured_answers(vault: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        ctx = data(await s.call_tool("context", {"query": "traefik", "max_entities": 1}))
        assert [e["label"] for e in ctx["entities"]] == ["Traefik"]
        facts = {f["predicate"]: f for f in ctx["entities"][0]["facts"]}
        assert facts["runs_on"]["value_label"] == "kota"
        assert facts["runs_on"]["source"]["path"] == "services/Traefik.md"

        small = data(await s.call_tool("context", {"query": "traefik", "max_tokens": 150}))
        assert small["summary"]["tokens"] <= 150

        hits = data(await s.call_tool("search", {"query": "reverse proxy", "k": 2}))["hits"]
        assert 1 <= len(hits) <= 2 and hits[0]["path"] == "services/Traefik.md"

        kota = data(await s.call_tool("get_entity", {"ref": "kota"}))
        assert kota["label"] == "kota"
        assert {f["subject_label"] for f in kota["incoming"]} >= {"Traefik", "Grafana"}
        capped = data(await s.call_tool("get_entity", {"ref": "Traefik", "max_facts": 1}))
        assert len(capped["facts"]) == 1 and capped["total_facts"] > 1

        first = data(await s.call_tool("history", {"ref": "Traefik", "limit": 2}))
        assert len(first["facts"]) == 2 and first["next_offset"] == 2
        rest = data(await s.call_tool("history", {"ref": "Traefik", "offset": 2, "limit": 50}))
        assert rest["next_offset"] is None
        assert len(first["facts"]) + len(rest["facts"]) == first["total_facts"]

        stats = data(await s.call_tool("stats", {}))
        assert stats["documents"] == 4 and stats["facts"] > 0

    run(vault, tmp_path, body)


def test_write_tools_assert_retract_and_ingest(vault: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        fact = data(await s.call_tool("assert_fact", {
            "subject": "Traefik", "predicate": "owner", "value": "Alice",
            "value_type": "Entity", "reason": "told in chat"}))
        assert fact["trust"] == "asserted" and fact["value_label"] == "Alice"
        traefik = data(await s.call_tool("get_entity", {"ref": "Traefik"}))
        assert fact["id"] in {f["id"] for f in traefik["facts"]}

        gone = data(await s.call_tool("retract_fact", {"fact_id": fact["id"],
                                                       "reason": "she moved teams"}))
        assert gone["retracted_at"]
        again = await s.call_tool("retract_fact", {"fact_id": fact["id"], "reason": "twice"})
        assert "conflict" in error_text(again)
        hist = data(await s.call_tool("history", {"ref": "Traefik", "limit": 200}))
        assert any(f["id"] == fact["id"] and f["retracted_at"] for f in hist["facts"])
        assert any(e["fact_id"] == fact["id"] for e in hist["events"])

        out = data(await s.call_tool("ingest_document", {
            "doc_id": "chat/deploy", "title": "Deploy chat", "source": "chat",
            "raw_content": "Postgres runs on kota since June.",
            "entities": [{"name": "Postgres", "type": "database"}],
            "relations": [
                {"source": "Postgres", "target": "kota", "type": "runs_on",
                 "supporting_text": "Postgres runs on kota", "confidence": 0.9},
                {"source": "Postgres", "target": "Nowhere", "type": "runs_on",
                 "supporting_text": "Postgres runs on kota"}]}))
        assert out["status"] == "created" and out["facts_added"] > 0
        assert [d["item"]["target"] for d in out["dropped"]] == ["Nowhere"]
        assert "unknown endpoint" in out["dropped"][0]["reason"]
        pg = data(await s.call_tool("get_entity", {"ref": "Postgres"}))
        assert any(f["predicate"] == "runs_on" for f in pg["facts"])

    run(vault, tmp_path, body)


def test_errors_come_back_as_tool_errors_and_the_server_lives_on(vault: Path,
                                                                  tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        missing = error_text(await s.call_tool("get_entity", {"ref": "No Such Thing"}))
        assert "not found" in missing and "No Such Thing" in missing
        assert "not found" in error_text(await s.call_tool(
            "retract_fact", {"fact_id": 987654, "reason": "test"}))
        assert "k" in error_text(await s.call_tool("search", {"query": "x", "k": 500}))
        assert error_text(await s.call_tool("context", {"query": ""}))
        assert error_text(await s.call_tool("assert_fact", {
            "subject": "Traefik", "predicate": "port", "value": "1", "confidence": 3}))
        # a misspelt argument is refused by name, not dropped for its default
        typo = error_text(await s.call_tool("context", {"query": "traefik", "max_token": 200}))
        assert "max_token: not an argument of context" in typo and "max_tokens" in typo, typo
        assert "mode" in error_text(await s.call_tool("stats", {"mode": "all"}))
        listed = {t.name: t.input_schema for t in (await s.list_tools()).tools}
        assert all(schema.get("additionalProperties") is False for schema in listed.values())
        # still serving
        assert data(await s.call_tool("stats", {}))["documents"] == 4

    run(vault, tmp_path, body)


def test_an_edit_in_the_vault_reaches_context(vault: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        note = vault / "hosts" / "kota.md"
        note.write_text(note.read_text(encoding="utf-8").replace(
            "os: debian", "os: debian\nlocation: attic"), encoding="utf-8")
        (vault / "services" / "Grafana.md").unlink()
        deadline = time.monotonic() + 5
        while True:
            ctx = data(await s.call_tool("context", {"query": "kota", "max_entities": 3}))
            kota = next(e for e in ctx["entities"] if e["label"] == "kota")
            values = {f["value"] for f in kota["facts"]}
            stats = data(await s.call_tool("stats", {}))
            if "attic" in values and stats["documents"] == 3:
                break
            assert time.monotonic() < deadline, f"edit not seen: {values}, {stats}"
            await anyio.sleep(0.1)

    run(vault, tmp_path, body)


def test_initialize_is_answered_while_a_long_catch_up_runs(tmp_path: Path) -> None:
    vault = tmp_path / "big"
    vault.mkdir()
    for i in range(2000):  # a first sync of some seconds
        (vault / f"n{i:04}.md").write_text(f"# Note {i}\n\nruns on [[n{(i * 7) % 2000:04}]]\n",
                                           encoding="utf-8")

    async def main() -> None:
        async with mcp_session(vault, tmp_path, wait=False) as s:
            log = (tmp_path / "mcp.log").read_text(encoding="utf-8")
            assert "applied:" not in log  # initialized before the catch-up was done
            stats = data(await s.call_tool("stats", {}))
            assert stats["documents"] < 2000 or "applied:" in (
                tmp_path / "mcp.log").read_text(encoding="utf-8")

    anyio.run(main)


def test_add_context_reads_only_inside_the_vault(vault: Path, tmp_path: Path) -> None:
    adr = vault / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0001-use-traefik.md").write_text("# 1. Use Traefik\n\nDate: 2024-02-01\n\n"
                                             "## Status\n\nAccepted\n", encoding="utf-8")

    async def body(s: ClientSession) -> None:
        got = await s.call_tool("add_context", {"path": "docs", "namespace": "lab"})
        assert not got.is_error, got
        assert got.structured_content is not None
        assert got.structured_content["records_added"] == 1
        bad = await s.call_tool("add_context", {"path": "../.."})
        assert bad.is_error and "outside the served vault" in bad.content[0].text  # type: ignore[union-attr]
        facts = await s.call_tool("get_entity", {"ref": "ADR-0001"})
        assert not facts.is_error
        assert facts.structured_content is not None
        assert {f["predicate"] for f in facts.structured_content["facts"]} >= {"status", "date"}

    run(vault, tmp_path, body)


def test_server_info_names_knotwork_s_version(vault: Path, tmp_path: Path) -> None:
    from knotwork import __version__

    async def main() -> None:
        cmd = knotwork_cmd("--db", str(tmp_path / "s.db"), "mcp", "--vault", str(vault))
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=child_env())
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, read_timeout_seconds=30) as session:
                got = await session.initialize()
                assert got.server_info.name == "knotwork"
                assert got.server_info.version == __version__

    anyio.run(main)


def test_the_first_call_waits_for_the_first_catch_up(tmp_path: Path) -> None:
    """Asked at once after initialize, a new vault answered empty while it was indexed."""
    vault = tmp_path / "big"
    vault.mkdir()
    for i in range(1500):
        (vault / f"n{i:04}.md").write_text(f"# Note {i}\n\nabout topic{i}\n", encoding="utf-8")

    async def main() -> None:
        async with mcp_session(vault, tmp_path, wait=False) as s:
            got = data(await s.call_tool("context", {"query": "topic1499"}))
            assert got["summary"]["index_fresh"] is True
            assert got["summary"]["pending_changes"] == 0
            assert "Note 1499" in [e["label"] for e in got["entities"]]
            hits = data(await s.call_tool("search", {"query": "topic1499"}))
            assert hits["index_fresh"] is True and hits["hits"]

    anyio.run(main)


def test_every_read_tool_sends_markdown_within_its_budget(vault: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        for name in ("context", "search", "get_entity", "history", "stats"):
            budget = tools[name].input_schema["properties"]["max_tokens"]
            assert budget["default"] and "default" in budget["description"]
        calls = [("context", {"query": "traefik", "max_tokens": 300}),
                 ("search", {"query": "traefik", "max_tokens": 200}),
                 ("get_entity", {"ref": "Traefik", "max_tokens": 200}),
                 ("history", {"ref": "Traefik", "max_tokens": 200}),
                 ("stats", {"max_tokens": 160})]  # fixed fields only: ~152 tokens
        for name, args in calls:
            result = await s.call_tool(name, args)
            got = data(result)
            block = result.content[0]
            assert isinstance(block, TextContent) and block.text.startswith("#")
            assert count_tokens(block.text) <= args["max_tokens"], (name, block.text)
            if name != "context":
                assert "cut" in got
        entity = data(await s.call_tool("get_entity", {"ref": "Traefik", "max_tokens": 100}))
        shown = len(entity["facts"]) + len(entity["incoming"])
        assert entity["cut"] and shown < entity["total_facts"] + entity["total_incoming"]
        md = await s.call_tool("context", {"query": "traefik", "format": "markdown",
                                           "max_tokens": 2000})
        js = await s.call_tool("context", {"query": "traefik", "format": "json",
                                           "max_tokens": 2000})
        texts = [b.text for b in (md.content[0], js.content[0]) if isinstance(b, TextContent)]
        assert texts[0].startswith("# Context: traefik") and texts[1].startswith("{")
        # the budget is what is sent: markdown holds more at the same budget
        assert len(data(md)["entities"][0]["facts"]) >= len(data(js)["entities"][0]["facts"])
        old = await s.call_tool("context", {"query": "traefik", "as_of": "2000-01-01T00:00:00Z"})
        assert data(old)["entities"] == []

    run(vault, tmp_path, body)


def test_read_note_and_list_notes(vault: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        listed = data(await s.call_tool("list_notes", {}))
        paths = [n["path"] for n in listed["notes"]]
        assert paths == sorted(paths) and listed["matched"] == len(paths) > 0
        first = paths[0]
        note = data(await s.call_tool("read_note", {"ref": first}))
        assert note["path"] == first and note["start_line"] == 1
        assert note["text"].splitlines()[0].startswith("1  ")
        assert note["next_line"] is None and note["end_line"] == note["lines"]
        cut = data(await s.call_tool("read_note", {"ref": first, "max_tokens": 100,
                                                   "start_line": 1}))
        if cut["cut"]:
            assert cut["next_line"] == cut["end_line"] + 1
        folder = first.rpartition("/")[0]
        if folder:
            under = data(await s.call_tool("list_notes", {"folder": folder}))
            assert all(n["path"].startswith(folder + "/") for n in under["notes"])
        recent = data(await s.call_tool("list_notes", {"since": "2000-01-01T00:00:00Z"}))
        stamps = [n["updated_at"] for n in recent["notes"]]
        assert stamps == sorted(stamps, reverse=True)
        none = data(await s.call_tool("list_notes", {"since": "2999-01-01T00:00:00Z"}))
        assert none["notes"] == [] and none["matched"] == 0
        missing = await s.call_tool("read_note", {"ref": "No Such Note"})
        assert "not found" in error_text(missing)

    run(vault, tmp_path, body)


def test_find_and_recent_changes_answer_markdown_and_data_within_budget(
        vault: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        for name in ("find", "recent_changes"):
            assert tools[name].input_schema["properties"]["max_tokens"]["default"] == 4000
        result = await s.call_tool("find", {"where": ["runs_on=kota"], "type": "service"})
        found = data(result)
        assert [e["label"] for e in found["entities"]] == ["Grafana", "Traefik"]
        assert found["cut"] is False and found["truncated"] is False
        text = result.content[0]
        assert isinstance(text, TextContent)
        assert text.text.startswith("# Find: runs_on=kota AND type=service")
        assert "- runs_on → kota [services/Traefik.md:3]" in text.text
        small = await s.call_tool("find", {"where": ["type"], "max_tokens": 100})
        cut = data(small)
        assert cut["cut"] and len(cut["entities"]) < cut["total_entities"] == 4
        block = small.content[0]
        assert isinstance(block, TextContent) and count_tokens(block.text) <= 100
        assert data(await s.call_tool("find", {"where": ["type"], "limit": 1}))["truncated"]
        bad = await s.call_tool("find", {})
        assert "invalid arguments" in error_text(bad) and "condition" in error_text(bad)
        changes = data(await s.call_tool("recent_changes", {"since": "1h"}))
        assert {c["path"] for c in changes["changes"]} == {
            "services/Traefik.md", "services/Grafana.md", "hosts/kota.md", "people/Alice.md"}
        assert {c["change"] for c in changes["changes"]} == {"created"}
        one = data(await s.call_tool("recent_changes", {"since": "1h", "limit": 1}))
        assert len(one["changes"]) == 1 and one["truncated"]
        assert "invalid arguments" in error_text(await s.call_tool(
            "recent_changes", {"since": "soon"}))

    run(vault, tmp_path, body)
