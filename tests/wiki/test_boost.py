"""``context`` checks the wiki first: a page the question hits is boosted and marked."""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork

BODY = "# {t}\n\nThe memory leak in the scheduler crashed the batch jobs.\n"


def test_a_wiki_page_beats_a_note_saying_the_same_and_is_marked(kw: Knotwork, vault: Path
                                                               ) -> None:
    (vault / "Leak Notes.md").write_text(BODY.format(t="Leak Notes"))
    kw.ingest()
    before = kw.context("memory leak scheduler", explain=True)
    assert before.entities[0].label == "Leak Notes" and not before.entities[0].wiki
    kw.write_page("summary", "Leak Summary", BODY.format(t="Leak Summary"))
    ctx = kw.context("memory leak scheduler", explain=True)
    first, *rest = ctx.entities
    assert first.label == "Leak Summary" and first.wiki
    assert any("wiki page" in w for w in first.why)
    assert first.as_dict()["wiki"] is True
    note = next(e for e in rest if e.label == "Leak Notes")
    assert not note.wiki and "wiki" not in note.as_dict()
    assert "· Direct · wiki page ·" in kw.render(ctx, "markdown")


def test_the_generated_index_and_log_are_never_boosted(kw: Knotwork) -> None:
    kw.write_page("topic", "Scheduler", "About the scheduler and [[Alpha]].",
                  summary="scheduler notes")
    kw.ingest()  # reads index.md and log.md as notes
    ctx = kw.context("scheduler notes")
    assert all(not e.wiki for e in ctx.entities if e.iri.endswith(("/index", "/log")))
