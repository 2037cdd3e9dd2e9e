"""Assembly over real parts: a second knotwork REST server on 127.0.0.1 (uvicorn) as the
``http`` source, an embedded Qdrant collection (``qdrant-client`` from a folder) as the
``qdrant`` source, a refused port and a socket that never answers; the CLI as a real
process, ``POST /assemble`` and the MCP ``assemble`` tool through the official client."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from knotwork import Knotwork
from knotwork.assemble.sources.qdrant import close_clients
from knotwork.embed import open_embedder
from knotwork.retrieve.budget import count_tokens
from knotwork.server.app import create_app

from ..frontends.conftest import child_env, free_port, knotwork_cmd, wait_for, write_vault
from .test_assemble import DECISIONS, ITEM_KEYS, KEYS, write

ARCHIVE = [
    ("How we deploy heliograph: through traefik, by hand.", "archive/2024-deploys.md"),
    ("Heliograph: how we deploy it, 2023 edition.", "archive/2023-deploys.md"),
    ("The cafeteria menu changes on Mondays.", "archive/menu.md"),
]


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[str]:
    """Another knotwork (the homelab notes) served on 127.0.0.1 by uvicorn in a thread;
    its own assembly config is one memory tier and its store."""
    cfg = write(tmp_path / "remote.toml", """\
[budget]
max_tokens = 400
[[tiers]]
name = "pinned"
sources = [{source = "memory", match = "all", items = [{content = "Always cite files."}]}]
pin = true
[[tiers]]
name = "store"
sources = ["local"]
top_k = 3
""")
    kw = Knotwork.open(write_vault(tmp_path / "homelab"), db=str(tmp_path / "remote.db"),
                       assemble_config=str(cfg))
    kw.ingest()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(kw, sync_vault=False), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, timeout=10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        kw.close()


@pytest.fixture
def silent() -> Iterator[str]:
    """A port that takes connections and never answers (the listen backlog accepts them)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Path]:
    """An embedded Qdrant folder with the collection ``archive`` (``hash`` vectors)."""
    from qdrant_client import QdrantClient, models

    folder = tmp_path / "qdrant-data"
    emb = open_embedder("hash")
    client = QdrantClient(path=str(folder))
    client.create_collection("archive", vectors_config=models.VectorParams(
        size=emb.dim, distance=models.Distance.COSINE))
    vectors = emb.embed([t for t, _ in ARCHIVE])
    client.upsert("archive", points=[
        models.PointStruct(id=n, vector=[float(x) for x in vectors[n]],
                           payload={"content": t, "source": s})
        for n, (t, s) in enumerate(ARCHIVE)])
    client.create_collection("small", vectors_config=models.VectorParams(
        size=4, distance=models.Distance.COSINE))
    client.close()  # one client per folder: the source opens its own
    yield folder
    close_clients()


@pytest.fixture
def local_db(tmp_path: Path) -> str:
    db = str(tmp_path / "local.db")
    with Knotwork.open(write_vault(tmp_path / "dec", DECISIONS), db=db,
                       scope="myapp__project_decisions") as kw:
        kw.ingest()
    return db


def three_tiers(tmp_path: Path, remote: str, *flaky: str) -> Path:
    extra = "" if not flaky else f"""
[[tiers]]
name = "flaky"
priority = 4
sources = {json.dumps(list(flaky))}
timeout = 0.5
"""
    return write(tmp_path / "knotwork.toml", f"""\
[budget]
max_tokens = 2000
[[tiers]]
name = "ground_truth"
priority = 1
sources = ["local:scope=myapp__project_decisions"]
top_k = 8
pin = true
[[tiers]]
name = "notes"
priority = 2
sources = ["local", "{remote}"]
top_k = 8
[[tiers]]
name = "archive"
priority = 3
sources = ["qdrant:./qdrant-data#archive?embedder=hash"]
top_k = 5
min_score = 0.3
{extra}""")


def test_the_cli_assembles_three_real_tiers_and_isolates_failures(
        tmp_path: Path, remote: str, silent: str, archive: Path, local_db: str) -> None:
    refused = f"http://127.0.0.1:{free_port()}"
    cfg = three_tiers(tmp_path, remote, refused, silent)
    start = time.monotonic()
    proc = subprocess.run(knotwork_cmd("--db", local_db, "assemble", "how do we deploy"
                                       " heliograph through traefik", "--config", str(cfg),
                                       "--json"), capture_output=True, text=True,
                          env=child_env(), timeout=60)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert set(d) == KEYS and all(set(r) == ITEM_KEYS for r in d["results"])
    counts = d["tier_counts"]
    assert counts["ground_truth"] >= 1 and counts["notes"] >= 1 and counts["archive"] == 2, (
        d["truncated"], d["errors"], [(r["tier"], r["source"], r["tokens"]) for r in d["results"]])
    assert counts["flaky"] == 0 and d["total_tokens"] <= 2000
    by_tier = {r["tier"]: r for r in reversed(d["results"])}
    assert by_tier["ground_truth"]["pinned"] and not by_tier["notes"]["pinned"]
    assert any(r["source"].endswith(f"@ {remote}") for r in d["results"])  # the http tier
    assert {r["source"] for r in d["results"] if r["tier"] == "archive"} == {
        "archive/2024-deploys.md", "archive/2023-deploys.md"}  # the menu scored under 0.3
    reasons = {e["source"]: e["reason"] for e in d["errors"]}
    assert set(reasons) == {refused, silent} and {e["tier"] for e in d["errors"]} == {"flaky"}
    assert reasons[silent] == "timed out after 0.5 s"
    assert "cannot reach" in reasons[refused]
    # the process started, imported, asked, and exited: the silent socket held it 0.5 s only
    assert took < 15, took
    tiers = [r["tier"] for r in d["results"]]
    assert tiers == sorted(tiers, key=["ground_truth", "notes", "archive"].index)


