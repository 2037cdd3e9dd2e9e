"""The parser registry: detection order, explicit types, installed parsers, and the note
parser giving exactly what ``parse_markdown`` gave, under the same extraction key."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import knotwork.ingest
from knotwork import Knotwork
from knotwork.errors import ConfigError
from knotwork.ingest import EXTRACTION_RULES, extraction_key, parse_markdown
from knotwork.ingest import parsers as registry_module
from knotwork.ingest.hierarchy import with_folders
from knotwork.ingest.parsers import (
    ENTRY_POINT_GROUP,
    NoteParser,
    Parser,
    ParserRegistry,
    builtin_parsers,
    default_registry,
)
from knotwork.ingest.sources import DEFAULT_PATTERNS, content_hash
from knotwork.sync.files import plan
from knotwork.types import (
    SELF,
    ChunkDraft,
    FactDraft,
    Issue,
    LiteralValue,
    ParsedDocument,
    Span,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"

TRICKY = {
    "empty.md": b"",
    "blank.md": b"\n\n   \n",
    "crlf.md": b"---\r\ntitle: Win\r\n---\r\n# Win\r\n\r\nRuns on [[Host]].\r\n",
    "bad-yaml.md": b"---\ntags: [a, b\n---\n# Bad\n\nSee [[Other]].\n",
    "latin1.md": "caf\u00e9 [[X]]".encode("latin-1"),
    "binary.md": b"\x00\x01\x02PNG",
    "adr/0007-use-postgres.md": b"# 7. Use Postgres\n\nDate: 2020-01-01\nStatus: Accepted\n\n"
                                b"## Status\n\nSuperseded by [[ADR-9]]\n\n## Decision\n\n"
                                b"We will use [[Postgres]].\n",
    "spec.md": b"# Alerts\n\n### TASK-ALR-001: Define alert rules\n\nstatus:: done\n"
               b"owner:: [[Ada]]\n\n## Dependencies\n\n- [[Prometheus]] and [[Grafana]]\n",
    "fields.md": b"Owner: [[Ada]]\nTeam: Platform\n\n- [risk] Disk fills #ops\n"
                 b"- depends on [[Redis]]\n",
}


class _Fixed:
    """A parser giving one fact, claiming files by name or by content."""

    def __init__(self, type: str, *, suffix: str = "", marker: bytes = b"",
                 version: str = "1") -> None:
        self.type, self.version = type, version
        self.suffix, self.marker = suffix, marker
        self.detect = "name" if suffix else "content"

    def matches(self, path: str, head: bytes) -> bool:
        return path.endswith(self.suffix) if self.suffix else self.marker in head

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        fact = FactDraft(SELF, "parsed_by", LiteralValue(self.type), Span(1, 1),
                         self.type, self.type, self.version)
        text = data.decode()
        return ParsedDocument(path=path, text=text, content_hash=content_hash(data),
                              title=path, doc_type=self.type, names=(),
                              chunks=(ChunkDraft(0, (), text, Span(1, 1)),), facts=(fact,),
                              size=len(data))


def _example_files() -> list[tuple[str, bytes]]:
    files = sorted(p for p in EXAMPLES.rglob("*") if p.is_file())
    assert len(files) >= 10
    return [(p.relative_to(EXAMPLES).as_posix(), p.read_bytes()) for p in files]


@pytest.mark.parametrize(("path", "data"), [*_example_files(), *TRICKY.items()])
def test_the_note_parser_gives_what_parse_markdown_gives(path: str, data: bytes) -> None:
    registry = ParserRegistry()
    assert registry.choose(path, data[:4096]).type == "note"
    got = registry.parse(path, data, chunk_tokens=64)
    want = parse_markdown(path, data, chunk_tokens=64)
    # and the structure its folder states, whichever parser reads what it says
    assert got == (with_folders(want, "markdown") if isinstance(want, ParsedDocument) else want)
    if isinstance(got, ParsedDocument):
        assert got.extraction == f"{EXTRACTION_RULES}/64"  # the key before parsers existed


def test_the_tricky_notes_are_notes_with_facts_and_refusals() -> None:
    """The equality above is not vacuous: the tricky notes give facts and issues."""
    registry = ParserRegistry()
    adr = registry.parse("adr/0007-use-postgres.md", TRICKY["adr/0007-use-postgres.md"])
    assert isinstance(adr, ParsedDocument)
    assert {f.predicate for f in adr.facts} >= {"status", "date", "uses"}
    assert isinstance(registry.parse("binary.md", TRICKY["binary.md"]), Issue)


def test_detection_order_is_type_then_name_then_content_then_note() -> None:
    by_content = _Fixed("marked", marker=b"%%marked")
    by_name = _Fixed("adr", suffix=".adr.md")
    registry = ParserRegistry([by_content, by_name])  # registered content first
    assert [p.type for p in registry.parsers] == ["adr", "marked", "note"]
    assert registry.choose("x.adr.md", b"%%marked") is by_name  # the name wins
    assert registry.choose("x.md", b"%%marked") is by_content
    assert registry.choose("x.md", b"plain").type == "note"
    assert registry.choose("x.md", b"plain", type="adr") is by_name  # explicit beats all
    got = registry.parse("x.adr.md", b"# X\n")
    assert isinstance(got, ParsedDocument) and got.doc_type == "adr"


def test_within_a_kind_the_first_registered_wins_and_a_type_is_replaced() -> None:
    first, second = _Fixed("one", marker=b"!"), _Fixed("two", marker=b"!")
    registry = ParserRegistry([first, second])
    assert registry.choose("a.md", b"!") is first
    newer = _Fixed("one", marker=b"?", version="2")
    registry.register(newer)
    assert [p.type for p in registry.parsers] == ["two", "one", "note"]
    assert registry.get("one") is newer


def test_an_unknown_type_names_the_valid_ones() -> None:
    registry = ParserRegistry([_Fixed("adr", suffix=".adr.md")])
    with pytest.raises(ConfigError, match=r"unknown parser type 'rfc'; valid types: adr, note"):
        registry.parse("a.md", b"", type="rfc")


def test_what_is_no_parser_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a parser"):
        ParserRegistry().register(object())  # type: ignore[arg-type]


def test_the_key_records_the_parsers_type_and_version_but_the_notes_is_todays() -> None:
    registry = ParserRegistry()
    base = extraction_key(220)
    assert base == f"{EXTRACTION_RULES}/220"  # the formula every store was made under
    assert registry.key(NoteParser(), base) == base
    adr, adr2 = _Fixed("adr", suffix=".adr.md"), _Fixed("adr", suffix=".adr.md", version="2")
    assert registry.key(adr, base) == f"{base}/adr@1"
    assert len({base, registry.key(adr, base), registry.key(adr2, base)}) == 3
    registry.register(adr)
    assert registry.keys(base) == {base, f"{base}/adr@1"}
    got = registry.parse("a.adr.md", b"x", chunk_tokens=220)
    assert isinstance(got, ParsedDocument) and got.extraction == f"{base}/adr@1"


def _install(site: Path, name: str, body: str, entry: str) -> None:
    """A distribution on ``site`` as pip would leave it: a module and a dist-info."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{name}.py").write_text(body, encoding="utf-8")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry}\n",
                                           encoding="utf-8")


