"""Which files are a vault's sources: the whole-vault scan and the one-path check agree."""

from __future__ import annotations

import os
from pathlib import Path

from knotwork import Knotwork
from knotwork.ingest.sources import SourceFile, scan, source_file
from knotwork.types import Issue


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    for rel in ("a.md", "deep/b.md", "notes.txt", ".obsidian/c.md", "drafts/d.md",
                "keep/e.md", "keep/scratch.md", "folder.md/f.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# {rel}\n", encoding="utf-8")
    (vault / ".knotworkignore").write_text("# comment\ndrafts\n**/scratch.md\n",
                                           encoding="utf-8")
    (tmp_path / "outside.md").write_text("# outside\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.md", vault / "leak.md")
    os.symlink(vault / "a.md", vault / "alias.md")  # a note of the vault: that note
    os.symlink(vault / "notes.txt", vault / "text.md")  # a file no glob covers: followed
    os.symlink(vault / "deep", vault / "linked")  # a folder link: the walk does not follow
    os.symlink(vault / "gone.md", vault / "broken.md")
    os.mkfifo(vault / "pipe.md")
    return vault


def test_one_path_is_judged_as_the_scan_judges_it(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    files, issues = scan(vault)
    listed = {f.path: f for f in files}
    refused = {i.path: i.reason for i in issues}
    assert sorted(listed) == ["a.md", "deep/b.md", "folder.md/f.md", "keep/e.md", "text.md"]
    assert sorted(refused) == ["broken.md", "leak.md", "pipe.md"]
    assert "escapes the vault" in refused["leak.md"]
    assert refused["pipe.md"] == "not a regular file"
    candidates = [*listed, *refused, "notes.txt", ".obsidian/c.md", "drafts/d.md",
                  "keep/scratch.md", "folder.md", "linked/b.md", "missing.md", "deep", "alias.md"]
    for rel in candidates:
        got = source_file(vault, rel)
        if rel in listed:
            assert got == listed[rel], rel
        elif rel in refused:
            assert isinstance(got, Issue) and got.reason == refused[rel], rel
        else:
            assert got is None, rel
    escape = source_file(vault, "../outside.md")
    assert isinstance(escape, Issue) and "escapes the vault" in escape.reason


def test_a_watched_path_obeys_the_ignore_file(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        report = kw.ingest(only=["drafts/d.md", "keep/scratch.md", "keep/e.md"])
        assert (report.added, report.errors) == (1, ())
        assert kw.stats()["documents"] == 1


def test_a_note_newly_ignored_leaves_the_store(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        assert kw.ingest().added == 5
        (vault / ".knotworkignore").write_text("drafts\n**/scratch.md\nkeep\n",
                                               encoding="utf-8")
        # the file is still there, but the vault no longer counts it: it is deleted
        assert source_file(vault, "keep/e.md") is None
        assert kw.ingest().deleted == 1
        assert kw.stats()["documents"] == 4
        assert isinstance(source_file(vault, "a.md"), SourceFile)


def test_a_link_to_a_note_is_that_note_not_a_second_one(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "services").mkdir(parents=True)
    (vault / "services" / "Traefik.md").write_text("# Traefik\n\nThe proxy.\n",
                                                   encoding="utf-8")
    (vault / "a.md").write_text("# A\n\nuses [[Traefik]]\n", encoding="utf-8")
    os.symlink("services/Traefik.md", vault / "Traefik.md")  # the shorter path
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        report = kw.ingest()
        assert (report.added, report.errors) == (2, ())
        uses = [f for f in kw.facts("A") if f.predicate == "uses"]
        assert [f.value for f in uses] == ["kw:note/services/Traefik"]
        assert not kw.stats()["ambiguous_names"]
