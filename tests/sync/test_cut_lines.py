"""A line longer than the chunk budget is cut into pieces that each cite it: a fact read
from such a line cites the piece that holds what it was read from, not the last one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from knotwork import Knotwork

# about 40 KB of words with no link, tag, field or sentence end: one paragraph, one line
FILLER = " ".join(f"word{i}" for i in range(5000))
ANCHORS = {"First": "[[First]]", "Middle": "[[Middle]]", "Last": "[[Last]]",
           "status": "[status:: done]", "late": "#late"}


def _long_note() -> str:
    half = FILLER[:len(FILLER) // 2]
    line = (f"See [[First]] {half} [[Middle]] {FILLER[len(half):]} [status:: done]"
            " then #late and [[Last]]")
    return f"# Long\n\n{line}\n\nAn ordinary line links [[Other]].\n"


def _citations(db: Path) -> dict[str, tuple[int, str]]:
    """Each live fact of Long.md by its value: (the line it cites, its chunk's text)."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT f.value, f.line_start, c.text FROM facts f JOIN documents d"
            " ON d.id = f.document_id JOIN chunks c ON c.id = f.chunk_id"
            " WHERE d.path = 'Long.md' AND f.retracted_at IS NULL").fetchall()
    finally:
        con.close()
    return {value: (line, text) for value, line, text in rows}


def _assert_each_fact_cites_its_piece(db: Path, line: int) -> None:
    cited = _citations(db)
    for value, anchor in ANCHORS.items():
        value = "done" if value == "status" else value
        assert cited[value][0] == line
        assert anchor in cited[value][1], f"{value} cites a piece without {anchor}"
    assert cited["Other"] == (line + 2, "An ordinary line links [[Other]].")


def test_a_fact_on_a_cut_line_cites_the_piece_holding_its_text(tmp_path: Path) -> None:
    vault, db = tmp_path / "vault", tmp_path / "s.db"
    vault.mkdir()
    note = vault / "Long.md"
    note.write_text(_long_note(), encoding="utf-8")
    with Knotwork.open(vault, db=str(db), embedder="none") as kw:
        kw.ingest()
        _assert_each_fact_cites_its_piece(db, 3)
        # an edit moves the line: the facts stay (the same statements) and their
        # citations move with it, to the pieces of the new version
        note.write_text("intro\n" + _long_note(), encoding="utf-8")
        assert kw.ingest().updated == 1
        _assert_each_fact_cites_its_piece(db, 4)


def test_a_mention_on_a_cut_line_cites_the_piece_holding_it(tmp_path: Path) -> None:
    vault, db = tmp_path / "vault", tmp_path / "s.db"
    vault.mkdir()
    third = len(FILLER) // 3
    line = (f"Kestrel Queue first {FILLER[:third]} then Vega Host {FILLER[third:2 * third]}"
            f" and Orion Relay {FILLER[2 * third:]} end")
    (vault / "Long.md").write_text(f"# Long\n\n{line}\n", encoding="utf-8")
    for name in ("Kestrel Queue", "Vega Host", "Orion Relay"):
        (vault / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(db), embedder="none") as kw:
        kw.ingest()
        cited = {f.value_label: f for f in kw.facts("Long") if f.predicate == "mentions"}
        assert set(cited) == {"Kestrel Queue", "Vega Host", "Orion Relay"}
        chunks = {cid: c.text for cid, c in kw.store.reader.chunks(
            [f.source.chunk_id for f in cited.values() if f.source and f.source.chunk_id]
        ).items()}
        for name, f in cited.items():
            assert f.source is not None and f.source.line_start == 3
            assert name in chunks[f.source.chunk_id], f"{name} cites a piece without it"
            assert name in f.source.supporting_text
