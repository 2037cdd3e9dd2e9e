"""Plain-text mentions of known names become facts, and follow the names."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from knotwork import Knotwork
from knotwork.ingest.mentions import _WORD, ChunkText, MentionFinder, _tokens
from knotwork.types import SELF, FactDraft, NameRef, Span


@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
def test_words_are_the_runs_of_word_characters(text: str) -> None:
    # the ASCII fast path must cut words exactly where the regular expression does (on
    # the composed text: name keys are NFC)
    assert _tokens(text) == _WORD.findall(unicodedata.normalize("NFC", text.casefold()))


def _where(drafts: list[FactDraft]) -> list[tuple[str, int]]:
    """Each mention draft as (the name key it mentions, the line it cites)."""
    return [(d.object.key, d.span.line_start) for d in drafts]  # type: ignore[union-attr]


def test_finder_is_word_bounded_longest_first_and_skips_stop_words() -> None:
    finder = MentionFinder([("Kestrel Queue", "kestrel queue"), ("Kestrel", "kestrel"),
                            ("Kestrel Queue Admin", "kestrel queue admin"), ("Note", "note"),
                            ("Ed", "ed"), ("Vega", "vega")])
    drafts = finder.find([ChunkText(10, "Intro line\nThe Kestrel Queue Admin and vegan food,"
                                        " vega-2 and Vega.\nA note.")])
    assert set(_where(drafts)) == {("kestrel queue admin", 11), ("vega", 11)}
    assert all(d.trust == "extracted" and d.confidence < 1.0 for d in drafts)
    assert drafts[0].supporting_text.startswith("The Kestrel Queue Admin")


def test_mentions_follow_the_named_note(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "meeting.md").write_text("# Sync\n\nWe moved the jobs to Kestrel Queue.\n",
                                      encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        kw.ingest()
        assert [f.predicate for f in kw.facts("meeting")] == []  # no such entity yet
        (vault / "Kestrel Queue.md").write_text("# Kestrel Queue\n\nA message queue.\n",
                                                encoding="utf-8")
        kw.ingest(only=["Kestrel Queue.md"])  # only the new note changed on disk
        mentions = [f for f in kw.facts("meeting") if f.predicate == "mentions"]
        assert [m.value_label for m in mentions] == ["Kestrel Queue"]
        assert mentions[0].source is not None and mentions[0].source.line_start == 3
        assert mentions[0].trust == "extracted"
        incoming = kw.entity("Kestrel Queue").incoming
        assert [f.subject_label for f in incoming] == ["Sync"]  # its opening "# Sync"
        (vault / "Kestrel Queue.md").unlink()
        kw.ingest(only=["Kestrel Queue.md"])
        assert [f for f in kw.facts("meeting") if f.predicate == "mentions"] == []
        hist = [f for f in kw.facts("meeting", history=True) if f.predicate == "mentions"]
        assert len(hist) == 1 and hist[0].retracted_at is not None


def test_a_written_link_is_not_also_a_mention(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "kota.md").write_text("# kota\n", encoding="utf-8")
    (vault / "a.md").write_text("Traefik runs on [[kota]]; kota is small.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        kw.ingest()
        preds = sorted(f.predicate for f in kw.facts("a"))
        assert preds == ["runs_on"]


def _notes(root: Path, notes: dict[str, str]) -> Path:
    """A vault under ``root`` holding ``notes`` (path -> text)."""
    vault = root / "v"
    for path, text in notes.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    return vault


def _stated(kw: Knotwork, note: str = "a") -> list[tuple[str, str]]:
    """(predicate, value label) of every live fact about ``note``, sorted."""
    return sorted((f.predicate, str(f.value_label)) for f in kw.facts(note))


def _fresh(vault: Path, step: int, note: str = "a") -> list[tuple[str, str]]:
    """``_stated`` in a store a fresh ingest of ``vault`` makes (beside it, one per step)."""
    with Knotwork.open(vault, db=str(vault.parent / f"fresh{step}.db"), embedder="none") as kw:
        kw.ingest()
        return _stated(kw, note)


def test_a_note_linked_by_one_name_is_not_mentioned_by_another(tmp_path: Path) -> None:
    # foam_docs_vault graph-view.md:145: "[[daily-notes]] - Set up daily notes" linked the
    # note titled "Daily Notes" and mentioned it too. Which names a document skips hangs
    # on where its links resolve, so it is redone whenever some note's names change.
    vault = _notes(tmp_path, {
        "daily-notes.md": "# Daily Notes\n\nOne a day.\n",
        "a.md": "# A\n\n[[daily-notes]] - set up Daily Notes.\n\nThen read the Field Guide.\n"})
    (vault / "guides").mkdir()

    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert _stated(kw) == [("links_to", "Daily Notes")] == _fresh(vault, 0)
        # the note moves: the link no longer reaches it, and the prose names it
        (vault / "daily-notes.md").rename(vault / "guides" / "journal.md")
        assert kw.ingest().renamed == 1
        assert _stated(kw) == [("links_to", "daily-notes"),
                               ("mentions", "Daily Notes")] == _fresh(vault, 1)
        # a note the link reaches again, by its file name, also named "Daily Notes"
        (vault / "daily-notes.md").write_text("---\naliases: [Daily Notes]\n---\nNotes.\n",
                                              encoding="utf-8")
        kw.ingest()
        assert _stated(kw) == [("links_to", "daily-notes")] == _fresh(vault, 2)
        # which loses that name, but its file name is the same words: they mean the note
        # linked, not the one titled so
        (vault / "daily-notes.md").write_text("Notes.\n", encoding="utf-8")
        kw.ingest()
        assert _stated(kw) == [("links_to", "daily-notes")] == _fresh(vault, 3)
        (vault / "daily-notes.md").unlink()
        (vault / "field-guide.md").write_text("# Field Guide\n\nRead it.\n", encoding="utf-8")
        kw.ingest()
        assert _stated(kw) == [("links_to", "daily-notes"), ("mentions", "Daily Notes"),
                             ("mentions", "Field Guide")] == _fresh(vault, 4)


def test_a_link_that_comes_to_resolve_elsewhere_moves_what_the_note_mentions(
        tmp_path: Path) -> None:
    # [[kota]] reaches hosts/kota.md, titled "Kestrel Box", until a kota.md at the top
    # takes the name (an exact path wins): the box is then mentioned, and is not once the
    # top note goes. The document names neither in its text: no phrase leads to it.
    vault = tmp_path / "v"
    (vault / "hosts").mkdir(parents=True)
    (vault / "hosts" / "kota.md").write_text("# Kestrel Box\n\nA host.\n", encoding="utf-8")
    (vault / "a.md").write_text('---\nruns_on: "[[kota]]"\n---\n# A\n\n'
                                "The Kestrel Box is old.\n", encoding="utf-8")

    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert _stated(kw) == [("runs_on", "Kestrel Box")] == _fresh(vault, 0)
        (vault / "kota.md").write_text("Another kota.\n", encoding="utf-8")
        kw.ingest()
        assert _stated(kw) == [("mentions", "Kestrel Box"), ("runs_on", "kota")] == _fresh(vault, 1)
        (vault / "kota.md").unlink()
        kw.ingest()
        assert _stated(kw) == [("runs_on", "Kestrel Box")] == _fresh(vault, 2)


def test_a_note_renamed_away_from_the_name_linked_is_mentioned_by_its_title(
        tmp_path: Path) -> None:
    # foam_docs_vault: daily.md says "See [[templates]] for … daily note templates"; once
    # templates.md (titled "Note Templates") is renamed, the link no longer reaches it
    # and the words are a mention of it. The link is in the frontmatter here: no phrase of
    # the document's text leads to it.
    vault = _notes(tmp_path, {
        "templates.md": "# Note Templates\n\nHow to.\n",
        "a.md": '---\nsee_also: "[[templates]]"\n---\n# A\n\nConfigure daily note templates.\n'})
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert _stated(kw) == [("see_also", "Note Templates")] == _fresh(vault, 0)
        (vault / "templates.md").rename(vault / "tmpl.md")
        kw.ingest()
        assert _stated(kw) == [("mentions", "Note Templates"),
                               ("see_also", "templates")] == _fresh(vault, 1)
        (vault / "tmpl.md").rename(vault / "templates.md")
        kw.ingest()
        assert _stated(kw) == [("see_also", "Note Templates")] == _fresh(vault, 2)


def test_a_shared_name_that_still_reaches_the_same_note_redoes_no_linker(
        tmp_path: Path) -> None:
    # k8s_keps: 170 README.md files declare the name "readme". Deleting one that does not
    # win it (the shortest path does) left every [[README]] where it was, yet redid every
    # document linking [[README]]: O(linkers) for one delete (140-200 ms a delete on the
    # KEPs after 20 such links were written).
    notes = {"README.md": "# Home\n\nThe start.\n", "ops/README.md": "# Ops Guide\n\nOps.\n",
             "dev/README.md": "# Dev Guide\n\nDev.\n"}
    notes |= {f"n{i}.md": f"# Note {i}\n\nSee [[README]], [[Solo]] and the Ops Guide.\n"
              for i in range(6)}
    notes["Solo.md"] = "# Solo\n\nAlone.\n"
    vault = _notes(tmp_path, notes)
    scanned: list[int] = []

    def sync(kw: Knotwork) -> None:
        scanned.clear()
        kw.ingest(mention_progress=lambda done, total: scanned.append(total))

    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        sync(kw)
        assert _stated(kw, "n0") == [("links_to", "Home"), ("links_to", "Solo"),
                                     ("mentions", "Ops Guide")]
        (vault / "dev" / "README.md").unlink()  # "readme" still reaches README.md
        sync(kw)
        assert max(scanned, default=0) <= 1
        # a note deleted takes its names along: linking it by them mentions nothing else
        (vault / "Solo.md").unlink()
        sync(kw)
        assert max(scanned, default=0) <= 1
        (vault / "README.md").unlink()  # now "readme" reaches ops/README.md
        sync(kw)
        assert max(scanned) >= 6
        # linked now, the Ops Guide is no longer mentioned
        assert _stated(kw, "n0") == [("links_to", "Ops Guide"), ("links_to", "Solo")
                                     ] == _fresh(vault, 0, "n0")


def test_names_of_the_same_words_mean_one_key_whatever_their_order() -> None:
    labels = [("Daily Notes", "daily notes"), ("daily-notes", "daily-notes")]
    chunks = [ChunkText(1, "Set up daily notes first.")]
    for order in (labels, labels[::-1]):
        finder = MentionFinder(order)
        assert _where(finder.find(chunks)) == [("daily notes", 1)]  # spelt as the words
        # a document linking one of them means it by the words: no mention
        assert finder.find(chunks, skip_keys=frozenset({"daily-notes"})) == []
        finder.remove("Daily Notes", "daily notes")
        assert not finder.declares("Daily Notes", "daily notes")
        assert finder.declares("daily-notes", "daily-notes") and "Daily Notes" in finder
        assert _where(finder.find(chunks)) == [("daily-notes", 1)]


def test_a_name_gone_while_its_words_remain_moves_its_mentions(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "journal.md").write_text("# Daily Notes\n\nOne a day.\n", encoding="utf-8")
    (vault / "daily-notes.md").write_text("Untitled notes.\n", encoding="utf-8")
    (vault / "a.md").write_text("# A\n\nSet up daily notes.\n", encoding="utf-8")

    def mentioned(kw: Knotwork) -> list[tuple[str, str]]:
        return sorted((str(f.value), str(f.value_label)) for f in kw.facts("a")
                      if f.predicate == "mentions")

    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert [label for _, label in mentioned(kw)] == ["Daily Notes"]
        (vault / "journal.md").unlink()
        kw.ingest()
        after = mentioned(kw)
        assert [label for _, label in after] == ["daily-notes"]
    with Knotwork.open(vault, db=str(tmp_path / "fresh.db"), embedder="none") as kw:
        kw.ingest()
        assert mentioned(kw) == after


def test_a_crash_before_the_mention_pass_loses_no_work(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    import knotwork.sync.files as sync

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "meeting.md").write_text("We moved the jobs to Kestrel Queue.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        kw.ingest()
        (vault / "Kestrel Queue.md").write_text("# Kestrel Queue\n", encoding="utf-8")
        real = sync.refresh_mentions

        def crash(*a, **k):  # type: ignore[no-untyped-def]
            raise RuntimeError("killed after the structural commit")

        monkeypatch.setattr(sync, "refresh_mentions", crash)
        with pytest.raises(RuntimeError):
            kw.ingest()
        monkeypatch.setattr(sync, "refresh_mentions", real)
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:  # a new process, say
        report = kw.ingest()
        assert report.added == report.updated == 0  # nothing changed on disk since
        assert [f.value_label for f in kw.facts("meeting") if f.predicate == "mentions"] == [
            "Kestrel Queue"]
        assert kw.store.reader.mention_work() == ([], [], None)  # the queue is drained


def test_a_decomposed_name_is_mentioned_by_composed_prose(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / f"{unicodedata.normalize('NFD', 'Café Nero')}.md").write_text("plain\n",
                                                                          encoding="utf-8")
    (vault / "diary.md").write_text("We met at Café Nero today.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert [f.predicate for f in kw.facts("diary")] == ["mentions"]


def test_headings_code_and_comments_mention_nothing() -> None:
    # modelled on rust_rfcs/text/0001-private-fields.md:10 ("## Motivation" mentioned the
    # note 3392-leadership-council/motivation.md) and foam's user/features/commands.md:44
    # (a JSON block mentioned "templates"): a heading names a section of this note, code
    # and comments are not prose.
    finder = MentionFinder([("roadmap", "roadmap"), ("templates", "templates"),
                            ("Kestrel Queue", "kestrel queue")])
    text = ("## Roadmap\n\nSee `templates/daily.md` here.\n<!-- Kestrel Queue\n"
            "still a comment -->\n```json\n{\"roadmap\": \"templates\"}\n```\n"
            "    indented templates code\n\nPlain prose on the roadmap.")
    assert set(_where(finder.find([ChunkText(10, text)]))) == {("roadmap", 20)}


def test_a_fence_cut_across_chunks_still_mentions_nothing() -> None:
    # a long code block is cut into chunks by lines: the second piece starts inside it
    finder = MentionFinder([("templates", "templates")])
    chunks = [ChunkText(1, "Intro.\n\n```\nfirst half"), ChunkText(5, "templates inside\n```"),
              ChunkText(8, "After the templates block.")]
    assert _where(finder.find(chunks)) == [("templates", 8)]


def test_a_reference_definition_mentions_only_a_page_its_destination_names() -> None:
    # rust_rfcs: "[motivation]: #motivation" (an anchor into the note itself) mentioned
    # the note 3392-leadership-council/motivation.md in 400 RFCs; "[UFCS]: 0132-ufcs.md"
    # is a link to RFC 132 where "[UFCS]" is used (extract), and Foam writes such a
    # definition beside each wikilink; a URL to the GitHub copy of RFC 1068 names it
    finder = MentionFinder([("motivation", "motivation"), ("0132-ufcs", "0132-ufcs"),
                            ("UFCS syntax", "ufcs syntax"),
                            ("1068-rust-governance", "1068-rust-governance")])
    text = ("Prose.\n\n[motivation]: #motivation\n[UFCS syntax]: 0132-ufcs.md\n"
            "[RFC 1068]: https://github.com/rust-lang/rfcs/blob/master/text/"
            "1068-rust-governance.md")
    assert _where(finder.find([ChunkText(1, text)])) == [("1068-rust-governance", 5)]


def test_a_bracketed_destination_is_read_whole() -> None:
    # CommonMark lets a destination with spaces stand between < and >; the mention pass
    # read "[old]: <old plan.md>" as the destination "<old" and mentioned the note "old"
    # (here "orion": "old" is a common word, no longer a name prose means)
    finder = MentionFinder([("orion", "orion"), ("vega", "vega")])
    text = "Prose.\n\n[orion]: <orion plan.md>\n[web]: <https://example.org/the vega>\n"
    assert _where(finder.find([ChunkText(1, text)])) == [("vega", 4)]


def test_a_document_section_name_is_no_name_to_mention() -> None:
    # rust_rfcs: RFC 3392 keeps its sections as notes ("motivation.md", "alternatives.md");
    # "doesn't solve motivation #2" (0003-attribute-usage.md:90) and "these alternatives
    # have downsides" (0198-slice-notation.md:36) do not mean them, nor do "Rationale and
    # alternatives" and "non-goals", the sections of every RFC (3151-scoped-threads.md:43
    # "See the [Rationale and alternatives](#rationale-and-alternatives) section"). Another
    # multi-word title is still a name.
    # The same for an ADR index titled "Decisions" (adrs/madr/decisions/index.md) and
    # "We need to record the architectural decisions" (govuk-aws ADR 0001, line 11).
    finder = MentionFinder([("motivation", "motivation"), ("alternatives", "alternatives"),
                            ("Rationale and alternatives", "rationale and alternatives"),
                            ("non-goals", "non-goals"), ("Decisions", "decisions"),
                            ("Initial work of the Council", "initial work of the council")])
    text = ("It doesn't solve motivation #2; these alternatives have downsides.\n"
            "We need to record the architectural decisions.\n"
            "The Rationale and alternatives section lists the non-goals.\n"
            "See the initial work of the Council.")
    assert _where(finder.find([ChunkText(1, text)])) == [("initial work of the council", 4)]


def _foam_vault(tmp_path: Path) -> Path:
    """A vault holding Foam's command note: file name "list.md", title "foam list"."""
    vault = tmp_path / "v"
    (vault / "cli").mkdir(parents=True)
    (vault / "cli" / "list.md").write_text("# foam list\n\nLists notes.\n", encoding="utf-8")
    return vault


