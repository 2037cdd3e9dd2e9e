"""Wiki pages an agent writes: real Markdown files in the vault, ingested before return.

A page lives at ``<wiki>/<category>/<slug>.md``. Its frontmatter carries its ``title``
(the agent's own title is kept, and the one it was written under becomes an alias) and
its ``summary``, so the index can always be rebuilt from the pages. A write holds the
wiki lock (``files.locked``) from reading the old page to appending the log line:
two writers of one wiki, in one process or two, never lose a line of the index or the log.

The page is applied to the store through the ingest path itself (``ingest.parsers.parse``,
the writer's ``apply``, the mention pass), as a vault file whose size and time the next
sync finds unchanged; its facts carry trust ``asserted`` and the writer's actor. (A person
who edits the page later makes it theirs: the next sync reads it as ``stated``.)
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, InvalidQuery, NotFound, UnsafePath
from ..ingest.mentions import ScopedFinder
from ..store import Store, record_time
from ..types import Applied, ParsedDocument
from . import files
from .names import check_category, inside, slug
from .records import Keyed

__all__ = ["Page", "PageInfo", "Wiki", "WikiHit", "WrittenPage"]

_MAX_SUFFIX = 1000  # slugs tried for one title before giving up


@dataclass(frozen=True, slots=True)
class PageInfo(Keyed):
    """One page as ``list_pages`` and the index see it."""

    path: str  # vault-relative, with ``.md``
    category: str
    title: str
    summary: str

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "category": self.category, "title": self.title,
                "summary": self.summary}


@dataclass(frozen=True, slots=True)
class Page(PageInfo):
    """A page with its text (``read_page``)."""

    content: str = ""

    def as_dict(self) -> dict[str, object]:
        return {**PageInfo.as_dict(self), "content": self.content}


@dataclass(frozen=True, slots=True)
class WikiHit(Keyed):
    """A page found by ``search_wiki``: its best passage, cited."""

    path: str
    category: str
    title: str
    heading: str
    line_start: int
    line_end: int
    snippet: str
    score: float

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "slug": Path(self.path).stem, "category": self.category,
                "title": self.title, "heading": self.heading, "line_start": self.line_start,
                "line_end": self.line_end, "snippet": self.snippet,
                "score": round(self.score, 4)}


@dataclass(frozen=True, slots=True)
class WrittenPage(Keyed):
    """What ``write_page`` did: the page's path and whether it was new or changed."""

    path: str
    status: str  # created | updated | unchanged
    facts_added: int = 0
    facts_retracted: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "status": self.status, "facts_added": self.facts_added,
                "facts_retracted": self.facts_retracted}


def _same_title(a: str, b: str) -> bool:
    return (unicodedata.normalize("NFC", " ".join(a.split())).casefold()
            == unicodedata.normalize("NFC", " ".join(b.split())).casefold())


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, bool]:
    """(frontmatter mapping, body, whether there was a block). Malformed YAML is refused
    with its line: a page whose frontmatter cannot be read would lose its title."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, text, False
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            block = "\n".join(lines[1:i])
            try:
                data = yaml.safe_load(block) if block.strip() else {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                line = f" at line {mark.line + 2}" if mark is not None else ""
                raise InvalidQuery(f"the page's frontmatter is not valid YAML{line}: "
                                   f"{getattr(exc, 'problem', None) or exc}") from exc
            if not isinstance(data, dict):
                raise InvalidQuery("the page's frontmatter must be a mapping of keys")
            return data, "\n".join(lines[i + 1:]), True
    return {}, text, False


def _titles(meta: dict[str, Any]) -> list[str]:
    """The title and aliases a page's frontmatter gives it."""
    out = [str(meta["title"])] if meta.get("title") else []
    aliases = meta.get("aliases") or meta.get("alias") or []
    if isinstance(aliases, str):
        aliases = [aliases]
    return out + [str(a) for a in aliases if a]


