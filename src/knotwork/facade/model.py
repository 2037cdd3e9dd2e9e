"""The facade's room for a model, when one is configured: extraction and cited answers
(``knotwork.llm``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..retrieve import token_counter
from .base import Base

if TYPE_CHECKING:
    from ..llm import Answer, ChatClient, ExtractReport
    from ..sync import files as _sync


class ModelRoom(Base):
    """A configured chat model: facts extracted from the notes, answers that cite them."""

    def llm_configured(self) -> bool:
        """Whether a model is configured (``llm_url`` and ``llm_model``): else none is called."""
        return bool(self.settings.llm_url and self.settings.llm_model)

    def llm(self) -> ChatClient:
        """The configured chat client, opened on first use; ``ConfigError`` without one."""
        if self._llm is None:
            from ..llm import ChatClient, LLMConfig

            s = self.settings
            self._llm = ChatClient(LLMConfig(
                url=s.llm_url, model=s.llm_model,
                api_key=os.environ.get("KNOTWORK_LLM_API_KEY") or None, timeout=s.llm_timeout,
                retries=s.llm_retries, concurrency=s.llm_concurrency,
                max_tokens=s.llm_max_tokens), estimate=token_counter(s.token_encoding))
        return self._llm

    def extract(self, path: str | os.PathLike[str] | None = None, *, budget: int | None = None,
                scope: str | None = None, ingest: bool = True,
                progress: _sync.Progress | None = None, actor: str | None = None
                ) -> ExtractReport:
        """Extract facts with the model from the notes of ``path`` (a folder or one note;
        default the whole scope), synced first unless ``ingest`` is False; at most
        ``budget`` tokens (``llm.extract``). Facts arrive ``extracted`` and unreviewed."""
        from ..llm import service
        from ..llm.cache import ExtractionCache
        from ..llm.extract import run_extraction

        client, s, scope = self.llm(), self.settings, scope or self.settings.scope
        prefix = ""
        if path is not None:
            if ingest:
                self.ingest(path, scope=scope)
            from ..sync import vault as _vault

            _, only = _vault.sync_target(self.store.reader, Path(path).expanduser(), None,
                                         scope=scope, patterns=self.patterns(), vault=self.vault)
            prefix = only[0] if only else ""
        cache = ExtractionCache(service.cache_path(self.store.path, s.llm_cache))
        try:
            return run_extraction(self.store, client, cache, scope=scope,
                                  actor=actor or self.actor,
                                  prefix=prefix, budget=budget, progress=progress,
                                  count_tokens=token_counter(s.token_encoding))
        finally:
            cache.close()

    def ask(self, question: str, *, max_tokens: int = 3000, answer_tokens: int | None = None,
            scopes: Sequence[str] | None = None) -> Answer:
        """Answer ``question`` from the notes only, citing ``[path:line]``, or refuse
        (``llm.REFUSAL``); the context is ``context(question)`` cut to ``max_tokens``, and
        every citation is checked against the store (``Answer.citations``)."""
        from ..llm import service

        client = self.llm()
        ctx = self.context(question, max_tokens=max_tokens, scopes=scopes, fmt="markdown")
        return service.answer(
            client, question, self.render(ctx, "markdown"),
            empty=not ctx.entities and not ctx.evidence, context_tokens=ctx.summary.tokens,
            texts=service.document_texts(self.store.reader, scopes or [self.settings.scope]),
            max_tokens=answer_tokens)