def test_the_python_api_reads_the_same_tiers(tmp_path: Path, remote: str, archive: Path,
                                            local_db: str) -> None:
    cfg = three_tiers(tmp_path, remote)
    with Knotwork.open(None, db=local_db) as kw:
        out = kw.assemble("how do we deploy heliograph", config=cfg, max_tokens=700,
                          tiers={"notes": {"top_k": 2}})
    assert out.errors == () and out.total_tokens == count_tokens(out.text)
    assert out.tier_counts["notes"] <= 2
    if out.total_tokens > 700:  # only by pinned items
        assert all(r.item.pinned for r in out.results)


def test_qdrant_mistakes_are_reported_not_raised(tmp_path: Path, archive: Path) -> None:
    cfg = write(tmp_path / "q.toml", """\
[[tiers]]
name = "a"
sources = ["qdrant:./qdrant-data#small?embedder=hash", "qdrant:./nowhere#archive?embedder=hash",
           "qdrant:./qdrant-data#nope?embedder=hash",
           "qdrant:./qdrant-data#archive?embedder=hash&content_field=body"]
""")
    with Knotwork.open(None, db=":memory:") as kw:
        out = kw.assemble("deploy heliograph", config=cfg)
    reasons = [e.reason for e in out.errors]
    assert reasons[0].startswith("collection 'small' holds 4-dim vectors; embedder 'hash'"
                                 " makes 64")
    assert reasons[1] == f"no Qdrant folder at {tmp_path / 'nowhere'}"
    assert reasons[2].startswith("no collection 'nope'") and len(reasons) == 3
    assert out.results == ()  # no point has a `body`: nothing to put in a prompt
    assert not (tmp_path / "nowhere").exists()


def test_post_assemble_answers_from_the_servers_tiers(remote: str) -> None:
    with httpx.Client(base_url=remote, timeout=10) as http:
        r = http.post("/assemble", json={"query": "traefik"})
        assert r.status_code == 200, r.text
        d = r.json()
        assert set(d) == KEYS and d["tier_counts"]["pinned"] == 1
        assert d["results"][0]["content"] == "Always cite files." and d["results"][0]["pinned"]
        assert d["total_tokens"] <= 400 and d["tier_counts"]["store"] == 3
        md = http.post("/assemble", json={"query": "traefik", "format": "markdown",
                                          "tiers": {"store": {"top_k": 1}}, "max_tokens": 300})
        assert md.headers["content-type"].startswith("text/markdown")
        assert md.text.startswith("# Context: traefik") and md.text.count("\n### ") == 2
        assert count_tokens(md.text) <= 300
        bad = http.post("/assemble", json={"query": "q", "tiers": {"nope": {"top_k": 1}}})
        # the schema names the server's tiers: another is refused by name
        assert bad.status_code == 422 and "tiers.nope" in bad.json()["message"], bad.text
        assert http.post("/assemble", json={"query": "q", "sources": []}).status_code == 422


def test_the_mcp_tool_assembles(tmp_path: Path, local_db: str) -> None:
    cfg = write(tmp_path / "mcp.toml", """\
[[tiers]]
name = "truth"
sources = ["local:scope=myapp__project_decisions"]
[[tiers]]
name = "slow"
sources = ["http://127.0.0.1:9"]
""")
    cmd = knotwork_cmd("--db", local_db, "mcp")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:],
                                   env=child_env(KNOTWORK_ASSEMBLE_CONFIG=str(cfg)))

    async def main() -> None:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write_), \
                    ClientSession(read, write_, read_timeout_seconds=30) as s:
                await s.initialize()
                result = await s.call_tool("assemble", {"query": "heliograph deploys",
                                                        "max_tokens": 500})
                assert not result.is_error, result.content
                d = result.structured_content
                assert d is not None and set(d) == KEYS
                assert d["tier_counts"]["truth"] >= 1 and d["errors"][0]["tier"] == "slow"
                typo = await s.call_tool("assemble", {"query": "q", "max_token": 5})
                assert typo.is_error

    anyio.run(main)
