"""Note dialects: each tool's links reach the note that tool would open.

The fixture vaults in ``tests/fixtures/dialects/`` are written from each tool's
documented syntax; ``expected.tsv`` names, for every link, the note it opens.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import ConfigError
from knotwork.ingest.dialects import detect, resolve, split_wikilink

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dialects"


def _wrong_links(kw: Knotwork, vault: Path) -> list[tuple[str, str]]:
    """The expected links of ``vault`` that do not reach their note (see bench/dialects.py)."""
    wrong = []
    with open(vault / "expected.tsv", newline="", encoding="utf-8") as f:
        for src, piece, target in csv.reader(f, delimiter="\t"):
            want = kw.entity(target).entity.iri
            every = [x for x in kw.facts(src.removesuffix(".md")) if x.value_type == "Entity"]
            own = [x for x in every if x.source and piece in x.source.supporting_text]
            if not any(x.value == want for x in own or every):
                wrong.append((src, piece))
    return wrong


@pytest.mark.parametrize("name", ["dendron", "obsidian", "foam", "logseq"])
def test_every_link_of_a_dialect_fixture_reaches_its_note(tmp_path: Path, name: str) -> None:
    vault = FIXTURES / name
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        assert _wrong_links(kw, vault) == []


def test_dendron_label_comes_first_and_a_note_named_by_the_label_is_not_linked(
        tmp_path: Path) -> None:
    vault = FIXTURES / "dendron"
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        targets = {f.value_label for f in kw.facts("dendron.topic.schema")
                   if f.value_type == "Entity"}
        assert "Lookup" in targets
        assert "lookup (the word)" not in targets  # lookup.md, the Obsidian reading


def test_the_setting_overrides_the_detected_dialect(tmp_path: Path) -> None:
    vault = FIXTURES / "dendron"
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none",
                       dialect="markdown") as kw:
        kw.ingest()
        assert ("dendron.topic.schema.md", "lookup|dendron.topic.lookup") in \
            _wrong_links(kw, vault)


def test_reading_a_vault_in_another_dialect_reads_it_again(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(FIXTURES / "dendron", vault)
    (vault / "dendron.yml").unlink()
    db = str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
    (vault / "dendron.yml").write_text("version: 5\n")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        assert kw.stats().to_reread == 7
        report = kw.ingest()
        assert report.reread == 7
        assert _wrong_links(kw, vault) == []
        assert kw.stats().to_reread == 0


def test_dendron_dot_names_are_a_hierarchy(tmp_path: Path) -> None:
    with Knotwork.open(FIXTURES / "dendron", db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        parents = [(f.value_label, f.source.line_start if f.source else 0)
                   for f in kw.facts("dendron.topic.lookup") if f.predicate == "part_of"]
        assert parents == [("Topics", 3)]  # cites the note's title key
        children = {f.subject_label for f in kw.entity("dendron.topic").incoming
                    if f.predicate == "part_of"}
        assert children == {"Lookup", "Schemas"}
        # a parent with no file (a Dendron stub) stays a name the child is part of
        assert [f.value for f in kw.facts("dendron.topic.note-reference.sample")
                if f.predicate == "part_of"] == ["kw:name/dendron.topic.note-reference"]
        assert not [f for f in kw.facts("dendron") if f.predicate == "part_of"]  # top level


def test_dendron_tags_are_links_to_their_tag_notes(tmp_path: Path) -> None:
    """Dendron opens ``tags.stage.seed`` for a frontmatter ``tags: stage.seed`` and for
    ``#stage.seed`` in the text (dots and all, a sentence's last dot aside); an Obsidian
    vault keeps a tag a plain value, cut at the dot as Obsidian cuts it."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "dendron.yml").write_text("version: 5\n")
    (vault / "tags.stage.seed.md").write_text("---\ntitle: Seed\n---\n")
    (vault / "tags.review.md").write_text("---\ntitle: Review\n---\n")
    (vault / "garden.plants.md").write_text(
        "---\ntitle: Plants\ntags: stage.seed\n---\n\nStill growing, see #review.\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        facts = kw.facts("garden.plants")
        assert {f.value for f in facts if f.predicate == "tag"} == {"stage.seed", "review"}
        tagged = {(f.value_label, f.source.line_start if f.source else 0)
                  for f in facts if f.predicate == "tagged"}
        assert tagged == {("Seed", 3), ("Review", 6)}
        assert ("Plants", "tagged") in {(f.subject_label, f.predicate) for f in
                                        kw.entity("tags.stage.seed").incoming}
        (vault / "tags.review.md").unlink()  # a tag with no note: Dendron's stub, no lint
        kw.ingest()
        assert not [f for f in kw.lint(kinds=["broken_link", "missing_page"])
                    if "tags." in f.subject]
    (vault / "dendron.yml").unlink()
    (vault / ".obsidian").mkdir()
    (vault / "note.md").write_text("# Note\n\nA #stage.seed tag.\n")
    with Knotwork.open(vault, db=str(tmp_path / "o.db"), embedder="none") as kw:
        kw.ingest()
        facts = kw.facts("note")
        assert {f.value for f in facts if f.predicate == "tag"} == {"stage"}
        assert not [f for f in facts if f.predicate == "tagged"]


def test_logseq_namespaces_are_a_hierarchy(tmp_path: Path) -> None:
    with Knotwork.open(FIXTURES / "logseq", db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        alpha = kw.entity("Project/Alpha")
        assert alpha.entity.iri.endswith("Project___Alpha")
        assert [f.value_label for f in alpha.facts if f.predicate == "part_of"] == ["Project"]


def test_epoch_milliseconds_are_dates(tmp_path: Path) -> None:
    with Knotwork.open(FIXTURES / "dendron", db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        stamps = {f.predicate: (f.value, f.datatype) for f in kw.facts("root")
                  if f.predicate in ("created", "updated")}
        assert stamps == {"created": ("2020-07-28T18:35:48.801000+00:00", "datetime"),
                          "updated": ("2020-12-17T21:20:00+00:00", "datetime")}


def test_numbers_that_are_no_moments_stay_numbers(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "n.md").write_text("---\nport: 1608240000000\ncreated: 42\n---\nText.\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        got = {f.predicate: f.datatype for f in kw.facts("n") if f.predicate != "links_to"}
        assert got == {"port": "integer", "created": "integer"}


@pytest.mark.parametrize(("marker", "dialect"), [
    ("dendron.yml", "dendron"), ("dendron.code-workspace", "dendron"),
    (".foam/", "foam"), (".vscode/foam.json", "foam"), (".obsidian/", "obsidian"),
    ("logseq/config.edn", "logseq"), (None, "markdown"),
])
def test_a_vault_s_dialect_is_found_by_its_tool_s_files(tmp_path: Path, marker: str | None,
                                                         dialect: str) -> None:
    if marker:
        path = tmp_path / marker
        if marker.endswith("/"):
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
    assert detect(tmp_path) == dialect
    assert resolve("auto", tmp_path) == dialect
    assert resolve("Obsidian", tmp_path) == "obsidian"


def test_an_unknown_dialect_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown dialect 'roam'"):
        resolve("roam", None)


@pytest.mark.parametrize(("inner", "dialect", "target"), [
    ("a|b", "markdown", "a"), ("a|b", "dendron", "b"),
    ("label|dendron://vault/note.name", "markdown", "note.name"),
    ("dendron://vault/note.name|label", "dendron", "note.name"),
    ("dendron://vault/note#anchor,1", "markdown", "note"),
    ("note#h1:#h2", "dendron", "note"), ("note#^b1:#*", "dendron", "note"),
    ("parent.*", "dendron", "parent"), ("note,1", "dendron", "note"),
    ("Target\\|alias", "markdown", "Target"), ("#Heading", "dendron", ""),
    ("Note#^block", "obsidian", "Note"),
])
def test_split_wikilink(inner: str, dialect: str, target: str) -> None:
    assert split_wikilink(inner, dialect) == target