PLUGIN = '''
from knotwork.types import ParsedDocument


class RfcParser:
    type = "rfc"
    version = "3"
    detect = "name"

    def matches(self, path, head):
        return path.startswith("rfcs/")

    def parse(self, path, data, *, max_bytes, chunk_tokens):
        return ParsedDocument(path=path, text=data.decode(), content_hash="h", title="RFC",
                              doc_type="rfc", names=(), chunks=(), facts=(), size=len(data))
'''


def test_an_installed_parser_is_found_through_its_entry_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(tmp_path / "site", "kw_rfc_plugin", PLUGIN, "rfc = kw_rfc_plugin:RfcParser")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "kw_rfc_plugin", raising=False)
    registry = ParserRegistry.from_entry_points()
    # the plugin's "rfc" takes the place of the built-in one; the note parser stays last
    builtin = [p.type for p in builtin_parsers()]
    assert sorted(p.type for p in registry.parsers) == sorted({*builtin, "rfc", "note"})
    assert registry.parsers[-1].type == "note"
    assert type(registry.get("rfc")).__module__ == "kw_rfc_plugin"
    assert isinstance(registry.get("rfc"), Parser)
    got = registry.parse("rfcs/0001.md", b"# One\n", chunk_tokens=220)
    assert isinstance(got, ParsedDocument) and got.doc_type == "rfc"
    assert got.extraction == f"{EXTRACTION_RULES}/220/rfc@3"
    assert registry.choose("notes/a.md", b"# A").type == "note"


