"""The public API is declared: a sorted ``__all__`` that matches the real public names."""

from __future__ import annotations

import knotwork


def test_all_is_sorted_and_complete() -> None:
    assert knotwork.__all__ == sorted(knotwork.__all__)
    public = {n for n in dir(knotwork) if not n.startswith("_")} - {
        "config", "core", "errors", "types", "ingest", "store", "retrieve", "render", "sync",
        "embed", "agent", "watch", "cli", "server", "mcp", "web", "domain", "checks", "results",
        "wiki", "assemble", "llm", "trust", "limits", "invalid", "facade"}
    assert public == set(knotwork.__all__) - {"__version__"}


def test_every_export_resolves() -> None:
    for name in knotwork.__all__:
        assert getattr(knotwork, name) is not None
