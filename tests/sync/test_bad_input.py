"""Bad input gets a precise error and loses nothing else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knotwork import Knotwork


def test_escaping_symlink_and_paths_are_refused(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n", encoding="utf-8")
    (vault / "ok.md").write_text("# ok\n\nlinks [[Secret]]\n", encoding="utf-8")
    os.symlink(outside, vault / "leak.md")
    os.symlink(vault, vault / "loop")  # a folder loop must not hang the scan
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        report = kw.ingest()
        assert report.added == 1
        [err] = [e for e in report.errors if e.path == "leak.md"]
        assert "escapes the vault" in err.reason
        report = kw.ingest(only=["../secret.md"])
        assert any("escapes the vault" in e.reason for e in report.errors)
        assert kw.stats()["documents"] == 1


def test_link_loops_and_links_into_ignored_folders_are_refused_not_fatal(
        tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "private").mkdir(parents=True)
    (vault / "ok.md").write_text("# ok\n", encoding="utf-8")
    (vault / "private" / "p.md").write_text("top secret\n", encoding="utf-8")
    (vault / ".knotworkignore").write_text("private\n", encoding="utf-8")
    os.symlink("self.md", vault / "self.md")
    os.symlink("loop2.md", vault / "loop1.md")
    os.symlink("loop1.md", vault / "loop2.md")
    os.symlink("private/p.md", vault / "pl.md")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        report = kw.ingest()
        assert report.added == 1
        reasons = {e.path: e.reason for e in report.errors}
        assert reasons == {"self.md": "cannot read: symlink loop",
                           "loop1.md": "cannot read: symlink loop",
                           "loop2.md": "cannot read: symlink loop",
                           "pl.md": "symlink to an ignored path: private/p.md"}
        again = kw.ingest(only=["self.md", "pl.md"])  # a watcher's batch: the same rules
        assert {e.path for e in again.errors} == {"self.md", "pl.md"}
        assert kw.search("secret") == []


def test_a_failing_file_keeps_its_previous_version(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    note = vault / "a.md"
    note.write_text("---\nrole: engineer\n---\n# A\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        kw.ingest()
        note.write_bytes(b"\xff\xfe broken \x00 bytes")
        report = kw.ingest()
        assert report.errors and report.updated == 0
        assert [(f.predicate, f.value) for f in kw.facts("a")] == [("role", "engineer")]


def test_a_parser_crash_costs_that_file_only(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import knotwork.ingest as ingest

    real = ingest.parse_markdown

    def flaky(path: str, data: bytes, **kw: int):  # type: ignore[no-untyped-def]
        if path == "boom.md":
            raise IndexError("list index out of range")
        return real(path, data, **kw)

    monkeypatch.setattr(ingest, "parse_markdown", flaky)
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "boom.md").write_text("# Boom\n", encoding="utf-8")
    (vault / "fine.md").write_text("# Fine\n\nrole:: engineer\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        report = kw.ingest()
        assert report.added == 1
        [err] = report.errors
        assert err.path == "boom.md" and "IndexError" in err.reason


@pytest.mark.parametrize("workers", [1, 2])
def test_a_document_the_store_refuses_costs_that_file_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    from knotwork.errors import StoreError
    from knotwork.store.sqlite.writer import Writer

    from .test_no_stale import live
    from .test_parallel import _vault

    real, savepoints = Writer._replace_names, []

    def refusing(self, doc_id, note_id, p, ts, *, fresh=False):  # type: ignore[no-untyped-def]
        out = real(self, doc_id, note_id, p, ts, fresh=fresh)  # rows written before the refusal
        if p.doc.path == "teams/bad.md":
            raise StoreError("disk says no")
        return out

    monkeypatch.setattr(Writer, "_replace_names", refusing)
    monkeypatch.setattr(Writer, "savepoint", lambda self, _f=Writer.savepoint: savepoints.append(1)
                        or _f(self))
    clean = _vault(tmp_path / "clean")
    with Knotwork.open(clean, db=str(tmp_path / "clean.db"), workers=workers) as kw:
        kw.ingest()
        expected, docs = live(kw), kw.stats()["documents"]
    assert savepoints == []  # no refusal: no savepoints
    vault = _vault(tmp_path / "with-bad")
    (vault / "teams" / "bad.md").write_text("# Bad\n\nuses [[note-1]]\n- uses [[Nowhere]]\n",
                                            encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "bad.db"), workers=workers) as kw:
        report = kw.ingest()
        assert [(e.path, e.reason) for e in report.errors if e.path != "broken.md"] == [
            ("teams/bad.md", "store refused: disk says no")]
        assert live(kw) == expected
        assert kw.stats()["documents"] == docs
    if workers == 1:  # in this process: the refused batch was written again, document by document
        assert savepoints


def test_a_dry_run_reports_the_files_the_real_run_would_refuse(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "ok.md").write_text("# ok\n", encoding="utf-8")
    (vault / "bin.md").write_bytes(b"ab\x00cd")
    (vault / "bad.md").write_bytes(b"# x\n\xff\n")
    (vault / "big.md").write_bytes(b"x" * 2000)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none",
                       max_file_bytes=1000) as kw:
        dry = kw.ingest(dry_run=True)
        assert kw.stats()["documents"] == 0  # nothing written
        real = kw.ingest()
    assert (dry.added, dry.updated) == (real.added, real.updated) == (1, 0)
    assert sorted((e.path, e.reason, e.line) for e in dry.errors) == sorted(
        (e.path, e.reason, e.line) for e in real.errors)
    assert {e.path for e in real.errors} == {"bin.md", "bad.md", "big.md"}


def test_a_notes_warnings_stay_listed_until_it_is_fixed(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for name, text in {"a.md": "---\ntags: [x\n---\n# A\n", "b.md": "# B\n"}.items():
        (vault / name).write_text(text, encoding="utf-8")
    note = vault / "a.md"
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert [e.path for e in kw.ingest().errors] == ["a.md"]
        assert kw.ingest().errors == ()  # unchanged: not read again, so not reported again
        stats = kw.stats()
        assert stats["documents_with_warnings"] == 1
        [warning] = stats["warnings"]  # type: ignore[misc]
        assert warning["path"] == "a.md" and warning["line"] == 2
        assert "malformed YAML" in warning["reason"]
        note.write_text("---\ntags: [x]\n---\n# A\n", encoding="utf-8")
        kw.ingest()
        assert kw.stats()["warnings"] == [] and kw.stats()["documents_with_warnings"] == 0
