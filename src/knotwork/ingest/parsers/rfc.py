"""Rust-RFC-style proposals: a head of ``- Feature Name:`` / ``- Start Date:`` /
``- RFC PR:`` / ``- Rust Issue:`` (or ``Tracking Issue``) lines.

Facts, each citing its line: ``number`` (``RFC-NNNN``, from the file name), ``feature_name``,
``start_date`` (ISO), ``rfc_pr`` and ``tracking_issue`` (each reference as written, such
as ``rust-lang/rfcs#1``). The file stays named by its path and file name.

>>> RfcParser().matches("text/0001-x.md", b"- Feature Name: x\\n- Start Date: 2014-03-11\\n")
True
"""

from __future__ import annotations

import posixpath
import re

from ...types import Issue, ParsedDocument
from .typed import iso_date, metadata, read_typed, typed_document

__all__ = ["RfcParser"]

VERSION = "1"
_HEAD = re.compile(rb"^[-*][ \t]+(?:Feature Name|Start Date|RFC PR)[ \t]*#?[ \t]*:", re.M)
_NUMBER = re.compile(r"(\d{1,5})-")
_REF = re.compile(r"\[([^\]]+)\]\([^)]*\)|([\w.\-]+/[\w.\-]+#\d+)|(#\d+)|(https?://\S+)")
_KEYS = {
    "feature_name": ("feature_name", "features_name", "feature"),
    "start_date": ("start_date",),
    "rfc_pr": ("rfc_pr", "rfc_pr_#", "erfc_pr"),
    "tracking_issue": ("rust_issue", "rust_issue_#", "tracking_issue", "tracking_issues",
                       "rust_issues", "cargo_issue"),
}
OWNED = frozenset({"feature_name", "start_date", "rfc_pr", "rust_issue", "tracking_issue",
                   "date", "number"})


class RfcParser:
    """Read an RFC: claimed by its content (two or more of the head's lines)."""

    type = "rfc"
    version = VERSION
    detect = "content"
    category = "project_decisions"

    def matches(self, path: str, head: bytes) -> bool:
        return path.lower().endswith(".md") and len(_HEAD.findall(head[:2048])) >= 2

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        read = read_typed(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens,
                          extractor="rfc", version=VERSION)
        if isinstance(read, Issue):
            return read
        base, facts = read
        src = facts.source
        fields = {k.replace("#", "").strip("_"): v for k, v in src.header_fields().items()}
        first = next((lines[0][0] for lines in fields.values()), 1)
        metadata(facts, "rfc", "rfc", first)
        m = _NUMBER.match(posixpath.basename(path))
        if m:
            # a fact, not an alias: 637 more aliases cost a question of bench/answers.py a
            # rank (their length weighs on every alias match); the file name names it
            facts.add("number", f"RFC-{int(m.group(1)):04d}", first)
        for predicate, keys in _KEYS.items():
            found = [(line, v) for k in keys for line, v in fields.get(k.rstrip("_#"), [])]
            if not found:
                if predicate in ("start_date", "rfc_pr"):
                    facts.warn(f"no '- {predicate.replace('_', ' ').title()}:' line", first)
                continue
            line, value = found[0]
            value = value.strip()
            if predicate == "start_date":
                iso = iso_date(value)
                if iso is None:
                    facts.warn(f"start date {value!r} is no date (YYYY-MM-DD expected)", line)
                else:
                    facts.add("start_date", iso, line)
            elif predicate == "feature_name":
                name = value.strip("`*_ ")
                if name and name.lower() not in ("n/a", "none", "(none)", "-"):
                    # not an alias: "dotdot_in_patterns" as a name made that RFC a name
                    # hit for any question saying "patterns" (bench/answers.py)
                    facts.add("feature_name", name, line)
            else:
                refs = [next(g for g in r.groups() if g) for r in _REF.finditer(value)]
                for ref in refs or [value]:
                    facts.add(predicate, ref.strip(), line)
        return typed_document(base, facts, doc_type="rfc", owned=OWNED)
