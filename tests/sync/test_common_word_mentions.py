"""A note named by one common word is mentioned only where the word is written as its name.

On a Dendron vault of 1,012 notes, mentions were 60% of all facts, most of them of notes
titled "data", "name", "Find", "Build", "Example" or "Release" by the ordinary words.
"""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork
from knotwork.ingest.mentions import COMMON_WORDS, ChunkText, MentionFinder
from knotwork.types import FactDraft


def _keys(drafts: list[FactDraft]) -> list[str]:
    return sorted(d.object.key for d in drafts)  # type: ignore[union-attr]


def _find(finder: MentionFinder, text: str) -> list[str]:
    return _keys(finder.find([ChunkText(1, text)]))


def test_the_word_list_holds_common_words_not_names() -> None:
    assert {"data", "name", "find", "build", "example", "release", "tags"} <= COMMON_WORDS
    assert not {"kestrel", "traefik", "kustomize", "london", "google", "lena"} & COMMON_WORDS


def test_a_common_word_is_a_name_only_capitalised_as_written_and_inside_a_sentence() -> None:
    finder = MentionFinder([("Release", "release"), ("Data", "data"), ("REST", "rest"),
                            ("Data Pipeline", "data pipeline"), ("Kestrel", "kestrel"),
                            ("Python", "python")])
    # ordinary prose: the words, at any place and in any case, name nothing
    assert _find(finder, "The data is stale and the release slipped.") == []
    assert _find(finder, "Release notes follow. Data first: Release later.") == []
    assert _find(finder, "- Data\n- [ ] Release\n1. **Data** moves\n| Release | x |") == []
    assert _find(finder, "We cut a RELEASE, and the rest works.") == []
    # a word of a longer name, a word in quotes, the first word after a dash
    assert _find(finder, "- Feature Name: the Release Signoff checklist, Plain Old Data.") == []
    assert _find(finder, 'Write "Data" rather than \u2018Release\u2019.') == []
    assert _find(finder, "`Ctrl+R` - Release the lock; **Sync** \u2014 Data moves.") == []
    # written as the note's name: capitalised, inside a sentence
    assert _find(finder, "Tomorrow we freeze the Release for good.") == ["release"]
    assert _find(finder, "It is written in Python; python.org hosts it.") == ["python"]
    assert _find(finder, "REST first.") == ["rest"]  # all capitals: anywhere
    # a distinctive word and several words are names as before, in any case
    assert _find(finder, "kestrel runs the data pipeline.") == ["data pipeline", "kestrel"]


def test_a_common_word_is_meant_only_in_a_spelling_of_its_own_note() -> None:
    # "Build" the title of one note, "build" the file name of another (untitled)
    finder = MentionFinder([("Build", "build"), ("build", "tools/build")])
    assert _find(finder, "Then run the Build again.") == ["build"]
    assert _find(finder, "Then build it again.") == []


def test_several_words_do_not_span_a_sentence_punctuation() -> None:
    # foam_docs_vault: 'use "Foam: Search Tag" command' mentioned the CLI note "foam
    # search"; a file name whose words a hyphen joins stands for a title with a colon
    finder = MentionFinder([("foam search", "foam search"),
                            ("2318-custom-test-frameworks", "2318-custom-test-frameworks")])
    assert _find(finder, 'Use "Foam: Search Tag", or foam, search it.') == []
    assert _find(finder, "Run foam search in a shell.") == ["foam search"]
    assert _find(finder, "See eRFC 2318: Custom Test Frameworks.") == [
        "2318-custom-test-frameworks"]


def _write(vault: Path, notes: dict[str, str]) -> None:
    for path, text in notes.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")


def _mentions(kw: Knotwork) -> dict[str, list[str]]:
    """Each note's live mentions (labels of the notes it mentions), by file."""
    out: dict[str, list[str]] = {}
    for f in kw.store.reader.live_facts():
        if f.extractor == "mention" and f.source is not None:
            out.setdefault(f.source.path, []).append(str(f.value_label))
    return {path: sorted(labels) for path, labels in sorted(out.items())}


