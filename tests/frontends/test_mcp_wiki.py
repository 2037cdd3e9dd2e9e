"""The wiki's MCP tools through the official client over stdio: an agent writes a summary
page and updates an entity page, reads them back, finds them, and lints the vault."""

from __future__ import annotations

from pathlib import Path

from mcp.client.session import ClientSession

from .test_mcp import data, error_text, run


def test_an_agent_writes_reads_searches_and_lints_the_wiki(vault: Path, tmp_path: Path
                                                           ) -> None:
    async def body(s: ClientSession) -> None:
        out = data(await s.call_tool("write_page", {
            "category": "summary", "title": "Incident 42",
            "content": "# Incident 42\n\nA memory leak in [[Traefik]] took [[kota]] down.\n",
            "summary": "Traefik leaked memory"}))
        assert out == {"path": "wiki/summary/incident-42.md", "status": "created",
                       "facts_added": out["facts_added"], "facts_retracted": 0}
        for text in ("First notes on [[Traefik]].", "Leaks memory; see [[Incident 42]]."):
            data(await s.call_tool("write_page", {"category": "entity", "title": "Leak",
                                                  "content": text}))
        page = data(await s.call_tool("read_page", {"category": "entity", "title": "Leak"}))
        assert "see [[Incident 42]]" in page["content"]
        listed = data(await s.call_tool("list_pages", {}))
        assert [p["path"] for p in listed["pages"]] == [
            "wiki/summary/incident-42.md", "wiki/entity/leak.md"]
        hits = data(await s.call_tool("search_wiki", {"query": "memory leak"}))["hits"]
        assert {h["path"] for h in hits} == {"wiki/summary/incident-42.md",
                                             "wiki/entity/leak.md"}
        log = data(await s.call_tool("get_log", {"last_n": 5}))["entries"]
        assert [e["action"] for e in log] == ["create", "create", "update"]
        found = data(await s.call_tool("lint", {"kinds": ["orphan_page"]}))["findings"]
        assert {f["path"] for f in found} >= {"people/Alice.md"}
        assert "wiki/entity/leak.md" in {f["path"] for f in found}  # nothing links it
        refused = error_text(await s.call_tool("write_page", {
            "category": "../..", "title": "x", "content": "y"}))
        # the tool's schema lists the wiki's categories: another is refused before the call
        assert refused.startswith("invalid arguments for write_page: category: must be")
        assert "'summary', 'entity' or 'topic'" in refused
        assert (vault / "wiki/log.md").is_file() and (vault / "wiki/index.md").is_file()

    run(vault, tmp_path, body)