def test_a_one_word_file_name_is_no_mention_once_the_note_is_titled_otherwise(
        tmp_path: Path) -> None:
    vault = _foam_vault(tmp_path)
    (vault / "kota.md").write_text("A host.\n", encoding="utf-8")
    (vault / "a.md").write_text("# A\n\nMake a list with foam list.\nkota is down.\n",
                                encoding="utf-8")
    (vault / "b.md").write_text("# B\n\nSee [[list]].\n", encoding="utf-8")

    def mentioned(kw: Knotwork) -> list[str]:
        return sorted(str(f.value_label) for f in kw.facts("a") if f.predicate == "mentions")

    def fresh(step: int) -> list[str]:
        with Knotwork.open(vault, db=str(tmp_path / f"fresh{step}.db"), embedder="none") as kw:
            kw.ingest()
            return mentioned(kw)

    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        # "list" is the file name of the note titled "foam list": the word is no mention of
        # it, while the link [[list]] still reaches it; an untitled "kota" is its own name
        assert mentioned(kw) == ["foam list", "kota"] == fresh(0)
        assert [f.value_label for f in kw.facts("b") if f.predicate == "links_to"] == [
            "foam list"]
        # titled otherwise, "kota" is no longer a name prose means by the word
        (vault / "kota.md").write_text("# Kota Host\n\nA host.\n", encoding="utf-8")
        kw.ingest()
        assert mentioned(kw) == ["foam list"] == fresh(1)
        # and is again once the title goes
        (vault / "kota.md").write_text("A host, untitled again.\n", encoding="utf-8")
        kw.ingest()
        assert mentioned(kw) == ["foam list", "kota"] == fresh(2)
        (vault / "kota.md").unlink()
        kw.ingest()
        assert mentioned(kw) == ["foam list"] == fresh(3)


