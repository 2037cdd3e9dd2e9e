"""Concurrency with real processes on one store and vault: two cold ingests at once, then
a watcher, the REST server and the MCP server (each watching the vault) while a script
makes random edits, renames, deletes and atomic saves, and a REST client and an MCP client
ask throughout. The store must end equal to a
fresh ingest of the same files, with no error surfaced to anyone: no 5xx, no "database is
locked", no traceback, and ``knotwork check`` passes.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time
from pathlib import Path

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from .helpers import cli, env, fingerprint, make_vault, random_edit

NOTES = 300
EDITS = 200


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settle(db: Path, *, quiet: float = 2.5, timeout: float = 60) -> dict[str, object]:
    """The store's fingerprint once it has stopped changing for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = fingerprint(db), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = fingerprint(db)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    raise AssertionError("the store never settled")


async def _ask_over_mcp(db: Path, vault: Path, log: Path, stop: threading.Event,
                        asked: list[int], errors: list[str]) -> None:
    """An agent on ``knotwork mcp --vault``: context and search until ``stop``."""
    cmd = cli("--db", str(db), "mcp", "--vault", str(vault))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env())
    rnd = random.Random(3)
    with open(log, "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=60) as s:
            await s.initialize()
            while not stop.is_set():
                q = f"Service {rnd.randrange(NOTES)}"
                for tool, args in (("context", {"query": q, "max_tokens": 800}),
                                   ("search", {"query": q})):
                    r = await s.call_tool(tool, args)
                    asked[0] += 1
                    if r.is_error:
                        block = r.content[0]
                        errors.append(f"mcp {tool}: "
                                      + (block.text[:200] if isinstance(block, TextContent)
                                         else repr(block)))


def test_ingests_watcher_and_servers_on_one_store_end_equal_to_a_fresh_ingest(
        tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", NOTES)
    db = tmp_path / "s.db"
    logs = [tmp_path / f"{n}.log" for n in ("ingest1", "ingest2", "watch", "serve", "mcp")]
    with open(logs[0], "w", encoding="utf-8") as one, open(logs[1], "w",
                                                           encoding="utf-8") as other:
        two = [subprocess.Popen(cli("--db", str(db), "ingest", str(vault), "-q"),
                                env=env(KNOTWORK_WORKERS="2"), stdout=subprocess.DEVNULL,
                                stderr=log) for log in (one, other)]
        for proc in two:
            assert proc.wait(timeout=120) == 0, [p.read_text() for p in logs[:2]]
    port = _free_port()
    errors: list[str] = []
    with open(logs[2], "w", encoding="utf-8") as wlog, \
            open(logs[3], "w", encoding="utf-8") as slog:
        watch = subprocess.Popen(cli("--db", str(db), "watch", "--vault", str(vault)),
                                 env=env(), stdout=subprocess.DEVNULL, stderr=wlog)
        serve = subprocess.Popen(cli("--db", str(db), "serve", "--vault", str(vault),
                                     "--port", str(port)),
                                 env=env(), stdout=subprocess.DEVNULL, stderr=slog)
        try:
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
            deadline = time.monotonic() + 30
            while True:
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline and serve.poll() is None, logs[3].read_text()
                time.sleep(0.1)
            stop = threading.Event()
            asked = [0]

            def ask() -> None:
                rnd = random.Random(1)
                while not stop.is_set():
                    q = f"Service {rnd.randrange(NOTES)}"
                    r = client.post("/context", json={"query": q, "max_tokens": 800})
                    asked[0] += 1
                    if r.status_code != 200:
                        errors.append(f"{r.status_code}: {r.text[:200]}")

            asker = threading.Thread(target=ask)
            asker.start()
            mcp_asked = [0]

            def ask_mcp() -> None:
                try:
                    anyio.run(_ask_over_mcp, db, vault, logs[4], stop, mcp_asked, errors)
                except Exception as exc:  # noqa: BLE001 - reported as the test's failure
                    errors.append(f"mcp client: {exc!r}")

            agent = threading.Thread(target=ask_mcp)
            agent.start()
            rnd = random.Random(7)
            for _ in range(EDITS // 10):  # a few hundred changes over ~10 s
                random_edit(vault, rnd, NOTES, 10)
                time.sleep(0.5)
            stop.set()
            asker.join(timeout=60)
            agent.join(timeout=60)
            client.close()
            settled = _settle(db)
        finally:
            for proc in (watch, serve):
                proc.send_signal(2)
                proc.wait(timeout=20)
    assert not errors, errors[:5]
    print(f"{asked[0]} REST answers, {mcp_asked[0]} MCP answers")  # (shown with pytest -s)
    assert asked[0] > 20 and mcp_asked[0] > 5
    for log in logs:
        text = log.read_text(encoding="utf-8")
        assert "Traceback" not in text and "database is locked" not in text, (log, text[-2000:])
    fresh = tmp_path / "fresh.db"
    subprocess.run(cli("--db", str(fresh), "ingest", str(vault), "-q"), env=env(), check=True,
                   timeout=120)
    expected = fingerprint(fresh)
    assert settled["documents"] == expected["documents"]
    assert settled == expected
    check = subprocess.run(cli("--db", str(db), "check"), env=env(), capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
