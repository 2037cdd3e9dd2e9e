"""Shared pieces for the front-end tests: a tiny vault, the CLI as a real process, polling.

The front ends are exercised as their users meet them: ``knotwork mcp`` through the
official MCP client over stdio, ``knotwork serve`` through httpx against a real uvicorn,
``knotwork watch`` as a process stopped with Ctrl-C (SIGINT).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

import pytest

T = TypeVar("T")

NOTES: dict[str, str] = {
    "services/Traefik.md": """\
---
type: service
runs_on: "[[kota]]"
port: 443
aliases: [traefik-proxy]
---
# Traefik

The reverse proxy in front of every web service; it terminates TLS.
It routes dashboards to [[Grafana]].
""",
    "services/Grafana.md": """\
---
type: service
runs_on: "[[kota]]"
---
# Grafana

Dashboards for the homelab metrics.
""",
    "hosts/kota.md": """\
---
type: host
os: debian
---
# kota

A small home server in the hall closet.
""",
    "people/Alice.md": """\
---
type: person
owns: "[[Traefik]]"
---
# Alice

Runs the homelab.
""",
}


def write_vault(root: Path, notes: dict[str, str] = NOTES) -> Path:
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "vault")


def knotwork_cmd(*args: str) -> list[str]:
    """The CLI as a user runs it, in a fresh interpreter."""
    return [sys.executable, "-m", "knotwork.cli.main", *args]


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child: no inherited KNOTWORK_* settings, fast test commits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env.update(PYTHONUNBUFFERED="1", KNOTWORK_SYNCHRONOUS="NORMAL", KNOTWORK_DEBOUNCE_MS="100")
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(probe: Callable[[], T | None], *, timeout: float = 5.0, step: float = 0.05) -> T:
    """Poll ``probe`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)


def wait_served(proc: subprocess.Popen[str], base: str, log: Path, *, timeout: float = 20.0,
                locked: bool = False) -> None:
    """Wait until the server ``proc`` answers ``/health`` at ``base`` (``locked``: a 401 of
    a server behind tokens counts as up); fail with its log if it exits first."""
    import httpx

    def up() -> bool:
        assert proc.poll() is None, log.read_text(encoding="utf-8")
        try:
            return httpx.get(base + "/health").status_code in ((200, 401) if locked else (200,))
        except httpx.TransportError:
            return False

    wait_for(up, timeout=timeout)


@contextmanager
def running(cmd: list[str], log: Path, *, env: dict[str, str] | None = None,
            stdout: int | IO[str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """Run ``cmd`` with stderr to ``log``; on exit stop it with SIGINT (Ctrl-C) and reap it."""
    with open(log, "w", encoding="utf-8") as errlog, subprocess.Popen(
            cmd, stdout=stdout if stdout is not None else subprocess.DEVNULL, stderr=errlog,
            stdin=subprocess.DEVNULL, env=env or child_env(), text=True) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(2)  # SIGINT, as Ctrl-C
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