def test_a_store_upgraded_past_the_file_name_rule_drops_its_mentions_at_the_next_sync(
        tmp_path: Path) -> None:
    vault = _foam_vault(tmp_path)
    (vault / "a.md").write_text("# A\n\nMake a list.\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
        assert [f for f in kw.facts("a") if f.predicate == "mentions"] == []
        # as a store written by the old rule holds it: "list" mentioned, schema 10
        con = kw.store._con()  # type: ignore[attr-defined]
        con.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
        con.commit()
        with kw.store.write(actor="test") as w:
            w.apply_mentions(kw.store.reader.document("default", "a.md").id, [  # type: ignore[union-attr]
                FactDraft(SELF, "mentions", NameRef("list", "list"), Span(3, 3),
                          "Make a list.", "mention", confidence=0.7, trust="extracted")])
        assert [f.value_label for f in kw.facts("a") if f.predicate == "mentions"] == [
            "foam list"]
    with Knotwork.open(vault, db=db, embedder="none") as kw:  # migrates
        assert kw.ingest().unchanged == 2  # no file changed, yet the mention is found stale
        assert [f for f in kw.facts("a") if f.predicate == "mentions"] == []


def test_a_name_inside_a_link_to_a_note_is_the_links_not_a_mention() -> None:
    finder = MentionFinder([("47. Use Karpenter For Scaling", "47. use karpenter for scaling"),
                            ("Kota Host", "kota host"), ("kota", "kota"),
                            ("Vega Box", "vega box"), ("Orion", "orion")])
    drafts = finder.find([ChunkText(1, (
        "- [47. Use Karpenter For Scaling](047-use-karpenter-for-scaling.md) beside"
        " [[Kota Host]] and ![[Orion]]\n"
        "A page: [the Vega Box docs](https://example.com/vega); [kota](../../up.md).\n"
        "[about kota][r] and [[x|kota]]\n"
        "Plain kota, again.\n"
        "\n"
        "[r]: hosts/kota.md"))])
    # the link's own fact names the note (an ADR index linking "[47. Use Karpenter…](047-…)"
    # made one mention per entry); a page's link text is still prose
    assert set(_where(drafts)) == {("vega box", 2), ("kota", 4)}

    # nor does a name span what was blanked between its words: code, a comment, a link
    finder = MentionFinder([("Using Foam", "using foam"), ("Kota Host", "kota host")])
    drafts = finder.find([ChunkText(1, (
        "Created daily (e.g. by using `Foam: Open Daily Note`). Foam will look.\n"
        "Kota <!-- old --> Host, and Kota [[Other]] Host.\n"))])
    assert drafts == []


def test_a_number_opening_a_title_is_cited_in_prose(tmp_path: Path) -> None:
    # every Kubernetes KEP is a README.md titled "# KEP-1234: …", cited by its number
    vault = tmp_path / "v"
    for n, body in (("1847", "Auto delete PVCs."), ("3335", "Builds on KEP-1847 and kep-9.")):
        (vault / "keps" / n).mkdir(parents=True)
        (vault / "keps" / n / "README.md").write_text(f"# KEP-{n}: Title {n}\n\n{body}\n",
                                                      encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        mentions = [f for f in kw.facts("KEP-3335") if f.predicate == "mentions"]
        assert [m.value_label for m in mentions] == ["KEP-1847: Title 1847"]
        assert kw.entity("KEP-1847") is not None


def test_a_name_inside_a_web_address_is_no_mention() -> None:
    # the Dendron vault: "facelessuser.github.io" mentioned the note GitHub
    finder = MentionFinder([("GitHub", "github"), ("Traefik", "traefik")])
    text = ("Docs at https://facelessuser.github.io/pymdown-extensions/ and\n"
            "facelessuser.github.io, mail ops@traefik.io.\n\nWe host on GitHub.\n")
    assert _where(finder.find([ChunkText(1, text)])) == [("github", 4)]
