"""One note synced alone is the same document as when its whole folder is synced."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from knotwork import Knotwork
from knotwork.errors import Conflict, InvalidQuery
from knotwork.store import TextQuery

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES, tmp_path / "vault"))


def test_a_file_is_named_by_its_path_in_the_vault_the_store_last_synced(
        vault: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Knotwork.open(None, db=db, embedder="none") as kw:  # no vault: the CLI's case
        with pytest.raises(InvalidQuery, match="no folder synced yet"):
            kw.ingest(vault / "services" / "Traefik.md")
        assert kw.ingest(vault, dry_run=True).added == 20
        with pytest.raises(InvalidQuery, match="no folder synced yet"):  # a dry run records none
            kw.ingest(vault / "services" / "Traefik.md")
        documents = kw.ingest(vault).added
        note = vault / "services" / "Traefik.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nTraefik reports to [[vega]].\n",
                        encoding="utf-8")
        (vault / "hosts" / "kota.md").write_text("# kota\n", encoding="utf-8")  # not this one's
        report = kw.ingest(note)
        assert (report.added, report.updated, report.unchanged) == (0, 1, 0)
        assert kw.stats()["documents"] == documents
        assert any(f.value_label == "vega" and f.source.path == "services/Traefik.md"
                   for f in kw.facts("Traefik"))
        # the other edit waits for its own sync, untouched by the one-file sync
        assert any(f.predicate == "os" for f in kw.facts("kota"))
        assert kw.ingest(vault).updated == 1


def test_a_file_outside_the_vault_or_left_out_by_its_rules_is_refused(
        vault: Path, tmp_path: Path) -> None:
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "workspace.md").write_text("# ws\n", encoding="utf-8")
    (vault / "notes.txt").write_text("# not a note\n", encoding="utf-8")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# elsewhere\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert kw.ingest(vault / "index.md").added == 1  # the open vault names it
        with pytest.raises(InvalidQuery, match="not inside the vault"):
            kw.ingest(outside)
        for left_out in (vault / ".obsidian" / "workspace.md", vault / "notes.txt"):
            with pytest.raises(InvalidQuery, match="is not a note"):
                kw.ingest(left_out)
        assert kw.stats()["documents"] == 1


def test_a_scope_keeps_its_vault_unless_told_to_replace_it(vault: Path, tmp_path: Path
                                                             ) -> None:
    other = tmp_path / "other"
    (other / "notes").mkdir(parents=True)
    (other / "notes" / "solo.md").write_text("# Solo\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    with Knotwork.open(None, db=db, embedder="none") as kw:
        notes = kw.ingest(vault).added
        with pytest.raises(Conflict, match=f"holds the vault {vault.resolve()}; syncing"
                                           f" {other.resolve()} would delete {notes} of"):
            kw.ingest(other)
        assert kw.stats()["documents"] == notes  # nothing deleted
        assert kw.ingest(other, dry_run=True).deleted == notes  # a dry run may look
        assert kw.ingest(other, scope="side").added == 1  # another scope is another vault
        report = kw.ingest(other, replace=True)
        assert (report.added, report.deleted) == (1, notes)
        assert kw.ingest(other).unchanged == 1  # its vault now
        moved = tmp_path / "moved"
        other.rename(moved)
        assert kw.ingest(moved).unchanged == 1  # a vault that moved is followed
        copy = tmp_path / "copy"
        shutil.copytree(moved, copy)
        assert kw.ingest(copy).unchanged == 1  # a copy deletes nothing: no question
        assert kw.ingest(vault, dry_run=True).deleted == 1  # a dry run is never refused
        with pytest.raises(Conflict, match="would delete 1 of its notes"):
            kw.ingest(vault)


def test_an_iri_finds_the_live_note_at_its_path_not_a_deleted_one(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# Old A\n\nold runs on [[kota]].\n", encoding="utf-8")
    (vault / "b.md").write_text("# Bee\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        (vault / "a.md").unlink()
        kw.ingest()
        (vault / "b.md").rename(vault / "a.md")  # same content: a rename of b to a.md
        kw.ingest()
        assert kw.entity("kw:note/a").entity.label == "Bee"
        assert kw.entity("a").entity.label == "Bee"


def test_a_deleted_file_synced_alone_is_deleted(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nowner:: [[Bo]]\n", encoding="utf-8")
    (vault / "b.md").write_text("# B\n", encoding="utf-8")
    with Knotwork.open(db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest(vault)
        (vault / "a.md").unlink()
        report = kw.ingest(vault / "a.md")
        assert report.deleted == 1 and kw.facts("b") == []
        assert kw.stats()["documents"] == 1
        with pytest.raises(InvalidQuery, match="does not exist"):
            kw.ingest(vault / "a.md")  # gone and no longer held
        with pytest.raises(InvalidQuery, match="does not exist"):
            kw.ingest(vault / "never.md")


def test_a_name_nothing_refers_to_any_more_is_no_longer_found(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    note = vault / "a.md"
    note.write_text("# A\n\nIt runs on [[kota]].\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert "kota" in [e.label for e in kw.context("kota", max_tokens=0).entities]
        note.write_text("# A\n\nIt runs on nothing.\n", encoding="utf-8")
        kw.ingest()
        # as a fresh ingest of the folder: no entity named kota to find
        assert "kota" not in [e.label for e in kw.context("kota", max_tokens=0).entities]
        note.write_text("# A\n\nIt runs on [[kota]] again.\n", encoding="utf-8")
        kw.ingest()
        assert "kota" in [e.label for e in kw.context("kota", max_tokens=0).entities]


def test_a_link_resolves_to_a_note_of_its_own_scope_only(tmp_path: Path) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    b.mkdir()
    (a / "kota.md").write_text("# kota\n\nA's host.\n", encoding="utf-8")
    (b / "svc.md").write_text("# svc\n\nSvc runs on [[kota]].\n", encoding="utf-8")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "web.md").write_text("# web\n\nWeb runs on [[kota]].\n", encoding="utf-8")
    with Knotwork.open(db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest(a, scope="A")
        kw.ingest(b, scope="B")
        kw.ingest(tmp_path / "d")  # the default scope links to kota too
        [runs_on] = kw.facts("svc")
        # B holds no note kota: the link stays a name of B's, never A's note
        assert runs_on.value == "kw:B/name/kota" and runs_on.value_label == "kota"
        [web] = kw.facts("web")
        assert web.value == "kw:name/kota"  # nor the default scope's
        assert [e.label for e in kw.context("svc kota", scopes=["B"], max_tokens=0).entities
                if e.iri.startswith("kw:A/")] == []
        (b / "kota.md").write_text("# kota\n\nB's own host.\n", encoding="utf-8")
        kw.ingest(b, scope="B")
        [runs_on] = kw.facts("svc")
        assert runs_on.value == "kw:B/note/kota"  # resolved, within B
        [web] = kw.facts("web")
        assert web.value == "kw:name/kota"


def test_upgrading_gives_each_scope_its_own_names(tmp_path: Path) -> None:
    import sqlite3

    a, b, d = tmp_path / "A", tmp_path / "B", tmp_path / "d"
    for folder, name, text in ((a, "kota", "# kota\n"), (b, "svc", "Svc runs on [[kota]].\n"),
                               (d, "web", "Web runs on [[kota]].\n")):
        folder.mkdir()
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    db = str(tmp_path / "s.db")
    with Knotwork.open(db=db, embedder="none") as kw:
        kw.ingest(a, scope="A")
        kw.ingest(b, scope="B")
        kw.ingest(d)
    # the store as schema 7 left it: one entity for the name kota, shared by B and the
    # default scope, resolved to A's note
    con = sqlite3.connect(db)
    shared = con.execute("SELECT id FROM entities WHERE key = 'name:kota'").fetchone()[0]
    scoped = con.execute("SELECT id FROM entities WHERE key = 'name@B' || char(31) || 'kota'"
                         ).fetchone()[0]
    note_a = con.execute("SELECT id FROM entities WHERE iri = 'kw:A/note/kota'").fetchone()[0]
    con.execute("UPDATE facts SET object_id = ? WHERE object_id = ?", (shared, scoped))
    con.execute("DELETE FROM entities WHERE id = ?", (scoped,))
    con.execute("DELETE FROM entity_fts WHERE rowid = ?", (scoped,))
    con.execute("UPDATE entities SET scope = 'B', resolved_id = ? WHERE id = ?",
                (note_a, shared))
    con.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with Knotwork.open(db=db, embedder="none") as kw:
        assert kw.facts("svc")[0].value == "kw:B/name/kota"
        assert kw.facts("web")[0].value == "kw:name/kota"
        assert kw.facts("svc")[0].value_label == "kota"
        found = kw.store.reader.search_entities(TextQuery(("kota",)), limit=10)
        assert len(found) == 3  # A's note and the two scopes' names, all in the index


def test_a_link_typed_composed_resolves_to_a_decomposed_file_name(tmp_path: Path) -> None:
    import unicodedata

    vault = tmp_path / "v"
    vault.mkdir()
    decomposed = unicodedata.normalize("NFD", "Café")
    (vault / f"{decomposed}.md").write_text("plain\n", encoding="utf-8")  # as macOS names it
    (vault / "link.md").write_text("The [[Café]] is open.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        [link] = kw.facts("link")
        assert link.value == "kw:note/" + quote(decomposed)  # the note, not a bare name


def test_upgrading_rekeys_decomposed_names_and_merges_their_twins(tmp_path: Path) -> None:
    import sqlite3
    import unicodedata

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("Owns [[Müller]].\n", encoding="utf-8")
    (vault / "b.md").write_text("Uses [[Café]].\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
    # the store as schema 8 left it: b.md linked a decomposed "Café" (its own entity),
    # and a.md's "Müller" was keyed decomposed with a composed twin another note made
    con = sqlite3.connect(db)
    nfd = {k: unicodedata.normalize("NFD", k) for k in ("café", "müller")}
    con.execute("UPDATE entities SET key = 'name:' || ?, name_key = ? WHERE key = 'name:café'",
                (nfd["café"], nfd["café"]))
    twin = con.execute("SELECT id FROM entities WHERE key = 'name:müller'").fetchone()[0]
    con.execute("INSERT INTO entities(key, kind, scope, iri, label, name_key, created_at)"
                " VALUES('name:' || ?, 'name', 'default', 'kw:name/x', 'Müller', ?, '')",
                (nfd["müller"], nfd["müller"]))
    old = con.execute("SELECT id FROM entities WHERE key = 'name:' || ?",
                      (nfd["müller"],)).fetchone()[0]
    con.execute("UPDATE facts SET object_id = ? WHERE object_id = ?", (old, twin))
    con.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    (vault / "café.md").write_text("# Café\n", encoding="utf-8")  # composed, found by the link
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        [owns] = kw.facts("a")
        assert owns.value == "kw:name/m%C3%BCller"  # the composed entity, facts moved to it
        keys = [r[0] for r in kw.store._con().execute(
            "SELECT key FROM entities WHERE kind = 'name' ORDER BY key")]
        assert keys == ["name:café", "name:müller"]
        kw.ingest()
        [uses] = kw.facts("b")
        assert uses.value == "kw:note/caf%C3%A9"
