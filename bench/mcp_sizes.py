"""Bytes an agent receives per MCP tool call (text blocks + structured content as JSON).

    python bench/mcp_sizes.py --vault DIR --db STORE [--ref NAME] [--query Q]

Starts ``knotwork mcp`` over stdio with the official client, makes the calls the report
measured (``get_entity``, ``context`` at 32,000 tokens, ``stats``, ``search``) and
prints one JSON object: the bytes of each answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent


async def measure(vault: str, db: str, ref: str, query: str) -> dict[str, int]:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "knotwork.cli.main", "--db", db, "mcp", "--vault", vault], env=dict(os.environ))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_entity", {"ref": ref}), ("context", {"query": query, "max_tokens": 32000}),
        ("stats", {}), ("search", {"query": query})]
    out: dict[str, int] = {}
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=600) as s:
        await s.initialize()
        for name, args in calls:
            r = await s.call_tool(name, args)
            text = sum(len(b.text.encode()) for b in r.content if isinstance(b, TextContent))
            structured = len(json.dumps(r.structured_content, ensure_ascii=False,
                                        separators=(",", ":")).encode())
            out[name] = text + structured
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--ref", default="Traefik")
    ap.add_argument("--query", default="traefik")
    a = ap.parse_args()
    print(json.dumps(anyio.run(measure, a.vault, a.db, a.ref, a.query)))


if __name__ == "__main__":
    main()
