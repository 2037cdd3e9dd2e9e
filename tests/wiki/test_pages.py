"""Wiki pages: safe names, atomic writes through the ingest path, the index and the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import ConfigError, InvalidQuery, Knotwork, KnotworkError, NotFound, UnsafePath
from knotwork.wiki.names import MAX_SLUG, slug


def test_a_written_page_is_a_vault_file_searchable_on_return(kw: Knotwork, vault: Path) -> None:
    path = kw.write_page("summary", "System Crash Analysis", "# Crash\n\nA memory leak in"
                         " [[Alpha]] crashed it.\n", summary="Memory leaks crash Alpha.")
    assert path == "wiki/summary/system-crash-analysis.md"
    text = (vault / path).read_text()
    assert text.startswith("---\ntitle: System Crash Analysis\nsummary: Memory leaks crash")
    [hit] = kw.search_wiki("memory leak")
    assert (hit.path, hit.category, hit.title) == (path, "summary", "System Crash Analysis")
    assert kw.search("memory leak")[0].path == path  # the store's own search sees it too
    facts = kw.facts(path)
    assert facts and all(f.trust == "asserted" and f.actor == "agent:test" for f in facts
                         if f.extractor != "mention")
    assert kw.ingest().unchanged >= 4  # the next sync finds the file as written


def test_read_list_rewrite_and_the_log(kw: Knotwork, vault: Path) -> None:
    kw.write_page("entity", "Kestrel Queue", "Runs on [[Alpha]].", summary="The queue")
    kw.write_page("topic", "Queues", "About [[Kestrel Queue]].")
    page = kw.read_page("entity", "kestrel  queue")  # titles compare as names do
    assert page.title == "Kestrel Queue" and "Runs on [[Alpha]]." in page.content
    assert [p.path for p in kw.list_pages()] == ["wiki/entity/kestrel-queue.md",
                                                 "wiki/topic/queues.md"]
    assert [p.title for p in kw.list_pages("topic")] == ["Queues"]
    written = kw.write_wiki_page("entity", "Kestrel Queue", "Runs on [[Beta]].",
                                 summary="The queue")
    assert written.status == "updated" and written.facts_retracted >= 1
    assert kw.write_wiki_page("entity", "Kestrel Queue", "Runs on [[Beta]].",
                              summary="The queue").status == "unchanged"
    log = kw.get_log()
    assert [(e.action, e.path) for e in log] == [
        ("create", "wiki/entity/kestrel-queue.md"), ("create", "wiki/topic/queues.md"),
        ("update", "wiki/entity/kestrel-queue.md")]
    assert [e.action for e in kw.get_log(1)] == ["update"] and log[0].actor == "agent:test"
    index = (vault / "wiki/index.md").read_text()
    assert "## Entity\n\n- [[wiki/entity/kestrel-queue|Kestrel Queue]] — The queue\n" in index
    assert index.index("## Entity") < index.index("## Topic")
    with pytest.raises(NotFound):
        kw.read_page("topic", "Nothing here")


def test_an_own_frontmatter_title_is_kept_and_the_page_title_becomes_an_alias(
        kw: Knotwork, vault: Path) -> None:
    content = "---\ntitle: System Crash\ntags: [incident]\n---\n# System Crash\n"
    path = kw.write_page("summary", "System Crash Analysis Summary", content)
    assert "aliases:\n- System Crash Analysis Summary" in (vault / path).read_text()
    assert kw.read_page("summary", "System Crash Analysis Summary").title == "System Crash"
    assert kw.resolve("System Crash Analysis Summary") == kw.resolve("System Crash")
    with pytest.raises(InvalidQuery, match="not valid YAML at line 2"):
        kw.write_page("summary", "Bad", "---\ntitle: [oops\n---\nbody\n")


def test_titles_that_fold_to_one_file_name_get_a_file_each(kw: Knotwork) -> None:
    a = kw.write_page("topic", "C++", "about c plus plus")
    b = kw.write_page("topic", "C#", "about c sharp")
    assert (a, b) == ("wiki/topic/c.md", "wiki/topic/c-2.md")
    assert kw.read_page("topic", "C#").content.endswith("about c sharp\n")
    assert kw.write_page("topic", "C#", "about c sharp, again") == b


@pytest.mark.parametrize("title", ["../../etc/passwd", "/etc/passwd", "a/../../b", "..",
                                   "C:\\Windows\\x", "~/notes", "\\\\server\\share",
                                   "nul\x00byte", "x" * 501])
def test_path_escapes_nul_and_very_long_titles_are_refused(kw: Knotwork, vault: Path,
                                                          title: str) -> None:
    with pytest.raises(UnsafePath) as err:
        kw.write_page("topic", title, "x")
    assert isinstance(err.value, KnotworkError) and str(err.value)
    assert not (vault / "wiki").exists()  # nothing written, not even the index
    with pytest.raises(UnsafePath):
        kw.read_page("topic", title)


@pytest.mark.parametrize("title", ["TLS / certs", "Q: why does it crash?", "v1..2 notes",
                                   "~draft", "C:x"])
def test_titles_that_only_look_odd_are_pages(kw: Knotwork, vault: Path, title: str) -> None:
    path = kw.write_page("topic", title, "x")
    assert (vault / path).resolve().parent == (vault / "wiki" / "topic").resolve()
    assert kw.read_page("topic", title).title == title


@pytest.mark.parametrize("title", ["   ", "!!!"])
def test_a_title_with_nothing_to_name_a_file_by_is_refused(kw: Knotwork, title: str) -> None:
    with pytest.raises(InvalidQuery):
        kw.write_page("topic", title, "x")


@pytest.mark.parametrize("category", ["../x", "/abs", "topic/../..", "nope", "top\x00ic"])
def test_a_category_outside_the_configured_ones_is_refused(kw: Knotwork, category: str
                                                            ) -> None:
    with pytest.raises(UnsafePath, match="category"):
        kw.write_page(category, "Title", "x")


def test_nul_reserved_and_long_titles(kw: Knotwork) -> None:
    with pytest.raises(UnsafePath, match="NUL"):
        kw.write_page("topic", "a\x00b", "x")
    with pytest.raises(UnsafePath, match="NUL"):
        kw.write_page("topic", "ok", "body \x00")
    assert kw.write_page("topic", "CON", "x") == "wiki/topic/con-page.md"
    long = "Ünïcode title " * 35  # 490 characters: cut to a file name, kept as the title
    path = kw.write_page("topic", long, "x")
    assert len(Path(path).stem.encode()) <= MAX_SLUG and kw.read_page("topic", long)
    assert slug("A  b__c--d") == "a-b-c-d"


def test_a_wiki_folder_outside_the_vault_is_refused(vault: Path, tmp_path: Path) -> None:
    with Knotwork.open(vault, db=str(tmp_path / "o.db"), embedder="none",
                       wiki_dir="../outside") as kw, pytest.raises(UnsafePath):
        kw.write_page("topic", "x", "y")


def test_configured_folder_and_categories_and_an_ignored_wiki(vault: Path, tmp_path: Path
                                                              ) -> None:
    with Knotwork.open(vault, db=str(tmp_path / "c.db"), embedder="none", wiki_dir="kb",
                       wiki_categories="person,howto") as kw:
        assert kw.write_page("howto", "Restart Kota", "Steps.") == "kb/howto/restart-kota.md"
        with pytest.raises(UnsafePath, match="howto"):
            kw.write_page("topic", "x", "y")
    (vault / ".knotworkignore").write_text("wiki\n")
    with Knotwork.open(vault, db=str(tmp_path / "d.db"), embedder="none") as kw, \
            pytest.raises(ConfigError, match="not read as notes"):
        kw.write_page("topic", "x", "y")
    assert not (vault / "wiki").exists()
