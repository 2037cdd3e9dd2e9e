"""What a PostgreSQL write leaves behind beyond its rows. An edit moves every kept fact of
its note to the new version; each such row's new version is written in the page the row
is in (``facts`` leaves half of each page free, schema migration 6): the update then
writes no index entry (HOT). A store made before the migration is upgraded as it opens.
A write's statements are prepared on the server from their second run."""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork
from knotwork.store.postgres.schema import SCHEMA_VERSION

from ..frontends.conftest import write_vault

NOTES = {f"n{i:02d}.md": f"# Note {i}\n\n" + "".join(
    f"- see [[Topic {i}-{j}]] for part {j}\n" for j in range(40)) for i in range(24)}



def _pages(url: str, path: str) -> dict[int, int]:
    """Each live fact of ``path``'s document: the page (block) its row is in."""
    import psycopg

    with psycopg.connect(url) as con:
        return {int(r[0]): int(r[1]) for r in con.execute(
            "SELECT f.id, (f.ctid::text::point)[0] FROM facts f JOIN documents d"
            " ON d.id = f.document_id WHERE d.path = %s AND d.deleted_at IS NULL"
            " AND f.retracted_at IS NULL", (path,))}


def _fillfactor(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as con:
        row = con.execute("SELECT reloptions FROM pg_class WHERE oid = 'facts'::regclass"
                          ).fetchone()
    return [o for o in (row[0] or [] if row else []) if o.startswith("fillfactor=")]


def test_an_edit_updates_its_kept_facts_in_their_pages(tmp_path: Path, url: str) -> None:
    vault = write_vault(tmp_path / "v", NOTES)
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        kw.ingest()
        before = _pages(url, "n00.md")
        assert len(before) >= 40 and len(set(before.values())) >= 2
        note = vault / "n00.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nEdited: see [[Topic 0-1]]\n",
                        encoding="utf-8")
        assert kw.ingest(only=["n00.md"]).updated == 1
        after = _pages(url, "n00.md")
    kept = [i for i in before if i in after]
    assert len(kept) >= 40
    moved = [i for i in kept if after[i] != before[i]]
    assert len(moved) <= len(kept) // 10, (len(moved), len(kept))


def test_a_store_made_before_is_upgraded(tmp_path: Path, url: str) -> None:
    import psycopg

    vault = write_vault(tmp_path / "v", dict(list(NOTES.items())[:2]))
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        kw.ingest()
        facts = [f.id for f in kw.facts("Note 0")]
    assert facts
    assert "fillfactor=50" in _fillfactor(url)
    with psycopg.connect(url, autocommit=True) as con:  # as schema 5 left it
        con.execute("ALTER TABLE facts RESET (fillfactor)")
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    assert _fillfactor(url) == []
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        assert [f.id for f in kw.facts("Note 0")] == facts
        assert kw.check().ok
    assert "fillfactor=50" in _fillfactor(url)
    with psycopg.connect(url) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                           ).fetchone() == (str(SCHEMA_VERSION),)


def test_a_writes_statements_are_prepared_from_their_second_run(tmp_path: Path, url: str
                                                                 ) -> None:
    """A write sends the same statements every time: the server keeps them parsed and
    planned once a connection has run one twice (reads keep psycopg's default)."""
    vault = write_vault(tmp_path / "v", dict(list(NOTES.items())[:1]))
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        kw.ingest()
        note = vault / "n00.md"
        for i in range(3):  # (4 writes of the document: fewer than psycopg's default of 5)
            note.write_text(note.read_text(encoding="utf-8") + f"\nEdit {i}.\n",
                            encoding="utf-8")
            assert kw.ingest(only=["n00.md"]).updated == 1
        prepared: set[str] = set()
        for _ in range(4):
            with kw.store.write(actor="test") as w:
                prepared |= {" ".join(str(r[0]).split()) for r in w.con.execute(
                    "SELECT statement FROM pg_prepared_statements")}
    assert any("UPDATE documents SET path" in s for s in prepared), sorted(prepared)
