"""An answer is read from one state of the store, even while a watcher commits mid-way."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knotwork import Knotwork
from knotwork.render import renderer
from knotwork.store.sqlite.reader import Reader

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"
GONE = "hosts/kota.md"
RETITLED = "services/Traefik.md"


def _answer(kw: Knotwork, what: str) -> tuple[str, set[str]]:
    """The answer as sent, and the paths it cites."""
    if what == "context":
        ctx = kw.context("traefik kota")
        cited = {f.source.path for e in ctx.entities for f in (*e.facts, *e.incoming)
                 if f.source is not None} | {v.path for v in ctx.evidence}
        return renderer("json")(ctx), cited
    hits = kw.search("traefik kota", k=10)
    return repr(hits), {h.path for h in hits}


@pytest.mark.parametrize(("what", "late_read"), [("context", "edges"), ("context", "chunks"),
                                                 ("search", "chunks")])
def test_a_commit_during_an_answer_is_not_half_seen(tmp_path: Path, what: str,
                                                    late_read: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLES, vault)
    db = str(tmp_path / "store.db")
    kw = Knotwork.open(vault, db=db, embedder="none")
    kw.ingest()
    before, cited = _answer(kw, what)
    assert GONE in cited and "Traefik Edge" not in before

    # another process's watcher (another connection) deletes a note the answer cites and
    # retitles another, after the answer's first reads and before its later ones
    watcher = Knotwork.open(vault, db=db, embedder="none")
    read: Callable[..., Any] = getattr(Reader, late_read)
    fired: list[int] = []

    def late(self: Reader, *args: Any, **kwargs: Any) -> Any:
        if not fired:
            fired.append(1)
            (vault / GONE).unlink()
            note = vault / RETITLED
            note.write_text(note.read_text().replace("title: Traefik", "title: Traefik Edge"))
            report = watcher.ingest()
            assert (report.deleted, report.updated) == (1, 1)
        return read(self, *args, **kwargs)

    monkeypatch.setattr(Reader, late_read, late)
    assert _answer(kw, what)[0] == before  # all of it from the state it started in
    assert fired
    after, cited = _answer(kw, what)  # the next answer sees both changes
    assert GONE not in cited and "Traefik Edge" in after
    watcher.close()
    kw.close()
