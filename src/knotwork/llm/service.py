"""What the facade's ``extract`` and ``ask`` do with a configured model, in one place.

``Knotwork`` opens the client and the cache here (``open_client``, ``cache_path``) and
delegates; nothing here reads settings or the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..store import StoreReader
from .answer import Answer, ask_messages, is_refusal, verify
from .client import ChatClient

__all__ = ["answer", "cache_path", "document_texts"]


def cache_path(store_path: str, setting: str = "") -> str:
    """The extraction cache file: ``setting``, else beside a file store
    (``store.db`` → ``store.llm-cache.db``), else in memory."""
    if setting:
        return str(Path(setting).expanduser())
    if not store_path or store_path == ":memory:" or "://" in store_path:
        return ":memory:"
    p = Path(store_path)
    return str(p.with_name(p.stem + ".llm-cache.db"))


def document_texts(reader: StoreReader, scopes: Sequence[str]
                   ) -> Callable[[list[str]], Mapping[str, str]]:
    """The current text of each live document of ``scopes`` by path (first scope wins)."""

    def texts(paths: list[str]) -> Mapping[str, str]:
        out: dict[str, str] = {}
        for scope in scopes:
            missing = [p for p in paths if p not in out]
            if missing:
                out.update({p: t for p, t in reader.document_texts(scope, missing).items()
                            if p not in out})
        return out

    return texts


def answer(client: ChatClient | None, question: str, context: str, *, empty: bool,
           context_tokens: int, texts: Callable[[list[str]], Mapping[str, str]],
           max_tokens: int | None = None) -> Answer:
    """Ask the model ``question`` over ``context`` and check the answer's citations; an
    ``empty`` context is refused without a call (``client`` may then be None)."""
    from .answer import REFUSAL

    if empty or client is None:
        return Answer(question, REFUSAL, True, (), None, context_tokens, 0, 0)
    result = client.chat(ask_messages(question, context), max_tokens=max_tokens)
    text = result.content.strip()
    refused = is_refusal(text)
    citations = () if refused else tuple(verify(text, texts))
    return Answer(question, text, refused, citations, client.config.model, context_tokens,
                  result.prompt_tokens, result.completion_tokens)
