"""Remembered counts are reused for one store state and never outlive it."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from knotwork import Knotwork
from knotwork.render import renderer
from knotwork.retrieve.memo import ReadMemo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"


class _Reader:
    def __init__(self) -> None:
        self.df = {"queue": 3, "gateway": 7}
        self.degree = {1: 4, 2: 900}
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, scopes: Sequence[str] | None = None
                         ) -> list[tuple[str, int]]:
        self.calls.append(("terms", tuple(words)))
        # (scope "a" holds one of every word: its counts are its own)
        return [(w, n if cap is None else min(n, cap)) for w in words
                for n in [1 if scopes == ["a"] else self.df.get(w, 0)]]

    def degrees(self, ids: Sequence[int], *, cap: int = 1000) -> dict[int, int]:
        self.calls.append(("degrees", tuple(ids)))
        return {i: min(self.degree.get(i, 0), cap) for i in ids}

    def stats(self) -> str:
        return "passed through"


def test_reads_are_answered_once_per_store_state() -> None:
    memo, raw = ReadMemo(), _Reader()
    r = memo.reader(raw, (1, 0))  # type: ignore[arg-type]
    assert r.term_frequencies(["queue", "gateway"], cap=5) == [("queue", 3), ("gateway", 5)]
    assert r.degrees([1, 2, 3]) == {1: 4, 2: 900, 3: 0}
    r = memo.reader(raw, (1, 0))  # type: ignore[arg-type]
    assert r.term_frequencies(["gateway", "queue", "queue"], cap=5) == [
        ("gateway", 5), ("queue", 3), ("queue", 3)]
    assert r.degrees([3, 2]) == {3: 0, 2: 900}
    assert raw.calls == [("terms", ("queue", "gateway")), ("degrees", (1, 2, 3))]
    # another cap is another question; an uncapped count is not a capped one
    assert r.term_frequencies(["gateway"]) == [("gateway", 7)]
    # and a count in some scopes is not the store's (nor the other way round)
    assert r.term_frequencies(["gateway"], cap=5, scopes=["a"]) == [("gateway", 1)]
    assert r.term_frequencies(["gateway"], cap=5) == [("gateway", 5)]
    assert r.stats() == "passed through"  # everything else goes to the store's reader

    raw.df["queue"], raw.degree[1] = 4, 5
    r = memo.reader(raw, (2, 0))  # type: ignore[arg-type]  # any commit: a new token
    assert r.term_frequencies(["queue"], cap=5) == [("queue", 4)]
    assert r.degrees([1]) == {1: 5}


def test_answers_after_an_edit_match_a_fresh_process(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLES, vault)
    db = str(tmp_path / "kw.db")
    kw = Knotwork.open(vault, db=db, embedder="none")
    kw.ingest()
    query = "traefik gateway certificates"
    kw.context(query)  # fills the memo
    note = next(vault.rglob("*.md"))
    note.write_text(note.read_text(encoding="utf-8")
                    + "\n\nTraefik gateway certificates, see [[Traefik]].\n", encoding="utf-8")
    kw.ingest()
    render = renderer("json")
    fresh = Knotwork.open(vault, db=db, embedder="none")
    assert render(kw.context(query)) == render(fresh.context(query))
    assert [h.chunk_id for h in kw.search(query)] == [h.chunk_id for h in fresh.search(query)]
