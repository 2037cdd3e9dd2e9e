"""Kubernetes enhancement proposals: a KEP folder's ``README.md`` and its ``kep.yaml``.

The README (``keps/<sig>/<NNNN>-<name>/README.md``, or any file titled "# KEP-NNNN: …")
is the KEP's entity: ``number`` (``KEP-NNNN``, also an alias), ``title``. Its ``kep.yaml``
is a document of its own (``knotwork.ingest.parsers.sidecar``) whose facts are about the
README's entity: ``status``, ``stage``, ``owning_sig``, ``participating_sig``, ``author``,
``reviewer``, ``approver``, ``milestone_alpha``/``_beta``/``_stable``,
``latest_milestone``, ``feature_gate``, ``creation_date``, ``see_also``, ``replaces``,
each citing its line in ``kep.yaml``; an edit to it changes exactly those.

>>> KepParser().matches("keps/sig-apps/2232-suspend-jobs/README.md", b"")
True
"""

from __future__ import annotations

import posixpath
import re

from ...types import EntityRef, Issue, NameRef, ParsedDocument
from ..frontmatter import Entry
from .typed import Facts, Source, iso_date, metadata, read_typed, typed_document

__all__ = ["KepParser", "kep_facts"]

VERSION = "1"
_FOLDER = re.compile(r"(?:^|/)keps?/(?:[^/]+/)*(\d{1,5})-[^/]+/readme\.md\Z", re.IGNORECASE)
_KEP_PATH = re.compile(r"(?:^|/)(\d{1,5})-[^/]*/?\Z")
_TITLE = re.compile(rb"^#[ \t]+KEP-(\d{1,5})\b", re.M)
_LISTS = {"authors": "author", "reviewers": "reviewer", "approvers": "approver",
          "participating-sigs": "participating_sig", "see-also": "see_also",
          "replaces": "replaces", "superseded-by": "superseded_by"}
_SCALARS = {"status": "status", "stage": "stage", "owning-sig": "owning_sig",
            "latest-milestone": "latest_milestone", "title": "title"}


class KepParser:
    """Read a KEP's README (by its folder, else a "# KEP-NNNN" title)."""

    type = "kep"
    version = VERSION
    detect = "name"
    category = "project_decisions"

    def matches(self, path: str, head: bytes) -> bool:
        return _FOLDER.search(path) is not None

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        read = read_typed(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens,
                          extractor="kep", version=VERSION)
        if isinstance(read, Issue):
            return read
        base, facts = read
        src = facts.source
        h1 = next((s for s in src.sections if s.level == 1), None)
        first = h1.line if h1 else 1
        metadata(facts, "kep", "kep", first)
        names: list[tuple[str, str]] = []
        m = _FOLDER.search(path) or _TITLE.search(data[:4096])
        number = int(m.group(1)) if m else None
        if number is not None:
            facts.add("number", f"KEP-{number}", first)
            names.append((f"KEP-{number}", "alias"))
        if h1 is not None:
            title = re.sub(r"^KEP-\d+\s*[:–—-]\s*", "", h1.title).strip()
            if title:
                facts.add("title", title, first)
        return typed_document(base, facts, doc_type="kep", owned=("number",), names=names)


def kep_facts(facts: Facts, entries: tuple[Entry, ...], subject: EntityRef) -> None:
    """The facts of a ``kep.yaml``'s entries about the KEP ``subject``."""
    for entry in entries:
        key = entry.key.strip().lower()
        line, end = entry.span.line_start, entry.span.line_end
        if key in _SCALARS and entry.value not in (None, ""):
            facts.add(_SCALARS[key], str(entry.value).strip(), line, subject=subject,
                      text=entry.line_text)
        elif key in ("see-also", "replaces", "superseded-by") and isinstance(entry.value, list):
            for v in entry.value:  # "/keps/sig-apps/3939-allow-…": KEP-3939
                m = _KEP_PATH.search(str(v)) if v else None
                if m:
                    facts.add(_LISTS[key], NameRef.of(f"KEP-{int(m.group(1))}"),
                              _line_of(facts.source, str(v), line, end), subject=subject)
        elif key in _LISTS:
            facts.entry_values(entry, _LISTS[key], subject=subject)
        elif key == "kep-number" and entry.value is not None:
            facts.add("number", f"KEP-{entry.value}", line, subject=subject, text=entry.line_text)
        elif key == "creation-date":
            iso = iso_date(entry.value)
            if iso:
                facts.add("creation_date", iso, line, subject=subject, text=entry.line_text)
        elif key == "milestone" and isinstance(entry.value, dict):
            for n, (stage, version) in enumerate(entry.value.items()):
                if version:
                    at = min(line + 1 + n, end)
                    facts.add(f"milestone_{stage}", str(version), at, subject=subject)
        elif key == "feature-gates" and isinstance(entry.value, list):
            for gate in entry.value:
                name = gate.get("name") if isinstance(gate, dict) else None
                if name:
                    at = _line_of(facts.source, f"name: {name}", line, end)
                    facts.add("feature_gate", str(name), at, subject=subject)


def _line_of(src: Source, needle: str, start: int, end: int) -> int:
    for n in range(start, end + 1):
        if needle in src.raw(n):
            return n
    return start


def readme_of(path: str) -> str:
    """The note a ``kep.yaml`` describes: the README beside it (path without ``.md``)."""
    folder = posixpath.dirname(path)
    return f"{folder}/README" if folder else "README"
