"""Choose the parser a file is read with: explicit type → file name → content → note.

A parser is any object with a ``type`` (its name), a ``version`` (raise it with every
change to what the same bytes give: it is part of the document's extraction key, so a
sync reads again what an older version read), ``matches(path, head)`` and ``parse``.
Third-party parsers are found through the entry-point group ``knotwork.parsers``: each
entry point names a parser object, or a class made without arguments. A parser that
decides by the file name alone says so with ``detect = "name"``; any other is asked
after every name parser, with the file's first bytes (``HEAD_BYTES``). The generic note
parser (``NoteParser``, today's ``parse_markdown``) takes every file no other took.
Whichever parser read a file, what its place in the vault states is added after it
(``hierarchy.with_folders``: its folder's page), part of the note extraction rules.

>>> default_registry().choose("notes/a.md", b"# A").type
'note'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Literal, Protocol, runtime_checkable

from ...errors import ConfigError
from ...types import Issue, ParsedDocument
from .. import EXTRACTION_RULES

__all__ = ["ENTRY_POINT_GROUP", "HEAD_BYTES", "NoteParser", "Parser", "ParserRegistry",
           "builtin_parsers", "default_registry", "parse"]

ENTRY_POINT_GROUP = "knotwork.parsers"
HEAD_BYTES = 4096  # what a content parser may look at to claim a file
NOTE = "note"  # the generic parser's type
SIDECAR = "sidecar"  # the YAML sidecar parser's type (``sidecar.SidecarParser``)


@runtime_checkable
class Parser(Protocol):
    """Read one file's bytes into a ``ParsedDocument`` (or a fatal ``Issue``)."""

    type: str
    version: str

    def matches(self, path: str, head: bytes) -> bool:
        """Whether this parser reads ``path``, whose first bytes are ``head``."""
        ...

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        """Parse ``data``, the bytes of the vault-relative POSIX ``path``."""
        ...


class NoteParser:
    """The generic Markdown note parser: ``parse_markdown``, matching every file.

    Its version is ``EXTRACTION_RULES``, the leading part of every extraction key, and
    it adds nothing to the key: a store made before parsers were chosen stays current.
    """

    type = NOTE
    version = str(EXTRACTION_RULES)

    def matches(self, path: str, head: bytes) -> bool:
        return True

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        from .. import parse_markdown  # the package's: a test may stand in for it

        return parse_markdown(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)


Detect = Literal["name", "content"]


class ParserRegistry:
    """The parsers in detection order; the generic note parser always last."""

    def __init__(self, parsers: Iterable[Parser] = ()) -> None:
        self._by_name: list[Parser] = []
        self._by_content: list[Parser] = []
        self.note: Parser = NoteParser()
        for parser in parsers:
            self.register(parser)

    def register(self, parser: Parser, *, detect: Detect | None = None) -> None:
        """Add ``parser`` after those of its kind (``detect``, else its own ``detect``
        attribute, else "content"); one of the same type is replaced."""
        if not isinstance(parser, Parser):
            raise ConfigError(f"not a parser: {parser!r} (needs type, version, matches, parse)",
                              key="parser")
        if parser.type == NOTE:
            self.note = parser
            return
        self._by_name = [p for p in self._by_name if p.type != parser.type]
        self._by_content = [p for p in self._by_content if p.type != parser.type]
        kind = detect or getattr(parser, "detect", "content")
        (self._by_name if kind == "name" else self._by_content).append(parser)

    @property
    def parsers(self) -> tuple[Parser, ...]:
        """Every parser in the order they are asked."""
        return (*self._by_name, *self._by_content, self.note)

    def get(self, type: str) -> Parser:
        """The parser named ``type``; an unknown name raises ``ConfigError`` listing all."""
        for parser in self.parsers:
            if parser.type == type:
                return parser
        valid = ", ".join(sorted(p.type for p in self.parsers))
        raise ConfigError(f"unknown parser type {type!r}; valid types: {valid}",
                          key="type", hint=f"one of {valid}")

    def choose(self, path: str, head: bytes, *, type: str | None = None) -> Parser:
        """The parser for ``path``: ``type`` when given, else the first name parser that
        matches, else the first content parser, else the note parser."""
        if type is not None:
            return self.get(type)
        for parser in self._by_name:
            if parser.matches(path, head):
                return parser
        for parser in self._by_content:
            if parser.matches(path, head):
                return parser
        return self.note

    def key(self, parser: Parser, base: str) -> str:
        """The extraction key of a document ``parser`` read under the ``base`` key
        (``knotwork.ingest.extraction_key``): its type and version appended, but for the
        note parser, whose version leads ``base`` already."""
        return base if parser.type == NOTE else f"{base}/{parser.type}@{parser.version}"

    def keys(self, base: str) -> frozenset[str]:
        """Every key a document read now under ``base`` may carry: one per parser."""
        return frozenset(self.key(p, base) for p in self.parsers)

    def parse(self, path: str, data: bytes, *, max_bytes: int = 5_000_000,
              chunk_tokens: int = 220, type: str | None = None) -> ParsedDocument | Issue:
        """Read ``data`` with the parser ``choose`` picks, its extraction key set."""
        from .. import extraction_key
        from ..dialects import current
        from ..hierarchy import with_folders, with_tag_notes  # (not at import)

        parser = self.choose(path, data[:HEAD_BYTES], type=type)
        out = parser.parse(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)
        if isinstance(out, ParsedDocument):
            if parser.type != SIDECAR:  # (a sidecar's facts are its note's)
                # what the file's place states, whichever parser read what it says
                out = with_tag_notes(with_folders(out, current()), current())
            key = self.key(parser, extraction_key(chunk_tokens))
            if out.extraction != key:
                out = replace(out, extraction=key)
        return out

    @classmethod
    def from_entry_points(cls, group: str = ENTRY_POINT_GROUP) -> ParserRegistry:
        """A registry of knotwork's typed parsers and the installed parsers of ``group``,
        by entry-point name (one of a built-in type replaces it)."""
        registry = cls(builtin_parsers())
        for ep in sorted(entry_points(group=group), key=lambda e: e.name):
            loaded: object = ep.load()
            if isinstance(loaded, type):
                make: Callable[[], object] = loaded
                loaded = make()
            if not isinstance(loaded, Parser):
                raise ConfigError(f"entry point {ep.name!r} of {group} is no parser: "
                                  f"{ep.value}", key="parser")
            registry.register(loaded)
        return registry


def builtin_parsers() -> list[Parser]:
    """The typed parsers knotwork ships, in detection order within their kind."""
    from .adr import AdrParser
    from .kep import KepParser
    from .overview import OverviewParser
    from .rfc import RfcParser
    from .sidecar import SidecarParser
    from .spec import FeatureSpecParser

    return [AdrParser(), FeatureSpecParser(), KepParser(), OverviewParser(),
            SidecarParser(), RfcParser()]


@lru_cache(maxsize=1)
def default_registry() -> ParserRegistry:
    """The registry of this process: the note parser and the installed parsers."""
    return ParserRegistry.from_entry_points()


def parse(path: str, data: bytes, *, max_bytes: int = 5_000_000, chunk_tokens: int = 220,
          type: str | None = None) -> ParsedDocument | Issue:
    """Parse a file with the parser the default registry picks (``type``: by name)."""
    return default_registry().parse(path, data, max_bytes=max_bytes,
                                    chunk_tokens=chunk_tokens, type=type)