def test_an_entry_point_that_is_no_parser_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(tmp_path / "site", "kw_bad_plugin", "VALUE = 42\n", "bad = kw_bad_plugin:VALUE")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ConfigError, match="entry point 'bad' .* is no parser"):
        ParserRegistry.from_entry_points()


def test_a_store_made_before_parsers_were_chosen_reads_no_note_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store is made as the code before the registry made it (``parse_markdown``
    called directly); the registry's sync finds every note unchanged."""
    db = str(tmp_path / "s.db")

    def old(path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
            ) -> ParsedDocument | Issue:
        return parse_markdown(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)

    with monkeypatch.context() as m:
        m.setattr(registry_module, "parse", old)
        with Knotwork.open(EXAMPLES, db=db, embedder="none") as kw:
            first = kw.ingest()
    notes = first.added
    assert notes >= 10 and not first.errors
    with Knotwork.open(EXAMPLES, db=db, embedder="none") as kw:
        keys = {d.extraction for d in kw.store.reader.document_index("default").values()}
        assert keys == {f"{EXTRACTION_RULES}/220"}
        again = kw.ingest()
    assert (again.unchanged, again.reread, again.updated, again.added) == (notes, 0, 0, 0)


def test_notes_another_parser_read_stay_current_until_its_version_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "v"
    (vault / "rfcs").mkdir(parents=True)
    (vault / "rfcs" / "one.adr.md").write_text("# One\n", encoding="utf-8")
    (vault / "two.md").write_text("# Two\n\nSee [[One]].\n", encoding="utf-8")
    registry = ParserRegistry([_Fixed("adr", suffix=".adr.md")])
    monkeypatch.setattr(registry_module, "default_registry", lambda: registry)
    db = str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        assert kw.ingest().added == 2
        index = kw.store.reader.document_index("default")
        assert index["rfcs/one.adr.md"].extraction == f"{extraction_key(220)}/adr@1"
        assert _to_read(kw, vault) == (2, set())  # neither is parsed again
        assert kw.ingest().unchanged == 2
        registry.register(_Fixed("adr", suffix=".adr.md", version="2"))
        assert _to_read(kw, vault) == (1, {"rfcs/one.adr.md"})
        bumped = kw.ingest()
        assert (bumped.unchanged, bumped.reread) == (1, 1)
        assert _to_read(kw, vault) == (2, set())


def _to_read(kw: Knotwork, vault: Path) -> tuple[int, set[str]]:
    """What a sync's plan counts unchanged, and what it reads again though unchanged."""
    p = plan(kw.store, vault, scope="default", patterns=DEFAULT_PATTERNS, force=False,
             max_bytes=5_000_000, extraction=extraction_key(220))
    return p.unchanged, set(p.reread)


def test_the_default_registry_is_the_note_parser_here() -> None:
    assert default_registry() is default_registry()
    assert default_registry().parsers[-1].type == "note"
    assert knotwork.ingest.parsers is registry_module
