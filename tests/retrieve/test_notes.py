"""Whole notes through the facade: read by path or name, list by folder, type, time."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import NotFound

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def test_read_and_list_notes(tmp_path: Path) -> None:
    with Knotwork.open(VAULT, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        by_name = kw.read_note("Traefik")
        assert by_name.path == "services/Traefik.md"
        assert kw.read_note("services/Traefik.md") == by_name
        assert by_name.numbered(7, 7) == "7  port: 443"
        assert by_name.lines == len((VAULT / "services" / "Traefik.md").read_text().splitlines())
        services, n = kw.list_notes(folder="services")
        assert n == len(services) and all(i.path.startswith("services/") for i in services)
        adrs, n = kw.list_notes(doc_type="ADR")
        assert n >= 2 and {i.doc_type for i in adrs} == {"adr"}
        two, n = kw.list_notes(limit=2)
        assert len(two) == 2 and n == 20
        assert kw.list_notes(since="2999-01-01T00:00:00Z") == ([], 0)
        with pytest.raises(NotFound):
            kw.read_note("No Such Note")


def test_search_per_note_and_hybrid_without_vectors(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "big.md").write_text("".join(f"## Part {i}\n\nqueue part {i}.\n\n"
                                          for i in range(12)))
    (vault / "main.md").write_text("# Main\n\nThe queue, in short.\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        plain = [h.path for h in kw.search("queue", k=5)]
        grouped = [h.path for h in kw.search("queue", k=5, per_note=2)]
        assert grouped.count("big.md") <= 2 and "main.md" in grouped
        assert len(grouped) == 3 and len(plain) == 5
        # hybrid with no vectors searches the full text, as context answers without them
        assert [h.path for h in kw.search("queue", k=5, mode="hybrid")] == plain
