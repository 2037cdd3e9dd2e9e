"""A YAML sidecar: a note's metadata kept beside it (``kep.yaml`` beside ``README.md``,
``note.yaml`` beside ``note.md``).

The sidecar is a document of its own whose facts are about the note: each key read as
the note's frontmatter would be (a ``kep.yaml`` as a KEP's metadata,
``knotwork.ingest.parsers.kep``), each fact citing its line in the sidecar. So an edit to
the sidecar re-syncs what it says about the note, and only that (the ownership rule, with
the sidecar as the owner); deleting it retracts it all. ``add-context`` reads the sidecar
of every note it reads, and ``knotwork ingest`` (and the watcher) the sidecar of every
note its globs take (``ingest.sources.sidecar_note``), though no glob names it.

>>> SidecarParser().matches("keps/sig-apps/1-x/kep.yaml", b"")
True
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from ...types import SELF, Issue, NameDecl, NameRef, ParsedDocument, name_key
from ..frontmatter import read_frontmatter
from ..markdown import CODE, decode, split_lines
from ..sources import content_hash
from .typed import Facts, Source, metadata

__all__ = ["SidecarParser", "note_of", "sidecars_of"]

VERSION = "1"


def note_of(path: str) -> str:
    """The note a sidecar describes, as a path without ``.md``."""
    folder, name = posixpath.split(path)
    stem = name.rsplit(".", 1)[0]
    note = "README" if stem.lower() == "kep" else stem
    return f"{folder}/{note}" if folder else note


def sidecars_of(path: str) -> tuple[str, ...]:
    """The sidecar names a note at ``path`` may have beside it, in the order looked for."""
    folder, name = posixpath.split(path)
    stem = name.rsplit(".", 1)[0]
    names = [f"{stem}.yaml", f"{stem}.yml"]
    if stem.lower() == "readme":
        names = ["kep.yaml", *names]
    return tuple(f"{folder}/{n}" if folder else n for n in names)


class SidecarParser:
    """Read a ``*.yaml``/``*.yml`` file as the metadata of the note beside it."""

    type = "sidecar"
    version = VERSION
    detect = "name"
    category = "project_docs"

    def matches(self, path: str, head: bytes) -> bool:
        return path.lower().endswith((".yaml", ".yml"))

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        from .. import extraction_key
        from ..extract import extract_facts
        from .kep import kep_facts

        text = decode(path, data, max_bytes)
        if isinstance(text, Issue):
            return text
        lines = split_lines(text) if text else []
        # read as a frontmatter block: the same entries, lines and errors
        front = read_frontmatter(path, ["---", *lines, "---"])
        entries = tuple(replace(e, span=replace(e.span, line_start=e.span.line_start - 1,
                                                line_end=e.span.line_end - 1),
                                items=tuple((replace(s, line_start=s.line_start - 1,
                                                     line_end=s.line_end - 1), t)
                                            for s, t in e.items))
                        for e in front.entries)
        issues = tuple(replace(i, line=i.line - 1 if i.line else i.line) for i in front.issues)
        note = NameRef.of(note_of(path))
        src = Source(path, text, lines, entries, 0, [""] * len(lines), [CODE] * len(lines), [])
        facts = Facts(src, "sidecar", VERSION)
        is_kep = posixpath.basename(path).lower() == "kep.yaml"
        if is_kep:
            metadata(facts, "kep", "kep", 1, subject=note)
            kep_facts(facts, entries, note)
            drafts = tuple(facts.facts.values())
        else:
            found, more = extract_facts(path, entries, [])
            drafts = tuple(replace(f, subject=note if f.subject == SELF else f.subject,
                                   object=note if f.object == SELF else f.object)
                           for f in found)
            issues += more
        key = name_key(path)
        return ParsedDocument(
            path=path, text=text, content_hash=content_hash(data),
            title=f"{posixpath.basename(path)} of {note.text}", doc_type="sidecar",
            names=(NameDecl(key, path, "path"),), chunks=(), facts=drafts,
            issues=issues + tuple(facts.issues), size=len(data),
            extraction=extraction_key(chunk_tokens))
