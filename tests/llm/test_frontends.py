"""``POST /ask``, ``POST /extract`` and MCP ``ask`` on real servers (subprocesses), with a
scripted model; and the REST routes of a server with no model, which call nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ..frontends.conftest import child_env, free_port, knotwork_cmd, running, wait_for, wait_served
from .chatserver import ChatServer
from .conftest import write_vault


@pytest.fixture(scope="module")
def model() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


@contextmanager
def _serve(tmp: Path, env: dict[str, str]) -> Iterator[httpx.Client]:
    vault = write_vault(tmp / "vault")
    port = free_port()
    log = tmp / "serve.log"
    cmd = knotwork_cmd("--db", str(tmp / "s.db"), "serve", "--vault", str(vault),
                       "--port", str(port))
    with running(cmd, log, env=child_env(**env)) as proc, httpx.Client(
            base_url=f"http://127.0.0.1:{port}", timeout=20) as client:
        wait_served(proc, f"http://127.0.0.1:{port}", log)
        yield client


def _env(model: ChatServer) -> dict[str, str]:
    return {"KNOTWORK_LLM_URL": model.url, "KNOTWORK_LLM_MODEL": "test-model",
            "KNOTWORK_EMBEDDER": "none"}


def test_rest_extract_job_and_ask(model: ChatServer, tmp_path: Path) -> None:
    with _serve(tmp_path, _env(model)) as client:
        started = client.post("/extract", json={"budget": 100_000})
        assert started.status_code == 202, started.text
        job = started.json()["job"]
        assert started.headers["location"] == f"/extract/{job}"

        def finished() -> dict[str, Any] | None:
            state: dict[str, Any] = client.get(f"/extract/{job}").json()
            return state if state["status"] != "running" else None

        state = wait_for(finished, timeout=20)
        assert state["status"] == "done" and state["done"] == state["total"] > 0
        assert state["report"]["facts_added"] == 5
        assert client.get("/extract/999").status_code == 404
        model.script.append({"content": "Traefik runs on Kota [services/Traefik.md:6]."})
        answer = client.post("/ask", json={"question": "where does traefik run?"}).json()
        assert answer["citations"][0]["ok"] and answer["flagged"] == 0
        assert client.post("/ask", json={"question": "x", "nope": 1}).status_code == 422


def test_rest_without_a_model_calls_nothing(model: ChatServer, tmp_path: Path) -> None:
    before = len(model.requests)
    with _serve(tmp_path, {"KNOTWORK_EMBEDDER": "none"}) as client:
        res = client.post("/ask", json={"question": "where does traefik run?"})
        assert res.status_code == 503 and "KNOTWORK_LLM_URL" in res.json()["message"]
        assert client.post("/extract", json={}).status_code == 503
    assert len(model.requests) == before


def test_mcp_ask_is_listed_and_answers_when_a_model_is_configured(
        model: ChatServer, tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")
    cmd = knotwork_cmd("--db", str(tmp_path / "s.db"), "mcp", "--vault", str(vault))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=child_env(**_env(model)))
    model.script.append({"content": "Kestrel Queue uses Postgres"
                         " [services/Kestrel Queue.md:99]."})

    async def main() -> dict[str, Any]:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, read_timeout_seconds=30) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert "ask" in tools and tools["ask"].annotations.open_world_hint
                for _ in range(100):  # the catch-up runs beside the server
                    if (await s.call_tool("stats", {})).structured_content["documents"] == 3:
                        break
                    await anyio.sleep(0.1)
                result = await s.call_tool("ask", {"question": "what does kestrel queue use?"})
                assert not result.is_error, result.content
                out: dict[str, Any] = result.structured_content
                return out

    answer = anyio.run(main)
    assert answer["flagged"] == 1 and "past the end" in answer["citations"][0]["problem"]
