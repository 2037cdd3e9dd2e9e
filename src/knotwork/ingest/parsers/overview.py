"""A project overview: a top-level ``README.md`` or an ``*overview*.md``.

Facts, each citing its line: ``project_name`` (the title), ``purpose`` (the first
paragraph under it, or a ``## Purpose`` / ``## About`` / ``## Overview`` section's),
``tech_stack`` (the items of ``## Tech Stack`` / ``## Technologies`` / ``## Built With``),
``component`` (of ``## Components`` / ``## Key Components`` / ``## Architecture`` /
``## Modules``) and ``link`` (the web links of ``## Links`` / ``## Resources``).

>>> OverviewParser().matches("README.md", b""), OverviewParser().matches("a/README.md", b"")
(True, False)
"""

from __future__ import annotations

import posixpath
import re

from ...types import Issue, ParsedDocument
from .typed import Facts, Source, metadata, read_typed, typed_document

__all__ = ["OverviewParser"]

VERSION = "1"
_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+(.*)")
_WEB = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)|<(https?://[^>\s]+)>|(?<![(<])(https?://\S+)")
_SECTIONS = {
    "tech_stack": ("tech stack", "technology stack", "technologies", "built with", "stack",
                   "tech"),
    "component": ("components", "key components", "architecture", "modules", "services",
                  "packages"),
}


class OverviewParser:
    """Read a project's overview (by file name)."""

    type = "overview"
    version = VERSION
    detect = "name"
    category = "project_overview"

    def matches(self, path: str, head: bytes) -> bool:
        name = posixpath.basename(path).lower()
        return (path.lower() == "readme.md" or
                (name.endswith(".md") and "overview" in name))

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        read = read_typed(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens,
                          extractor="overview", version=VERSION)
        if isinstance(read, Issue):
            return read
        base, facts = read
        src = facts.source
        h1 = next((s for s in src.sections if s.level == 1), None)
        first = h1.line if h1 else 1
        metadata(facts, "project-overview", "overview", first)
        if h1 is not None:
            facts.add("project_name", h1.title.strip("*_` "), h1.line)
        else:
            facts.warn("no title: the overview has no '# Project name' line", first)
        _purpose(src, facts, h1.line if h1 else 0)
        for predicate, names in _SECTIONS.items():
            for section in src.sections_named(*names):
                for line, _ in src.prose(section.start, section.end):
                    raw = src.raw(line)
                    m = _ITEM.match(raw)
                    if m and not src.level(line) and raw[:1] not in " \t":
                        facts.add(predicate, _plain(m.group(1))[:200], line)
                break
        for section in src.sections_named("links", "resources", "useful links", "see also"):
            for line, _ in src.prose(section.start, section.end):
                for m in _WEB.finditer(src.raw(line)):
                    facts.add("link", m.group(2) or m.group(3) or m.group(4), line)
        return typed_document(base, facts, doc_type="project-overview",
                              owned=("project_name", "purpose"))


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[\[([^\]|]*)(?:\|([^\]]*))?\]\]", lambda m: m.group(2) or m.group(1), text)
    return re.sub(r"\*\*|__|`", "", text).strip().strip("*_").strip()


def _purpose(src: Source, facts: Facts, title_line: int) -> None:
    section = src.section("purpose", "about", "overview", "introduction", "what is it")
    if section is not None:
        body = src.body(section)
    else:
        body = []
        for line, _ in src.prose(title_line):
            if src.level(line):
                if body:
                    break
                continue
            raw = src.raw(line).strip()
            if raw.startswith(("[!", "![", "<", "|", ">")) and not body:
                continue  # badges, images, HTML, tables before the text
            body.append((line, raw))
            if not src.raw(line + 1).strip():
                break
    if not body:
        return
    text = " ".join(src.raw(line).strip() for line, _ in body[:6])
    facts.add("purpose", _plain(text)[:400], body[0][0], end=body[min(5, len(body) - 1)][0],
              text=text)
