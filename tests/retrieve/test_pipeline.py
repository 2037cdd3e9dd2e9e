"""The context pipeline end to end on tiny vaults: what the ordering step is for."""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork


def _vault(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir()
    for title, text in notes.items():
        (root / f"{title}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return root


def test_the_second_hop_outranks_a_second_note_about_the_first(tmp_path: Path) -> None:
    # The question's second part ("port city", "bay") is answered by the note the first
    # note names; a second note about George Theal repeats what the first already holds.
    vault = _vault(tmp_path / "v", {
        "George Theal": "George Theal was a historian and writer, born in Saint John.",
        "George Theal School": "The George Theal School in the city of Cape Town is named"
                               " after George Theal, the historian; George Theal wrote its"
                               " motto.",
        "Saint John": "Saint John is a port city on the Bay of Fundy.",
        "Cape Town": "Cape Town is a city.",
        "Lake Town": "Lake Town is a small city on a lake.",
        "Bay": "A bay is a body of water.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        ents = kw.context("The birthplace of George Theal is a port city on what bay?",
                          max_tokens=0).entities
    got = [e.label for e in ents]
    assert set(got[:2]) == {"George Theal", "Saint John"}
    assert got[2] == "George Theal School"
    assert all(a.score >= b.score for a, b in zip(ents, ents[1:], strict=False))


def test_a_note_the_question_names_outranks_a_longer_text_match(tmp_path: Path) -> None:
    # "200 West Street" is named in full (as prose would mention it); "Atwood Building" only
    # shares words with the question, and "West Street" lies inside the longer name.
    vault = _vault(tmp_path / "v", {
        "200 West Street": "A 749-foot office tower in Manhattan, headquarters of a bank.",
        "888 7th Avenue": "An office building on 7th Avenue, 628 feet tall.",
        "Atwood Building": "The Atwood Building on West 7th Street is the tallest building"
                           " in the city, taller than any West Street tower around it.",
        "West Street": "West Street is a street in Manhattan.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        ctx = kw.context("Is 200 West Street taller than 888 7th Avenue?", max_tokens=0,
                         explain=True)
    why = {e.label: e.why for e in ctx.entities}
    assert {e.label for e in ctx.entities[:2]} == {"200 West Street", "888 7th Avenue"}
    assert "named in the question" in why["200 West Street"]
    assert "named in the question" not in why["West Street"]
