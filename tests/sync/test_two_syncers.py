"""Two syncers on one store (a watcher and a CLI run, say): neither may delete a document,
or write an older version of it, because its own look at the folder is older than what
the other one wrote.

Each test runs the other syncer at the one moment that used to go wrong, through a hook
on the real ``scan`` or ``plan``; both stores are real SQLite connections to one file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knotwork import Knotwork
from knotwork.sync import files as sync


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# a\n\nThe first note, about [[b]].\n", encoding="utf-8")
    return vault


def _after(name: str, monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]) -> None:
    """Run ``then`` once, right after the first call of ``sync.<name>``."""
    real = getattr(sync, name)
    done: list[bool] = []

    def hooked(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if not done:
            done.append(True)
            then()
        return out

    monkeypatch.setattr(sync, name, hooked)


def test_a_note_synced_by_another_process_after_our_scan_is_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault, db = _vault(tmp_path), str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db) as kw:
        kw.ingest()

    def other_syncer_adds_b() -> None:
        (vault / "b.md").write_text("# b\n\nThe second note.\n", encoding="utf-8")
        with Knotwork.open(vault, db=db) as other:
            assert other.ingest(only=["b.md"]).added == 1

    _after("scan", monkeypatch, other_syncer_adds_b)
    with Knotwork.open(vault, db=db) as kw:
        report = kw.ingest()  # its scan saw no b.md; the store has it by the time it looks
        assert report.deleted == 0
        assert report.errors == ()
        assert kw.stats()["documents"] == 2
        assert kw.stats()["retracted_facts"] == 0
        assert kw.entity("b").entity.label == "b"


def test_a_file_created_again_after_the_plan_is_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault, db = _vault(tmp_path), str(tmp_path / "s.db")
    text = (vault / "a.md").read_text(encoding="utf-8")
    with Knotwork.open(vault, db=db) as kw:
        kw.ingest()
    (vault / "a.md").unlink()

    def put_it_back() -> None:  # the plan has seen a.md gone; it comes back before the write
        (vault / "a.md").write_text(text, encoding="utf-8")

    _after("plan", monkeypatch, put_it_back)
    with Knotwork.open(vault, db=db) as kw:
        report = kw.ingest()
        assert report.deleted == 0
        assert kw.stats()["documents"] == 1
        assert kw.stats()["retracted_facts"] == 0
        assert [f.value_label for f in kw.facts("a")] == ["b"]
    monkeypatch.undo()
    with Knotwork.open(vault, db=db) as kw:  # and the next sync has nothing left to do
        again = kw.ingest()
        assert (again.added, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 1)


def test_a_file_really_gone_is_still_deleted(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    vault, db = _vault(tmp_path), str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db) as kw:
        kw.ingest()
    (vault / "a.md").unlink()
    with Knotwork.open(vault, db=db) as kw:
        assert kw.ingest(only=["a.md"]).deleted == 1
        assert kw.stats()["documents"] == 0
        assert kw.stats()["retracted_facts"] == 1


@pytest.mark.parametrize("draft_age_s", [0, 3600])  # just written, or written long before
def test_an_older_read_never_overwrites_what_another_process_applied_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, draft_age_s: int) -> None:
    vault, db = _vault(tmp_path), str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db) as kw:
        kw.ingest()
    (vault / "a.md").write_text("---\nstatus: draft\n---\n# a\n", encoding="utf-8")
    when = time.time() - draft_age_s
    os.utime(vault / "a.md", (when, when))

    def edited_again_and_synced_elsewhere() -> None:  # our plan holds the draft
        (vault / "a.md").write_text("---\nstatus: final\n---\n# a\n", encoding="utf-8")
        with Knotwork.open(vault, db=db) as other:
            assert other.ingest(only=["a.md"]).updated == 1

    _after("plan", monkeypatch, edited_again_and_synced_elsewhere)
    with Knotwork.open(vault, db=db) as kw:
        report = kw.ingest()
        assert (report.updated, report.errors) == (0, ())
        assert [(f.predicate, f.value) for f in kw.facts("a")] == [("status", "final")]
    monkeypatch.undo()
    with Knotwork.open(vault, db=db) as kw:
        assert kw.ingest().unchanged == 1
