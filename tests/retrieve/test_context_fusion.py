"""``context`` fuses its text and vector hits as ``search`` does: by the evidence each has.

BM25's z-scores are weighed by the store's size (``adaptive``), more when the question
names something few chunks hold, and a question's date raises the chunks dated near it.
"""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork
from knotwork.domain.dates import date_spans, days_apart
from knotwork.domain.words import named_words
from knotwork.render import renderer
from knotwork.retrieve import ContextOptions, Measure, build_context, fulltext, token_counter
from knotwork.retrieve.adaptive import BM25_SCALE, NAMED_SCALE, context_scale
from knotwork.retrieve.pipeline import SemanticSearch
from knotwork.retrieve.search import search


def _vault(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in notes.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    return root


def _chat(n: int) -> dict[str, str]:
    """``n`` small chat sessions about other things: a store of about ``n`` chunks."""
    topics = ["the park", "a film", "dinner", "the weather", "a book", "work", "a trip"]
    return {f"session-{i:02d}": f"# Session {i}\n\nCaroline and Melanie talked about"
            f" {topics[i % len(topics)]} and the kids, day {i}.\n" for i in range(n)}


def _first(kw: Knotwork, query: str, semantic: SemanticSearch | None) -> list[str]:
    ctx = build_context(kw.store.reader, query, ContextOptions(max_tokens=None),
                        measure=Measure(renderer("json"), token_counter("o200k_base")),
                        semantic=semantic,
                        embedding_status="none" if semantic is None else "complete")
    return [e.iri.rsplit("/", 1)[-1].removesuffix(".md") for e in ctx.entities]


def test_the_text_holding_the_rare_words_best_outweighs_a_vector_lean_in_a_small_store(
        tmp_path: Path) -> None:
    # LoCoMo's conversations are ~100 chunks each. Two sessions hold the question's words;
    # one holds them closer together and in fewer words (BM25 z-score 6.3 against 4.5),
    # and vectors lean to the other (4 sd above the corpus's mean against 2). With fixed
    # weights (0.3 / 0.7) a store this small gave BM25 a third of the voice it had at
    # 10,000 chunks, and the lean won; weighed by the store's size, BM25's margin counts
    # as it would in a large store, and the session it prefers comes first.
    notes = _chat(60)
    notes["session-61"] = ("# Session 61\n\nCaroline went to an LGBTQ support group"
                           " yesterday; it was powerful.\n")
    notes["session-62"] = ("# Session 62\n\nCaroline and Melanie went to the pride parade."
                           " Caroline told Melanie about the support group she wants to"
                           " join, for LGBTQ people, and Melanie talked about her kids.\n")
    vault = _vault(tmp_path / "v", notes)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        chunk = {h.path: h.chunk_id for t in ("powerful", "parade")
                 for h in kw.search(t, mode="bm25")}

        def leaning(text: str, k: int) -> tuple[list[tuple[int, float]],
                                                tuple[float, float] | None]:
            # cosine mean 0.1, sd 0.1 over the corpus
            return ([(chunk["session-62.md"], 0.5), (chunk["session-61.md"], 0.3)],
                    (0.1, 0.1))

        query = "When did Caroline go to the LGBTQ support group?"
        text = _first(kw, query, None)
        fused = _first(kw, query, leaning)
    assert text[:2] == ["session-61", "session-62"]
    assert fused[:2] == ["session-61", "session-62"]


def test_a_rare_name_the_question_writes_lets_the_text_that_spells_it_win(
        tmp_path: Path) -> None:
    # Both notes hold the question's words; the short one holds them closer (BM25 z-score
    # 6.4 against 4.4) and vectors lean 7 sd to the long one. BM25's margin at search's
    # scale (16 / √62 ≈ 2 a z) is not enough against that lean; a question that writes
    # "Rex Maughan", a name two chunks of 62 hold, weighs BM25 at 42.6 / √62 and the text
    # that spells it wins. The same words in lower case name nothing.
    notes = _chat(60)
    notes["forever-living"] = ("# Forever Living\n\nRex Maughan acquired the company"
                               " Forever Living in 1978.\n")
    notes["desert-deals"] = ("# Desert Deals\n\nA newspaper column on deals in Arizona: one"
                             " company bought another, a founder sold his shares, and Rex"
                             " Maughan, asked about it, said he would acquire nothing.\n")
    vault = _vault(tmp_path / "v", notes)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        chunk = {h.path: h.chunk_id for t in ("1978", "Arizona")
                 for h in kw.search(t, mode="bm25")}

        def leaning(text: str, k: int) -> tuple[list[tuple[int, float]],
                                                tuple[float, float] | None]:
            return ([(chunk["desert-deals.md"], 0.8), (chunk["forever-living.md"], 0.1)],
                    (0.1, 0.1))

        named = _first(kw, "What company did Rex Maughan acquire?", leaning)
        unnamed = _first(kw, "what company did rex maughan acquire?", leaning)
    assert named[:2] == ["forever-living", "desert-deals"]
    assert unnamed[:2] == ["desert-deals", "forever-living"]


def test_a_name_few_chunks_hold_raises_bm25s_voice(tmp_path: Path) -> None:
    notes = _chat(40)
    notes["forever-living"] = "# Forever Living\n\nRex Maughan founded the company.\n"
    vault = _vault(tmp_path / "v", notes)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        reader = kw.store.reader
        n = reader.live_chunk_count()

        def scale(question: str) -> float:
            named = named_words(question)
            df = dict(fulltext.frequencies(reader, named, table="chunk"))
            return context_scale(named, df, n)

        # a name one chunk holds: the text that spells it counts more
        assert scale("What company did Rex Maughan acquire?") == NAMED_SCALE
        # a name every chunk holds (the two people of every session) is no evidence
        assert scale("What did Caroline and Melanie talk about?") == BM25_SCALE
        # a question in other words names nothing
        assert scale("which company did the founder start") == BM25_SCALE
    # capitals opening a sentence name nothing; quoted words do
    assert named_words('What did "nothing is impossible" say? Why Rex') == [
        "nothing", "is", "impossible", "rex"]


def test_a_questions_date_finds_the_note_dated_then(tmp_path: Path) -> None:
    # A journal's daily notes, titled by ISO date; the question writes its date in words,
    # so full text cannot match it. The short notes of 16 June and 5 July hold the
    # question's other words as the answer does, in fewer words (BM25 favours them); the
    # note of 3 June is the answer.
    notes = _chat(20)
    notes["2023-06-03"] = ("# 2023-06-03\n\nMaria: I started aerial yoga, a new activity"
                           " for me, and I love how calm it makes me feel after a long week"
                           " at the shelter.\n")
    notes["2023-06-16"] = "# 2023-06-16\n\nMaria: a new activity? I started nothing.\n"
    notes["2023-07-05"] = "# 2023-07-05\n\nMaria: I started a new activity.\n"
    vault = _vault(tmp_path / "v", notes)
    query = "What new activity did Maria start, as mentioned on 3 June, 2023?"
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        plain = [h.path for h in kw.search(query, mode="bm25")]
        got = _first(kw, query, None)
        why = kw.context(query, max_tokens=0, explain=True).entities[0].why
        # search's hybrid weighs the date the same way (the vectors here tell nothing)
        flat = [(h.chunk_id, 0.3) for h in kw.search("Maria", k=30, mode="bm25")]
        hybrid = search(kw.store.reader, query, k=5, mode="hybrid", fusion="adaptive",
                        vectors=lambda text, k: (flat, (0.1, 0.1)))
    assert hybrid[0].path == "2023-06-03.md"
    assert plain[0] != "2023-06-03.md"  # the words alone point elsewhere
    assert got[0] == "2023-06-03"
    assert any("dated near the question's date" in w for w in why)  # --explain says so
    # the spans compared: a month holds its days, a day is days from another
    june, third = date_spans("in June 2023, on 3 June, 2023")
    assert days_apart(june, third) == 0
    assert days_apart(third, date_spans("2023-06-16")[0]) == 13
