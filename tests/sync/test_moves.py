"""A note moved to another folder and edited before the next sync is the same note: its
history goes on (a rename and an edit), not a delete and an add."""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork

NOTE = ("---\ntags: [infra]\n---\n# Kota\n\nKota runs on [[vega]].\n\n- owner [[Dana]]\n"
        "- depends_on [[Power]]\n\nLine four.\n")


def _facts(kw: Knotwork) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(predicate, value) -> (recorded_at, retracted_at) of every fact about Kota."""
    return {(f.predicate, f.value_label or str(f.value)): (f.recorded_at, f.retracted_at)
            for f in kw.facts("Kota", history=True)}


def test_a_move_with_an_edit_keeps_the_note_and_its_unchanged_facts(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "hosts").mkdir(parents=True)
    (vault / "hosts" / "kota.md").write_text(NOTE, encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        before = _facts(kw)
        doc_id = kw.store.reader.document("default", "hosts/kota.md").id  # type: ignore[union-attr]
        (vault / "hosts" / "kota.md").unlink()
        (vault / "archive").mkdir()
        (vault / "archive" / "kota.md").write_text(
            NOTE.replace("- depends_on [[Power]]", "- depends_on [[Grid]]"), encoding="utf-8")
        report = kw.ingest()
        assert (report.renamed, report.added, report.deleted) == (1, 0, 0)
        after = _facts(kw)
        moved = kw.store.reader.document("default", "archive/kota.md")
        assert moved is not None and moved.id == doc_id  # the same document, moved
        # what the note still says keeps the time it was first recorded
        for key in [("tag", "infra"), ("runs_on", "vega"), ("owner", "Dana")]:
            assert after[key] == before[key]
        assert after[("depends_on", "Power")][1] is not None  # retracted by the edit
        assert after[("depends_on", "Grid")][1] is None
        event = kw.store.reader.events(document_id=doc_id, limit=1)[0]
        assert event.action == "rename"


def test_a_rewrite_or_an_ambiguous_name_is_a_delete_and_an_add(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for folder in ("a", "b"):
        (vault / folder).mkdir(parents=True)
        (vault / folder / "todo.md").write_text(f"# Todo {folder}\n\nOne.\nTwo.\nThree.\n",
                                                encoding="utf-8")
    (vault / "plan.md").write_text("# Plan\n\nOne.\nTwo.\nThree.\nFour.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        # two vanished notes of one name: which one moved cannot be told
        for folder in ("a", "b"):
            (vault / folder / "todo.md").unlink()
        (vault / "c").mkdir()
        (vault / "c" / "todo.md").write_text("# Todo a\n\nOne.\nTwo.\nThree.\nAnd more.\n",
                                             encoding="utf-8")
        # a note rewritten as it moved keeps less than half its lines: another note
        (vault / "plan.md").unlink()
        (vault / "c" / "plan.md").write_text("# Plan\n\nAll new.\nNothing kept.\nAt all.\n",
                                             encoding="utf-8")
        report = kw.ingest()
        assert (report.renamed, report.added, report.deleted) == (0, 2, 3)


def test_a_watched_move_with_an_edit_is_a_rename(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "kota.md").write_text(NOTE, encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        (vault / "kota.md").unlink()
        (vault / "hosts").mkdir()
        (vault / "hosts" / "kota.md").write_text(NOTE + "\nOne line more.\n", encoding="utf-8")
        # the watcher's path: only the paths its events named
        report = kw.ingest(only=["kota.md", "hosts/kota.md"])
        assert (report.renamed, report.added, report.deleted) == (1, 0, 0)
        assert all(retracted is None for _, retracted in _facts(kw).values())
