"""A small vault, a scripted chat server and a Knotwork pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knotwork import Knotwork

from .chatserver import ChatServer

NOTES = {
    "services/Kestrel Queue.md": """\
---
type: service
---
# Kestrel Queue

Kestrel Queue uses Postgres for its durable log.

## Hosting

Kestrel Queue runs on Kota since the move in March.

## History

Kestrel Queue replaces Heliograph after the outage of 2025.
""",
    "services/Traefik.md": """\
---
type: service
---
# Traefik

Traefik runs on Kota and terminates TLS for every web service.

## Routing

Traefik depends on Grafana for the dashboards it routes to.
""",
    "people/Dana.md": """\
# Dana

Dana keeps the homelab running and writes most of the runbooks.
""",
}


def write_vault(root: Path) -> Path:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "vault")


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


@pytest.fixture
def kw(vault: Path, server: ChatServer, tmp_path: Path) -> Iterator[Knotwork]:
    with Knotwork.open(vault, db=str(tmp_path / "store.db"), llm_url=server.url,
                       llm_model="test-model", llm_retries=2, llm_timeout=5.0) as k:
        yield k
