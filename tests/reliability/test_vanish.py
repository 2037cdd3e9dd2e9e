"""A file the store knows that vanishes between the scan and its read is deleted by the
same sync, not reported and left live until the next one.

The race is made real at its exact point: the folder's real scan runs, then the file is
deleted from the disk before the sync reads it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.sync import files


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    vault.mkdir()
    for name in ("a", "b", "c"):
        (vault / f"{name}.md").write_text(f"# {name}\n\nNote {name} links [[a]].\n",
                                          encoding="utf-8")
    return vault


def _live(kw: Knotwork) -> int:
    return int(kw.stats().as_dict()["documents"])


@pytest.mark.parametrize("force", [False, True])
def test_a_file_gone_after_the_scan_is_deleted_in_the_same_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force: bool) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        kw.ingest()
        (vault / "b.md").write_text("# b\n\nEdited, so the sync must read it.\n",
                                    encoding="utf-8")
        (vault / "new.md").write_text("# new\n\nA new note, gone before it is read.\n",
                                      encoding="utf-8")
        real_scan = files.scan

        def scan_then_delete(root: object, **kw_: object):  # type: ignore[no-untyped-def]
            listed = real_scan(root, **kw_)  # type: ignore[arg-type]
            os.remove(vault / "b.md")
            os.remove(vault / "new.md")
            return listed

        monkeypatch.setattr(files, "scan", scan_then_delete)
        report = kw.ingest(force=force)
        monkeypatch.undo()
        assert report.errors == ()
        assert (report.deleted, report.added) == (1, 0)
        assert _live(kw) == 2
        again = kw.ingest()
        assert (again.deleted, again.added, again.updated) == (0, 0, 0)


def test_a_file_gone_after_it_was_parsed_is_deleted_too(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        kw.ingest()
        (vault / "c.md").write_text("# c\n\nEdited.\n", encoding="utf-8")
        real = files._prepared

        def prepared_then_delete(store, job):  # type: ignore[no-untyped-def]
            out = real(store, job)
            if job[0] == "c.md":
                os.remove(vault / "c.md")
            return out

        monkeypatch.setattr(files, "_prepared", prepared_then_delete)
        report = kw.ingest()
        assert report.errors == () and report.deleted == 1 and _live(kw) == 2
