"""A small vault whose notes all link each other both ways: lint finds nothing in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knotwork import Knotwork

CLEAN = {
    "Alpha.md": "---\nstatus: active\n---\n# Alpha\n\nAlpha links to [[Beta]] and [[Gamma]];"
                " see [[Incident Summary]].\n",
    "Beta.md": "# Beta\n\nBeta links to [[Alpha]] and [[Gamma]].\n",
    "Gamma.md": "---\nport: 443\n---\n# Gamma\n\nGamma links to [[Alpha]] and [[Beta]].\n",
}


def write(vault: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    write(root, CLEAN)
    return root


@pytest.fixture
def kw(vault: Path, tmp_path: Path) -> Iterator[Knotwork]:
    with Knotwork.open(vault, db=str(tmp_path / "kw.db"), embedder="none",
                       actor="agent:test") as k:
        k.ingest()
        yield k


def fact_id(kw: Knotwork, ref: str, predicate: str) -> int:
    [f] = [f for f in kw.facts(ref) if f.predicate == predicate]
    return f.id