def _fresh(vault: Path, step: int) -> dict[str, list[str]]:
    with Knotwork.open(vault, db=str(vault.parent / f"fresh{step}.db"), embedder="none") as kw:
        kw.ingest()
        return _mentions(kw)


NOTES = {
    "Data.md": "# Data\n\nWhere the numbers live.\n",
    "notes/rel.md": "# Release\n\nHow we ship.\n",
    "Orion.md": "# Orion\n\nThe scheduler.\n",
    "Kestrel Queue.md": "# Kestrel Queue\n\nA message queue.\n",
    "a.md": "# A\n\nThe data is stale; the release train left. Data moved.\n"
            "We moved the jobs to Kestrel Queue and asked Orion.\n\n"
            "```\nthe Release of Orion and the Data\n```\n\n"
            "See `the Release`, https://orion.example.com/Release and data pipeline docs.\n",
    "b.md": "# B\n\nWe froze the Release on Friday, for the data pipeline.\n",
    "c.md": "# C\n\nNothing here names a note: a release, some data.\n",
}


def test_a_vault_mentions_common_words_only_as_names_and_follows_their_notes(
        tmp_path: Path) -> None:
    vault = tmp_path / "v"
    _write(vault, NOTES)
    scanned: list[int] = []

    def sync(kw: Knotwork) -> None:
        scanned.clear()
        kw.ingest(mention_progress=lambda done, total: scanned.append(total))

    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        sync(kw)
        # prose, code and a web address: only the distinctive and the multi-word names in
        # a.md; "the Release" in b.md is the note's name
        assert _mentions(kw) == {"a.md": ["Kestrel Queue", "Orion"], "b.md": ["Release"]
                                 } == _fresh(vault, 0)

        # a note whose title is several words: mentioned in any case, found by the sync
        # in the notes whose text holds it and in no other
        _write(vault, {"Data Pipeline.md": "# Data Pipeline\n\nNightly.\n"})
        sync(kw)
        assert max(scanned) <= 3  # a.md, b.md and the new note
        assert _mentions(kw) == {"a.md": ["Data Pipeline", "Kestrel Queue", "Orion"],
                                 "b.md": ["Data Pipeline", "Release"]} == _fresh(vault, 1)

        # renamed to a title of several words: "release train" in a.md now names it, the
        # capitalised word in b.md no longer does
        _write(vault, {"notes/rel.md": "# Release Train\n\nHow we ship.\n"})
        sync(kw)
        assert _mentions(kw) == {
            "a.md": ["Data Pipeline", "Kestrel Queue", "Orion", "Release Train"],
            "b.md": ["Data Pipeline"]} == _fresh(vault, 2)

        # titled in lower case, the common word is no name anywhere; capitalised again,
        # the note is mentioned where it was
        _write(vault, {"notes/rel.md": "# release\n\nHow we ship.\n"})
        sync(kw)
        assert _mentions(kw) == {"a.md": ["Data Pipeline", "Kestrel Queue", "Orion"],
                                 "b.md": ["Data Pipeline"]} == _fresh(vault, 3)
        _write(vault, {"notes/rel.md": "# Release\n\nHow we ship.\n"})
        sync(kw)
        assert _mentions(kw) == {"a.md": ["Data Pipeline", "Kestrel Queue", "Orion"],
                                 "b.md": ["Data Pipeline", "Release"]} == _fresh(vault, 4)

        # deleted: its mention is retracted
        (vault / "notes" / "rel.md").unlink()
        sync(kw)
        assert _mentions(kw) == {"a.md": ["Data Pipeline", "Kestrel Queue", "Orion"],
                                 "b.md": ["Data Pipeline"]} == _fresh(vault, 5)
