"""A watched change is applied at once, whatever backlog of chunks waits to be embedded;
closing stops the embedding after its batch."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from knotwork import Knotwork


class Slowed:
    """The real hash embedder, taking ``pause`` seconds per batch (a model on a busy CPU)."""

    def __init__(self, inner: Any, pause: float) -> None:
        self.inner, self.pause = inner, pause

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: list[str]) -> Any:
        time.sleep(self.pause)
        return self.inner.embed(texts)


def test_a_watched_change_is_not_held_behind_embedding(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for i in range(300):  # a backlog: 300 chunks, 5 batches of 64, 0.5 s each
        (vault / f"n{i:03}.md").write_text(f"# Note {i}\n\nText {i}.\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw._embedder = Slowed(kw.embedder(), 0.5)
        applied = threading.Event()

        def seen(report: Any) -> None:
            if report.added:
                applied.set()

        watcher = kw.watcher(on_report=seen).start()
        try:
            kw.ingest(embed=False)
            kw.embed_in_background()  # the backlog: about 2.5 s of embedding
            time.sleep(0.3)
            (vault / "new.md").write_text("# New\n\nJust added.\n")
            started = time.monotonic()
            assert applied.wait(10)
            took = time.monotonic() - started
            stats = kw.stats()
            assert stats.embedded_chunks < stats.chunks, stats  # applied while embedding ran
            assert took < 2.0, took
            assert kw.entity("New").entity.label == "New"
        finally:
            watcher.stop()
        started = time.monotonic()
    # closing waited for the batch under way only, not for the rest of the backlog
    assert time.monotonic() - started < 2.0
