"""A deleted note is not found (its history stays), not an empty shell."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import NotFound


def test_a_deleted_note_is_not_found_but_its_history_is(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Zebra Cache.md").write_text("# Zebra Cache\n\nA cache. Runs on [[kota]].\n")
    (vault / "kota.md").write_text("# kota\n\nA host.\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert kw.entity("Zebra Cache").facts
        (vault / "Zebra Cache.md").unlink()
        kw.ingest()
        with pytest.raises(NotFound, match="'Zebra Cache' is a deleted note \\(deleted at 20"):
            kw.entity("Zebra Cache")
        with pytest.raises(NotFound, match="deleted note"):
            kw.facts("Zebra Cache")
        [gone] = kw.facts("Zebra Cache", history=True)
        assert gone.retract_reason == "source deleted"
        assert kw.entity("kota").entity.label == "kota"  # a live note is found as before
