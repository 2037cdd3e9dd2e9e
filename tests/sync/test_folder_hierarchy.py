"""Folders are structure: a note is ``part_of`` its folder's page, resolved when read.

Through the public API on real vaults in a temporary folder and a real SQLite file. The
folder's page is whichever note declares the folder's name (``ingest.hierarchy``), so
writing or deleting it re-points the folder's notes with no note of theirs read again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork


def _write(vault: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = vault / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _parents(kw: Knotwork, ref: str) -> list[str]:
    """The IRIs the note ``ref`` is part of."""
    return [f.value for f in kw.facts(ref) if f.predicate == "part_of"]


def _open(tmp_path: Path) -> Knotwork:
    return Knotwork.open(tmp_path / "vault", db=str(tmp_path / "s.db"), embedder="none")


CHILDREN = {"services/api.md": "# API\nThe gateway every request enters by.\n",
            "services/billing.md": "# Billing\nInvoices and payment runs.\n"}


@pytest.mark.parametrize("page", ["services/index.md", "services/_index.md", "services.md",
                                  "services/services.md", "services/README.md"])
def test_a_note_is_part_of_its_folder_s_page_in_each_convention(tmp_path: Path,
                                                                 page: str) -> None:
    _write(tmp_path / "vault", {**CHILDREN, page: "# Services\nWhat we run.\n"})
    with _open(tmp_path) as kw:
        kw.ingest()
        want = kw.entity(page.removesuffix(".md")).entity.iri
        assert _parents(kw, "services/api") == [want]
        assert _parents(kw, "services/billing") == [want]
        assert _parents(kw, page.removesuffix(".md")) == []  # a top-level folder's page
        # the page lists its notes among the facts pointing at it (has_part, reversed)
        incoming = kw.entity(page.removesuffix(".md")).incoming
        assert {f.subject_iri for f in incoming if f.predicate == "part_of"} == {
            kw.entity("services/api").entity.iri, kw.entity("services/billing").entity.iri}


def test_the_pages_of_one_folder_win_in_order_as_each_is_deleted(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    pages = ["services/index.md", "services.md", "services/services.md", "services/README.md"]
    _write(vault, {**CHILDREN, **{p: f"# Page {i}\nA page.\n" for i, p in enumerate(pages)}})
    with _open(tmp_path) as kw:
        kw.ingest()
        for page in pages:
            want = kw.entity(page.removesuffix(".md")).entity.iri
            assert _parents(kw, "services/api") == [want], page
            (vault / page).unlink()
            report = kw.ingest()
            assert (report.added, report.updated, report.deleted) == (0, 0, 1)
        assert _parents(kw, "services/api") == ["kw:name/services/"]


def test_writing_the_page_later_re_points_the_notes_without_reading_them(
        tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _write(vault, CHILDREN)
    with _open(tmp_path) as kw:
        kw.ingest()
        assert _parents(kw, "services/api") == ["kw:name/services/"]
        _write(vault, {"services/index.md": "# Services\nWhat we run.\n"})
        report = kw.ingest()
        # only the page was read: the notes' own facts were not touched
        assert (report.added, report.updated, report.unchanged, report.reread) == (1, 0, 2, 0)
        page = kw.entity("services/index").entity.iri
        assert _parents(kw, "services/api") == _parents(kw, "services/billing") == [page]

        (vault / "services/index.md").unlink()
        report = kw.ingest()
        assert (report.added, report.updated, report.deleted) == (0, 0, 1)
        assert _parents(kw, "services/api") == ["kw:name/services/"]
        # nothing reaches the deleted page any more, and it keeps no live fact
        assert all(f.retracted_at for f in kw.facts(page, history=True))
        ctx = kw.context("gateway request", link_depth=2)
        assert all(e.label != "Services" for e in ctx.entities)


def test_nested_folders_chain_page_to_page(tmp_path: Path) -> None:
    _write(tmp_path / "vault", {
        "docs/index.md": "# Docs\nThe documentation.\n",
        "docs/services/README.md": "# Services\nWhat we run.\n",
        "docs/services/auth/auth.md": "# Auth\nWho may do what.\n",
        "docs/services/auth/tokens.md": "# Tokens\nHow tokens are signed.\n",
        # two pages of one folder: the index wins, the README is a note beside it
        "docs/services/auth/README.md": "# Auth readme\nFor people browsing.\n"})
    with _open(tmp_path) as kw:
        kw.ingest()
        iri = {r: kw.entity(r).entity.iri for r in
               ("docs/index", "docs/services/README", "docs/services/auth/auth")}
        assert _parents(kw, "docs/services/auth/tokens") == [iri["docs/services/auth/auth"]]
        assert _parents(kw, "docs/services/auth/auth") == [iri["docs/services/README"]]
        assert _parents(kw, "docs/services/auth/README") == [iri["docs/services/README"]]
        assert _parents(kw, "docs/services/README") == [iri["docs/index"]]
        assert _parents(kw, "docs/index") == []  # the vault's root is no folder with a page
        # the page names the folder it is the page of; a note no folder's page, none
        names = kw.entity("docs/services/README").names
        assert ("folder_readme", "docs/services/") in names
        assert not [k for k, _ in kw.entity("docs/services/auth/tokens").names
                    if k.startswith("folder")]
        # the two pages of auth/ compete by rule: no ambiguity (the stem "readme" is one)
        assert [a.name for a in kw.stats().ambiguous_names] == ["readme"]


def test_a_kep_s_readme_is_its_folder_s_page(tmp_path: Path) -> None:
    kep = "keps/sig-apps/2232-suspend-jobs"
    _write(tmp_path / "vault", {
        f"{kep}/README.md": "# KEP-2232: Suspend Jobs\nJobs can be suspended.\n",
        f"{kep}/design-notes.md": "# Design notes\nWhy a flag.\n"})
    with _open(tmp_path) as kw:
        kw.ingest()
        readme = kw.entity(f"{kep}/README").entity.iri
        assert _parents(kw, f"{kep}/design-notes") == [readme]
        # part of the SIG's folder, which has no page: a name nothing shows
        assert _parents(kw, f"{kep}/README") == ["kw:name/keps/sig-apps/"]


def test_link_expansion_reaches_a_sibling_through_the_folder_s_page(tmp_path: Path) -> None:
    _write(tmp_path / "vault", {**CHILDREN, "services.md": "# Services\nWhat we run.\n"})
    with _open(tmp_path) as kw:
        kw.ingest()
        ctx = kw.context("gateway request", link_depth=2)
        found = {e.label: e.relevance for e in ctx.entities}
        assert found["API"] == "Direct"
        assert found["Services"] == "Linked"
        assert found["Billing"] == "Linked"


def test_a_folder_with_no_page_is_no_entity_no_missing_page_and_no_count(
        tmp_path: Path) -> None:
    _write(tmp_path / "vault", {f"other/lone{i}.md": f"# Lone {i}\nA lone note.\n"
                                for i in range(4)})
    with _open(tmp_path) as kw:
        kw.ingest()
        assert _parents(kw, "other/lone0") == ["kw:name/other/"]  # the fact is kept
        ctx = kw.context("lone note", link_depth=2)
        assert sorted(e.label for e in ctx.entities) == [f"Lone {i}" for i in range(4)]
        assert not [f for e in ctx.entities for f in e.facts if f.predicate == "part_of"]
        # nor found by the folder's own name (it is indexed for no search)
        assert all(e.label != "other/" for e in kw.context("other lone").entities)
        assert not [f for f in kw.lint() if f.kind in ("missing_page", "broken_link")]
        assert kw.stats().entities == 4  # the notes, not their folder


def test_folders_are_no_hierarchy_in_a_logseq_graph(tmp_path: Path) -> None:
    _write(tmp_path / "vault", {"logseq/config.edn": "{}\n",
                                "pages/pages.md": "- a page named pages\n",
                                "pages/alpha.md": "- alpha\n"})
    with _open(tmp_path) as kw:
        kw.ingest()
        assert _parents(kw, "pages/alpha") == []
