"""A chat's notes: the speakers' names name nothing, and a turn answers, not a chunk.

``retrieve.vector_text``: a question's vector is taken without a name most chunks hold.
``retrieve.records``: when the question's best text chunks are lists of records, each
candidate also scores its best line.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.retrieve import records
from knotwork.retrieve.records import by_record, record_scores
from knotwork.retrieve.vector_text import vector_text as text_for_vectors

FILLER = ["the weather was grey", "work was long today", "we watched a film",
          "dinner was pasta again", "the bus came late", "I read a short book",
          "the garden needs rain", "my phone broke again"]


def _session(i: int, turns: list[tuple[str, str]]) -> str:
    lines = [f"- **{who}** (D{i}:{j}): {said}" for j, (who, said) in enumerate(turns, 1)]
    return f"# Chat session {i}\n\n## Conversation\n" + "\n".join(lines) + "\n"


def _chat_vault(root: Path, extra: dict[int, list[tuple[str, str]]]) -> Path:
    """Sessions of Caroline and Melanie: every chunk holds both names (as speakers)."""
    root.mkdir()
    for i in range(1, 21):
        turns = extra.get(i) or [("Caroline", FILLER[i % 8]), ("Melanie", FILLER[(i + 3) % 8]),
                                 ("Caroline", FILLER[(i + 5) % 8])]
        (root / f"session-{i:02d}.md").write_text(_session(i, turns), encoding="utf-8")
    return root


@pytest.mark.parametrize("module", [records])
def test_docstring_examples(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0 and failed == 0


def test_a_speakers_name_is_left_out_of_the_questions_vector(tmp_path: Path) -> None:
    # Session 3 answers (Melanie's own turn: her name only as the speaker, as in every
    # chunk); session 7 is Caroline calling Melanie by name again and again. With the name
    # in the question's vector, the vector leans to session 7; without it, the words
    # that answer ("painted", "sunrise") decide.
    vault = _chat_vault(tmp_path / "v", {
        3: [("Caroline", "what did you do"), ("Melanie", "I painted a lake sunrise"),
            ("Caroline", "lovely")],
        7: [("Caroline", "Melanie, Melanie! Melanie, hi Melanie"),
            ("Melanie", "hi there"), ("Caroline", "Melanie, what did you do?")]})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        reader = kw.store.reader
        question = "What did Melanie paint, a sunrise?"
        assert text_for_vectors(reader, question) == "What did paint, a sunrise?"
        hits = kw.search(question, mode="vector", k=3)
    assert hits[0].path == "session-03.md"


def test_a_name_few_chunks_hold_stays_in_the_questions_vector(tmp_path: Path) -> None:
    vault = _chat_vault(tmp_path / "v", {
        5: [("Caroline", "I met Rex Maughan"), ("Melanie", "who is he"),
            ("Caroline", "a businessman")]})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        reader = kw.store.reader
        # "Rex Maughan" is in one chunk of twenty: what the question is about
        assert text_for_vectors(reader, "Who is Rex Maughan?") == "Who is Rex Maughan?"
        # "Caroline" is in every chunk, "Rex" in one: only the speaker goes
        assert (text_for_vectors(reader, "Where did Caroline's friend Rex go?")
                == "Where did friend Rex go?")
        # a question that is only the name keeps it (nothing else to embed)
        assert text_for_vectors(reader, "Caroline?") == "Caroline?"


def test_a_chunk_whose_one_turn_holds_the_question_scores_that_turn(tmp_path: Path) -> None:
    # Session 4 holds "painted", "lake" and "sunrise" in one turn among longer ones;
    # session 9 holds them in three short turns, so full text scores the whole of it
    # higher (fewer words) and so do the vectors, by a little. The turn that answers is
    # session 4's: with its best line counted it comes first (without, 9 did: fused
    # 13.01 against 12.57 in search, the same order in context).
    vault = _chat_vault(tmp_path / "v", {
        4: [("Caroline", "so how was the long weekend away with the family"),
            ("Melanie", "I painted a lake sunrise"),
            ("Caroline", "that sounds like a wonderful and restful time")],
        9: [("Caroline", "painted it"), ("Melanie", "the lake"), ("Caroline", "a sunrise")]})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        question = "When was the lake sunrise painted?"
        assert [h.path for h in kw.search(question, mode="bm25", k=2)] == [
            "session-09.md", "session-04.md"]
        hybrid = kw.search(question, mode="hybrid", k=2)
        ctx = kw.context(question, max_tokens=0, explain=True)
    assert hybrid[0].path == "session-04.md"
    assert ctx.entities[0].iri == "kw:note/session-04"
    # --explain says what raised it
    assert any("its best line holds the question's words" in w for w in ctx.entities[0].why)


def test_prose_chunks_are_left_as_fused(tmp_path: Path) -> None:
    # the same words, but the best chunks are paragraphs, not lists: no line is scored
    root = tmp_path / "v"
    root.mkdir()
    for i in range(12):
        (root / f"n{i:02d}.md").write_text(f"# Note {i}\n\nA paragraph about {FILLER[i % 8]}"
                                           ".\nIt goes on.\n", encoding="utf-8")
    (root / "lake.md").write_text("# Lake\n\nWe painted.\nThe lake.\nA sunrise.\n",
                                  encoding="utf-8")
    with Knotwork.open(root, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        reader = kw.store.reader
        top = [h.chunk_id for h in kw.search("lake sunrise painted", mode="bm25", k=10)]
        scores = {cid: float(10 - i) for i, cid in enumerate(top)}
        assert by_record(reader, "lake sunrise painted", scores, top) == scores


def test_a_best_line_is_scored_among_the_candidates_lines_only() -> None:
    got = record_scores({1: "- painted a lake sunrise\n- something else",
                         2: "- painted\n- lake\n- sunrise"}, "lake sunrise painted")
    assert got[1] > got[2] > 0
    assert record_scores({1: "- nothing here\n- at all\n- no"}, "lake") == {1: 0.0}
