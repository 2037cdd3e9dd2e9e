"""Test-wide defaults.

Embedding every ingested chunk with the real model would make each CLI and server test
wait on ONNX; tests switch it off unless they test embeddings, and those choose the
deterministic ``hash`` embedder or the real model explicitly.

The ``slow`` marker: ``pytest -m "not slow"`` is the edit-test loop. It leaves out the
modules that start real processes (the MCP server over stdio, uvicorn, ``knotwork watch``,
worker pools), load the bundled model, or run property tests over many examples; CI runs
them all.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# tests/-relative paths of the modules marked slow (see the docstring)
SLOW_MODULES = frozenset({
    "frontends/test_mcp.py", "frontends/test_rest.py", "frontends/test_watch.py",
    "sync/test_no_stale.py", "sync/test_parallel.py", "ingest/test_properties.py",
    "embed/test_minilm.py", "embed/test_static_build.py", "retrieve/test_semantic_minilm.py",
    "embed/test_quantized.py", "retrieve/test_embedder_choice.py",
    "wiki/test_concurrency.py",
    "frontends/test_mcp_wiki.py", "frontends/test_rest_wiki.py",
    "assemble/test_properties.py", "assemble/test_real_sources.py", "llm/test_frontends.py",
    "trust/test_scopes.py", "trust/test_web.py", "trust/test_as_of.py",
    "trust/test_as_of_history.py",
    "frontends/test_mcp_doors.py", "frontends/test_rest_doors.py",
    "reliability/test_crash.py", "reliability/test_hostile_files.py",
    "reliability/test_concurrency.py", "frontends/test_rest_fuzz.py",
    "frontends/test_actors.py", "test_readme_numbers.py", "cli/test_terminal.py",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath / "tests"
    missing = sorted(m for m in SLOW_MODULES if not (root / m).is_file())
    if missing:  # a renamed module must not drop out of the slow lane unnoticed
        raise pytest.UsageError(f"SLOW_MODULES names missing files: {missing}")
    for item in items:
        if item.path.relative_to(root).as_posix() in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _no_embedding_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "none")


@pytest.fixture
def taught_relation() -> Iterator[None]:
    """Whatever the test teaches the relation lexicon (``register_relation``,
    ``register_key``) is forgotten after it."""
    from knotwork.ingest.lexicon import LEXICON

    before = LEXICON.snapshot()
    yield
    LEXICON.restore(before)