def compose(content: str, title: str, summary: str) -> str:
    """The page's text: ``content`` with ``title`` and ``summary`` in its frontmatter.

    A title the content's frontmatter already gives is kept, and ``title`` added to its
    aliases, so ``read_page`` and links by either name find the page.
    """
    meta, body, had = split_frontmatter(content)
    out = dict(meta)
    if not out.get("title"):
        out = {"title": title, **out}
    elif not any(_same_title(t, title) for t in _titles(out)):
        aliases = out.get("aliases") or []
        out["aliases"] = [*([aliases] if isinstance(aliases, str) else aliases), title]
    if summary:
        out["summary"] = " ".join(summary.split())
    if had and out == meta:
        return content if content.endswith("\n") else content + "\n"
    head = yaml.safe_dump(out, allow_unicode=True, sort_keys=False, width=10**6)
    body = body.lstrip("\n")
    return f"---\n{head}---\n\n{body}" + ("" if body.endswith("\n") else "\n")


class Wiki:
    """The wiki folder of one vault, over one store (the facade holds one)."""

    def __init__(self, store: Store, finder: ScopedFinder, vault: Path, *, folder: str,
                 categories: Sequence[str], scope: str, actor: str,
                 patterns: tuple[str, ...], max_bytes: int, chunk_tokens: int) -> None:
        self.store, self.finder, self.vault = store, finder, vault
        self.folder = folder.strip("/") or "wiki"
        inside(vault, self.folder)  # a setting pointing outside the vault fails here
        self.categories = tuple(categories)
        self.scope, self.actor = scope, actor
        self.patterns, self.max_bytes, self.chunk_tokens = patterns, max_bytes, chunk_tokens

    # ------------------------------------------------------------ paths

    @property
    def root(self) -> Path:
        return self.vault / self.folder

    @property
    def index_path(self) -> str:
        return f"{self.folder}/index.md"

    @property
    def log_path(self) -> str:
        return f"{self.folder}/log.md"

    @property
    def generated(self) -> tuple[str, str]:
        """The vault paths knotwork alone writes: their links count for nothing."""
        return self.index_path, self.log_path

    def _lock(self) -> Path:
        return self.vault / ".knotwork" / "wiki.lock"

    def _candidates(self, category: str, title: str) -> Iterator[tuple[str, Path]]:
        base = slug(title)
        for n in range(1, _MAX_SUFFIX + 1):
            stem = base if n == 1 else f"{base}-{n}"
            rel = f"{category}/{stem}.md"
            yield f"{self.folder}/{rel}", inside(self.root, rel)

    def locate(self, category: str, title: str) -> tuple[str, Path, bool]:
        """The page of ``title`` in ``category``: (vault path, file, whether it exists).

        Its slug's file if that page has this title (or alias, or none); else the next free slug
        (``-2``, ``-3``…): two titles that fold to one slug get a file each.
        """
        check_category(category, self.categories)
        if not title or not title.strip():
            raise InvalidQuery("a page needs a title")
        for rel, full in self._candidates(category, title):
            if not full.exists():
                return rel, full, False
            names = _titles(self._meta(full))
            # a page with no title of its own (made by hand) is named by its file
            if not names or any(_same_title(t, title) for t in names):
                return rel, full, True
        raise InvalidQuery(f"{_MAX_SUFFIX} pages already have titles that fold to the"
                           f" file name of {title!r}: choose a more distinct title")

    def _meta(self, full: Path) -> dict[str, Any]:
        try:
            return split_frontmatter(full.read_text(encoding="utf-8"))[0]
        except (OSError, UnicodeDecodeError, InvalidQuery):
            return {}

    # ------------------------------------------------------------ write

    def write_page(self, category: str, title: str, content: str, *, summary: str = "",
                   actor: str | None = None) -> WrittenPage:
        """Write (or rewrite) a page, ingest it, list it in the index and log it, as
        ``actor`` (default the wiki's: a server names each request's writer)."""
        actor = actor or self.actor
        for name, value in (("title", title), ("content", content), ("summary", summary)):
            if "\x00" in value:
                raise UnsafePath(f"the page's {name} holds a NUL character", path=repr(title))
        if len(content.encode("utf-8")) > self.max_bytes:
            raise InvalidQuery(f"page content is over the {self.max_bytes}-byte limit")
        self._check_patterns()
        with files.locked(self._lock()):
            rel, full, existed = self.locate(category, title)
            text = compose(content, title, summary)
            meta = split_frontmatter(text)[0]
            old = full.read_text(encoding="utf-8") if existed else None
            changed = old != text
            if changed:
                st = files.write_atomic(full, text)
            else:
                st = full.stat()
            applied = self._ingest(rel, text.encode("utf-8"), st, changed=changed, actor=actor)
            if changed or applied is not None:
                self._index_put(files.IndexEntry(category, rel.removesuffix(".md"),
                                                 str(meta.get("title") or title),
                                                 str(meta.get("summary") or "")))
                files.append_log(self.vault / self.log_path, at=_now(), actor=actor,
                                 action="update" if existed else "create", path=rel,
                                 title=title)
        status = "unchanged" if not changed else "updated" if existed else "created"
        return WrittenPage(rel, status, applied.added if applied else 0,
                           applied.retracted if applied else 0)

    def _check_patterns(self) -> None:
        from ..ingest.sources import matches, read_ignore_file

        probe = f"{self.folder}/{self.categories[0] if self.categories else 'page'}/x.md"
        if not matches(probe, self.patterns) or matches(self.folder,
                                                        read_ignore_file(self.vault)):
            raise ConfigError(f"the wiki folder {self.folder!r} is not read as notes: the"
                              f" patterns ({', '.join(self.patterns)}) or .knotworkignore"
                              " leave it out", key="wiki_dir")

    def _ingest(self, rel: str, data: bytes, st: os.stat_result, *, changed: bool,
                actor: str) -> Applied | None:
        """Apply the page as the vault file ``rel``; None when the store had it already."""
        from ..ingest.parsers import parse
        from ..sync.files import refresh_mentions

        doc = parse(rel, data, max_bytes=self.max_bytes, chunk_tokens=self.chunk_tokens)
        if not isinstance(doc, ParsedDocument):
            raise InvalidQuery(f"{rel}: {doc.reason}")
        doc = replace(doc, size=st.st_size, mtime_ns=st.st_mtime_ns,
                      facts=tuple(replace(f, trust="asserted") if f.trust == "stated" else f
                                  for f in doc.facts))
        prepared = self.store.prepare(doc)
        with self.store.write(actor=actor) as w:
            out = w.apply(self.scope, prepared)
            if not isinstance(out, Applied) and changed:
                # a watcher read the new file first, as a person's: it is the agent's
                out = w.apply(self.scope, prepared, force=True)
        if not isinstance(out, Applied):
            return None
        refresh_mentions(self.store, self.finder, actor=actor,
                         documents=[out.document_id],
                         added=[(t, k, self.scope) for t, k in out.names_added],
                         removed=[(t, k, self.scope) for t, k in out.names_removed],
                         generations=bool(out.names_added or out.names_removed))
        return out

    # ------------------------------------------------------------ index

    def _index_put(self, entry: files.IndexEntry) -> None:
        """Put one page's line in the index (under the wiki lock, held by the caller)."""
        index = self.vault / self.index_path
        try:
            current = files.index_entries(index.read_text(encoding="utf-8"))
        except FileNotFoundError:
            current = []
        by_cat: dict[str, list[files.IndexEntry]] = {}
        for e in current:
            if e.link != entry.link:
                by_cat.setdefault(e.category, []).append(e)
        by_cat.setdefault(entry.category, []).append(entry)
        files.write_atomic(index, files.render_index(by_cat, self.categories))

    def rebuild_index(self) -> tuple[int, int] | None:
        """Write the index again from the pages on disk: (lines before, lines after).
        Lines of pages that are gone are dropped; pages missing from it are added. None
        when there was nothing to do: no wiki folder, or an index that is current."""
        if not self.root.is_dir():
            return None
        index = self.vault / self.index_path
        with files.locked(self._lock()):
            try:
                old = index.read_text(encoding="utf-8")
            except FileNotFoundError:
                old = ""
            by_cat: dict[str, list[files.IndexEntry]] = {}
            pages = self.list_pages()
            for p in pages:
                by_cat.setdefault(p.category, []).append(
                    files.IndexEntry(p.category, p.path.removesuffix(".md"), p.title,
                                     p.summary))
            text = files.render_index(by_cat, self.categories)
            if text == old:
                return None
            files.write_atomic(index, text)
            files.append_log(self.vault / self.log_path, at=_now(), actor=self.actor,
                             action="fix-index", path=self.index_path, title="index")
        return len(files.index_entries(old)), len(pages)

    def index_entries(self) -> list[files.IndexEntry]:
        try:
            return files.index_entries((self.vault / self.index_path).read_text("utf-8"))
        except FileNotFoundError:
            return []

    # ------------------------------------------------------------ read

    def read_page(self, category: str, title: str) -> Page:
        rel, full, exists = self.locate(category, title)
        if not exists:
            raise NotFound("page", f"{category}/{title}")
        text = full.read_text(encoding="utf-8")
        info = self._info(rel, category, full, text)
        return Page(info.path, info.category, info.title, info.summary, content=text)

    def _info(self, rel: str, category: str, full: Path, text: str | None = None
              ) -> PageInfo:
        try:
            meta = split_frontmatter(text if text is not None
                                     else full.read_text(encoding="utf-8"))[0]
        except (OSError, UnicodeDecodeError, InvalidQuery):
            meta = {}
        return PageInfo(rel, category, str(meta.get("title") or full.stem),
                        str(meta.get("summary") or ""))

    def list_pages(self, category: str | None = None) -> list[PageInfo]:
        """Every page of the wiki (or of one category), by category then path."""
        cats = self.categories if category is None else (
            check_category(category, self.categories),)
        out = []
        for cat in cats:
            folder = self.root / cat
            if not folder.is_dir():
                continue
            for full in sorted(folder.glob("*.md")):
                if full.is_file() and not full.name.startswith("."):
                    out.append(self._info(f"{self.folder}/{cat}/{full.name}", cat, full))
        return out

    def search_wiki(self, query: str, *, k: int = 10) -> list[WikiHit]:
        """The pages whose text best matches ``query`` (BM25), one hit per page: the
        seed's "check the wiki first" fast path."""
        from ..domain.words import query_terms
        from ..store import TextQuery

        if not query or not query.strip():
            raise InvalidQuery("query is empty")
        if k < 1:
            raise InvalidQuery(f"k must be 1 or more, got {k}")
        terms = query_terms(query)
        if not terms:
            return []
        reader = self.store.reader
        with self.store.snapshot():
            hits = reader.search_chunks_under(TextQuery(tuple(terms)), f"{self.folder}/",
                                              limit=k * 5, scopes=[self.scope],
                                              exclude_paths=self.generated)
            rows = reader.chunks([h.id for h in hits])
        out: dict[str, WikiHit] = {}
        for h in hits:
            row = rows.get(h.id)
            if row is None or row.path in out:
                continue
            out[row.path] = WikiHit(row.path, self.category_of(row.path) or "", row.title,
                                    row.heading_path, row.line_start, row.line_end,
                                    _snippet(row.text), h.score)
        return list(out.values())[:k]

    def get_log(self, last_n: int | None = 20) -> list[files.LogEntry]:
        if last_n is not None and last_n < 0:
            raise InvalidQuery(f"last_n must be 0 or more, got {last_n}")
        return files.read_log(self.vault / self.log_path, last_n)

    def category_of(self, path: str) -> str | None:
        """The category of a page at vault path ``path``; None if it is no page."""
        parts = path.split("/")
        head = self.folder.split("/")
        if parts[:len(head)] != head or len(parts) != len(head) + 2:
            return None
        return parts[len(head)] if parts[len(head)] in self.categories else None


def _snippet(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _now() -> str:
    return record_time(datetime.now(UTC))
