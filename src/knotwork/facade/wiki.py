"""The facade's room for the wiki agents write and lint (``knotwork.wiki``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import checks
from ..errors import InvalidQuery
from .base import Base, csv, one_state

if TYPE_CHECKING:
    from ..wiki.files import LogEntry
    from ..wiki.lint import Finding
    from ..wiki.pages import Page, PageInfo, Wiki, WikiHit, WrittenPage


class WikiRoom(Base):
    """The vault's wiki: pages, ``index.md`` and ``log.md``; lint without a model."""

    def wiki(self) -> Wiki:
        """The vault's wiki folder (``wiki_dir``): pages, ``index.md`` and ``log.md``."""
        if self._wiki is None:
            if self.vault is None:
                raise InvalidQuery("no vault: open Knotwork with a vault folder to use its wiki")
            from ..wiki.pages import Wiki

            s = self.settings
            self._wiki = Wiki(self.store, self._mentions, self.vault, folder=s.wiki_dir,
                              categories=csv(s.wiki_categories), scope=s.scope,
                              actor=self.actor, patterns=self.patterns(),
                              max_bytes=s.max_file_bytes, chunk_tokens=s.chunk_tokens)
        return self._wiki

    def write_page(self, category: str, title: str, content: str, *, summary: str = "",
                   actor: str | None = None) -> str:
        """Write a wiki page, ingested before this returns; its path in the vault.

        ``UnsafePath`` for a title or category that would leave the wiki folder."""
        written = self.write_wiki_page(category, title, content, summary=summary,
                                       actor=actor)
        return written.path

    def write_wiki_page(self, category: str, title: str, content: str, *, summary: str = "",
                        actor: str | None = None) -> WrittenPage:
        """``write_page`` with what it did: created, updated or unchanged, facts +/-."""
        out = self.wiki().write_page(category, title, content, summary=summary,
                                     actor=actor or self.actor)
        if out.status != "unchanged" and self.embedder() is not None:
            self.embed()  # as ``ingest_document`` does: semantic search sees it at once
        return out

    def read_page(self, category: str, title: str) -> Page:
        return self.wiki().read_page(category, title)

    def list_pages(self, category: str | None = None) -> list[PageInfo]:
        return self.wiki().list_pages(category)

    def search_wiki(self, query: str, *, k: int = 10) -> list[WikiHit]:
        return self.wiki().search_wiki(query, k=k)

    def get_log(self, last_n: int | None = 20) -> list[LogEntry]:
        return self.wiki().get_log(last_n)

    @one_state
    def lint(self, *, kinds: Sequence[str] | None = None,
             min_confidence: float | None = None) -> list[Finding]:
        """The vault's problems, found without a model (``knotwork.wiki.lint``).

        The wiki's own checks (citations, the index) read the vault this object was
        opened with, else the folder the scope last synced, if it is still there.
        """
        from ..wiki import lint as _lint

        bad = sorted(set(kinds or ()) - set(_lint.KINDS))
        if bad:
            raise InvalidQuery(f"unknown lint kind {bad[0]!r}: use {', '.join(_lint.KINDS)}")
        s = self.settings
        folder = s.wiki_dir.strip("/") or "wiki"
        opts = _lint.LintOptions(
            scope=s.scope, single_valued=csv(s.single_valued),
            min_confidence=checks.unit("min_confidence", s.min_confidence
                                       if min_confidence is None else min_confidence),
            kinds=tuple(kinds) if kinds else _lint.KINDS,
            generated=(f"{folder}/index.md", f"{folder}/log.md"))
        return _lint.lint(self.store.reader, self._lint_wiki(), opts)

    def _lint_wiki(self) -> Wiki | None:
        if self.vault is not None:
            return self.wiki()
        from ..domain.ids import root_key

        known = self.store.reader.meta(root_key(self.settings.scope))
        if not known or not Path(known).is_dir():
            return None
        from ..wiki.pages import Wiki

        s = self.settings
        return Wiki(self.store, self._mentions, Path(known), folder=s.wiki_dir,
                    categories=csv(s.wiki_categories), scope=s.scope, actor=self.actor,
                    patterns=self.patterns(), max_bytes=s.max_file_bytes,
                    chunk_tokens=s.chunk_tokens)

    def fix_wiki(self) -> list[str]:
        """Apply lint's safe fixes: write ``index.md`` again from the pages (dead lines
        dropped, missing pages listed). What was done, one line each."""
        done = self.wiki().rebuild_index()
        if done is None:
            return []
        return [f"rewrote {self.wiki().index_path}: {done[0]} lines before, {done[1]} after"]
