"""The context pipeline end to end on tiny vaults: what the ordering step is for."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import InvalidQuery
from knotwork.render import renderer
from knotwork.retrieve import ContextOptions, Measure, build_context, token_counter
from knotwork.retrieve.pipeline import SemanticSearch


def _vault(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir()
    for title, text in notes.items():
        (root / f"{title}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return root


def test_the_second_hop_outranks_a_second_note_about_the_first(tmp_path: Path) -> None:
    # The question's second part ("port city", "bay") is answered by the note the first
    # note names; a second note about George Theal repeats what the first already holds.
    vault = _vault(tmp_path / "v", {
        "George Theal": "George Theal was a historian and writer, born in Saint John.",
        "George Theal School": "The George Theal School in the city of Cape Town is named"
                               " after George Theal, the historian; George Theal wrote its"
                               " motto.",
        "Saint John": "Saint John is a port city on the Bay of Fundy.",
        "Cape Town": "Cape Town is a city.",
        "Lake Town": "Lake Town is a small city on a lake.",
        "Bay": "A bay is a body of water.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        ents = kw.context("The birthplace of George Theal is a port city on what bay?",
                          max_tokens=0).entities
    got = [e.label for e in ents]
    assert set(got[:2]) == {"George Theal", "Saint John"}
    assert got[2] == "George Theal School"
    assert all(a.score >= b.score for a, b in zip(ents, ents[1:], strict=False))


def test_a_note_the_question_names_outranks_a_longer_text_match(tmp_path: Path) -> None:
    # "200 West Street" is named in full (as prose would mention it); "Atwood Building" only
    # shares words with the question, and "West Street" lies inside the longer name.
    vault = _vault(tmp_path / "v", {
        "200 West Street": "A 749-foot office tower in Manhattan, headquarters of a bank.",
        "888 7th Avenue": "An office building on 7th Avenue, 628 feet tall.",
        "Atwood Building": "The Atwood Building on West 7th Street is the tallest building"
                           " in the city, taller than any West Street tower around it.",
        "West Street": "West Street is a street in Manhattan.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        ctx = kw.context("Is 200 West Street taller than 888 7th Avenue?", max_tokens=0,
                         explain=True)
    why = {e.label: e.why for e in ctx.entities}
    assert {e.label for e in ctx.entities[:2]} == {"200 West Street", "888 7th Avenue"}
    assert "named in the question" in why["200 West Street"]
    assert "named in the question" not in why["West Street"]


def test_as_of_answers_from_what_the_store_held_then(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", {"Harbor": "Harbor runs on [[Quay]]. The harbor is calm."})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        then = kw.facts("Harbor")[0].recorded_at
        (vault / "Lighthouse.md").write_text("# Lighthouse\n\nThe harbor lighthouse.\n",
                                             encoding="utf-8")
        (vault / "Harbor.md").write_text("# Harbor\n\nThe harbor is stormy.\n",
                                         encoding="utf-8")
        kw.ingest()
        now = {e.label: e for e in kw.context("harbor", max_tokens=0).entities}
        assert {"Harbor", "Lighthouse"} <= set(now)
        past = kw.context("harbor", max_tokens=0, as_of=then)
        # the note written later is not there, and neither is text that came later: the
        # evidence is what matched then, and Harbor's facts are the old ones
        assert [e.label for e in past.entities if e.relevance == "Direct"] == ["Harbor"]
        assert all("stormy" not in v.text for v in past.evidence)
        assert {f.value_label or f.value for f in past.entities[0].facts} >= {"Quay"}
        assert kw.context("harbor", as_of="2001-01-01").entities == ()
        # the same instant, spelled with an offset and without microseconds, is the same
        at = then[:19] + "+00:00"
        assert [f.id for f in kw.facts("Harbor", as_of=at)] == \
            [f.id for f in kw.facts("Harbor", as_of=then[:19] + "Z")]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"as_of": "yesterday"}, "as_of must be an ISO 8601 date or time"),
    ({"valid_at": "soon"}, "valid_at must be an ISO 8601 date or time"),
    ({"min_confidence": 2}, "min_confidence must be a number from 0 to 1"),
    ({"min_confidence": -0.1}, "min_confidence must be a number from 0 to 1"),
])
def test_times_and_confidences_that_mean_nothing_are_refused(
        tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    vault = _vault(tmp_path / "v", {"Harbor": "The harbor is calm."})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        with pytest.raises(InvalidQuery, match=message):
            kw.context("harbor", **kwargs)  # type: ignore[arg-type]
        if "as_of" in kwargs:
            with pytest.raises(InvalidQuery, match=message):
                kw.facts("Harbor", as_of=str(kwargs["as_of"]))
            with pytest.raises(InvalidQuery, match=message):
                kw.entity("Harbor", as_of=str(kwargs["as_of"]))


def test_scopes_keep_other_scopes_out_of_every_path_into_an_answer(tmp_path: Path) -> None:
    # An exact name match, a link and a vector hit each used to bring in entities and chunk
    # text of a scope the question did not ask for.
    vault = _vault(tmp_path / "v", {
        "Nightingale": "Project Nightingale links to [[Globex]].",
        "Globex": "Globex is a company.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        kw.ingest_document("secret-plan", "Secret Plan", "agent",
                           "Project Nightingale will acquire Globex; the password is hunter2.",
                           scope="secret")
        kw.embed()
        assert "acquire" in kw.render(kw.context("Nightingale Globex password",
                                                 scopes=["secret"], max_tokens=0), "json")
        for scopes in (["default"], ["nope"]):
            ctx = kw.context("Nightingale Globex password hunter2", scopes=scopes,
                             max_tokens=0)
            assert "acquire" not in kw.render(ctx, "json")  # the secret text
            assert "Secret Plan" not in [e.label for e in ctx.entities]
        assert kw.context("Nightingale", scopes=["nope"], max_tokens=0).entities == ()
        labels = {e.label for e in kw.context("Nightingale", scopes=["default"],
                                              max_tokens=0).entities}
        assert {"Nightingale", "Globex"} <= labels


def test_facts_asserted_on_a_note_do_not_crowd_out_its_own(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v", {"Traefik": "type:: service\n\nruns_on:: [[kota]]"})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        for i in range(30):  # more than an answer lists (max_facts 20)
            kw.assert_fact("Traefik", f"note_{i}", f"value {i}")
        [traefik] = [e for e in kw.context("traefik", max_tokens=0).entities
                     if e.label == "Traefik"]
    preds = [f.predicate for f in traefik.facts]
    assert preds[:2] == ["type", "runs_on"] and len(preds) == 20
    # then the newest asserted: a just-edited or just-asserted fact is not the one cut
    assert preds[2:] == [f"note_{i}" for i in range(29, 11, -1)]


def test_an_agent_document_is_embedded_when_it_is_stored(tmp_path: Path) -> None:
    with Knotwork.open(db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest_document("plan", "Plan", "agent", "Globex will be acquired next quarter.")
        assert kw.embedding_status() == "complete"
        hits = kw.search("acquisition of Globex", mode="vector", k=1)
        assert hits and hits[0].path == "plan"


def test_chunks_an_and_query_found_are_not_tokenised_again(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    # Which question terms a kept chunk holds: for the hits of an AND query that filled
    # the list, the index has said already. Answers must be what tokenising gives.
    from knotwork.render.json import render_json
    from knotwork.retrieve import fulltext
    from knotwork.store.sqlite.reader import Reader

    notes = {f"Harbor {i:02d}": f"The kestrel queue of harbor {i} drains to [[Harbor {i + 1:02d}]]."
             f" {'Its ferries carry freight.' if i % 3 else 'A harbour master logs it.'}"
             for i in range(60)}
    notes |= {f"Mill {i}": f"The kestrel mill {i} grinds grain; no ferries call." for i in range(8)}
    vault = _vault(tmp_path / "v", notes)
    asked: list[list[int]] = []
    real = Reader.chunk_terms

    def spy(self: Reader, chunk_ids: list[int], words: list[str]) -> dict[int, set[str]]:
        asked.append(list(chunk_ids))
        return real(self, chunk_ids, words)

    monkeypatch.setattr(Reader, "chunk_terms", spy)
    questions = ["kestrel queue", "kestrel", "harbor ferries", "kestrel ferries grain",
                 "queue mill"]
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        fast, shortcut = [], []
        for q in questions:
            asked.clear()
            fast.append(render_json(kw.context(q, explain=True)))
            shortcut.append(not any(asked))
        holding = fulltext.search_chunks_holding
        monkeypatch.setattr(fulltext, "search_chunks_holding",
                            lambda *a, **k: (holding(*a, **k)[0], ()))
        asked.clear()
        slow = [render_json(kw.context(q, explain=True)) for q in questions]
    assert all(asked)  # without the shortcut every answer tokenises its chunks
    assert fast == slow
    # "kestrel queue": 60 chunks hold both words, more than the 40 asked for; "kestrel":
    # one term; "harbor ferries" (40 of 60 notes hold both): the AND query fills the list.
    # "kestrel ferries grain" and "queue mill": no chunk holds all the words, so the OR
    # query ran, and its hits hold some of them only.
    assert shortcut == [True, True, True, False, False]


def test_a_chunk_that_says_nothing_is_no_evidence(tmp_path: Path) -> None:
    """"## Infrastructure Needed / None." matches "suspend jobs" best (its heading path
    holds the title; BM25 favours short rows) but tells the reader nothing."""
    vault = _vault(tmp_path / "v", {
        "Suspend Jobs": "## Goals\n\nAllow suspending and resuming Jobs without deleting them."
                        "\n\n## Infrastructure Needed\n\nNone.\n\n## Proposal\n\n### Stories"
                        "\n\n## Does it add new API types?\n\nNo.",
        "Indexed Job": "## Summary\n\nJobs whose pods get an index.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        ctx = kw.context("suspend jobs", max_tokens=0)
        hits = [h.text for h in kw.search("suspend jobs")]
        api = kw.context("suspend jobs: new API types?", max_tokens=0)
    assert ctx.entities[0].label == "Suspend Jobs"
    texts = [e.text for e in ctx.evidence]
    assert any("Allow suspending" in t for t in texts)
    assert not any(t.endswith(("None.", "### Stories")) for t in texts)
    # what was left out matched, and search still finds it
    assert any(t.endswith("None.") for t in hits)
    # under a heading that asks, a word is an answer
    assert any(e.text.endswith("?\n\nNo.") for e in api.evidence)


def _answer(kw: Knotwork, query: str, semantic: SemanticSearch | None
            ) -> list[tuple[str, str]]:
    """(label, relevance) of the entities ``query`` gets, with ``semantic`` standing in for
    the vector index: the ranking under test is the pipeline's, not the model's."""
    ctx = build_context(kw.store.reader, query, ContextOptions(),
                        measure=Measure(renderer("json"), token_counter("o200k_base")),
                        semantic=semantic,
                        embedding_status="none" if semantic is None else "complete")
    return [(e.label, e.relevance) for e in ctx.entities]


def test_text_and_vector_hits_are_fused_by_how_strong_each_is(tmp_path: Path) -> None:
    # The note that answers the question says "ConfigMap" where it asks "config maps"; a
    # note about read replicas holds every word of the question.
    vault = _vault(tmp_path / "v", {
        "Immutable ConfigMaps": "Mark a ConfigMap immutable: from then on it is read only.",
        "Read Replicas": "Only read replicas serve read traffic; their config maps are"
                         " static.",
        "Volumes": "A volume holds data.",
        "Backups": "A backup copies data.",
    })
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        chunk = {h.title: h.chunk_id for t in ("immutable", "replicas", "volume", "backup")
                 for h in kw.search(t)}
        query = "make config maps read only"

        def vectors(near: float, backups: float) -> SemanticSearch:
            # the cosine over the whole corpus: mean 0.05, sd 0.1
            return lambda text, k: ([(chunk["Immutable ConfigMaps"], near),
                                     (chunk["Backups"], backups), (chunk["Volumes"], 0.1)],
                                    (0.05, 0.1))

        def scores(semantic: SemanticSearch | None) -> dict[str, float]:
            ctx = build_context(kw.store.reader, query, ContextOptions(),
                                measure=Measure(renderer("json"), token_counter("o200k_base")),
                                semantic=semantic, embedding_status="complete")
            return {e.label: e.score for e in ctx.entities}

        text = _answer(kw, query, None)
        strong = _answer(kw, query, vectors(0.65, 0.25))  # six sd above the corpus's mean
        weak = _answer(kw, query, vectors(0.12, 0.1))  # barely above it
        near, far = scores(vectors(0.65, 0.25)), scores(vectors(0.12, 0.1))
    assert text[:2] == [("Read Replicas", "Direct"), ("Immutable ConfigMaps", "Direct")]
    # BM25's z-scores weigh 16 / √N (``adaptive``): in a store of four chunks a note that
    # holds every word of the question stays first even against a vector hit six sd
    # above the mean, as it would in a large store (the real KEPs rank the immutable
    # ConfigMaps KEP second for this question with both this and the old fixed weights).
    assert strong[:2] == weak[:2] == text[:2]
    # the vector hit's strength still counts: six sd lift the note it found, near 1 sd not
    assert (near["Immutable ConfigMaps"] / near["Read Replicas"]
            > far["Immutable ConfigMaps"] / far["Read Replicas"])
    # a chunk only vectors found speaks for a Semantic hit when it is well above the
    # corpus's mean (2 sd), and for nothing when it is not (0.5 sd)
    assert ("Backups", "Semantic") in strong
    assert "Volumes" not in [label for label, _ in strong]


def test_search_lists_a_section_left_empty_after_those_with_text(tmp_path: Path) -> None:
    # k8s_keps: a search for "drawbacks" listed empty "## Drawbacks" sections first (BM25
    # favours short rows)
    vault = tmp_path / "v"
    vault.mkdir()
    notes = {"a": "## Drawbacks\n\n## Alternatives\n", "b": "## Drawbacks\n",
             "c": "## Drawbacks\n\nA second index costs disk, and every write updates it.\n",
             "d": "## Motivation\n\nFewer drawbacks than the old design, and less disk.\n"}
    for name, text in notes.items():
        (vault / f"{name}.md").write_text(f"# {name.upper()}\n\n{text}", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        hits = [h.path for h in kw.search("drawbacks", k=10)]
        assert hits[:2] == ["c.md", "d.md"] and sorted(hits[2:]) == ["a.md", "b.md"]
        assert [h.path for h in kw.search("drawbacks", k=1)] == ["c.md"]
        # a word or two of text is text: "N/A" answers what the section asks
        (vault / "a.md").write_text("# A\n\n## Drawbacks\n\nN/A\n", encoding="utf-8")
        kw.ingest()
        assert "a.md" in [h.path for h in kw.search("drawbacks", k=10)][:3]
