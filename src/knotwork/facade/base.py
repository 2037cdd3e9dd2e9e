"""What every room of the facade shares, and the decorator of its reads.

``Base`` declares the state ``core.Knotwork`` sets up (store, settings, vault, actor) and,
for the type checker only, the few facade methods a room calls; ``Knotwork`` defines them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from ..config import Settings
from ..store import Store

if TYPE_CHECKING:
    from ..embed import Embedder
    from ..ingest.mentions import ScopedFinder
    from ..llm import ChatClient
    from ..results import Embedded
    from ..sync import files as _sync
    from ..types import KnowledgeContext, SyncReport
    from ..wiki.pages import Wiki

__all__ = ["Base", "csv", "one_state"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_F = TypeVar("_F", bound="Base")


def one_state(method: Callable[Concatenate[_F, _P], _R]) -> Callable[Concatenate[_F, _P], _R]:
    """Run a read method inside ``Store.snapshot``: every read it makes sees one state."""

    def run(self: _F, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.store.snapshot():
            return method(self, *args, **kwargs)

    functools.update_wrapper(run, method)  # not ``wraps``: its _Wrapped type loses _P
    return run


def csv(text: str) -> tuple[str, ...]:
    """A comma-separated setting's items."""
    return tuple(p.strip() for p in text.split(",") if p.strip())


class Base:
    """The state every room reads (set by ``core.Knotwork.__init__``)."""

    store: Store
    settings: Settings
    vault: Path | None
    actor: str
    _wiki: Wiki | None
    _llm: ChatClient | None

    if TYPE_CHECKING:  # defined by ``core.Knotwork``
        @property
        def _mentions(self) -> ScopedFinder: ...

        def embedder(self) -> Embedder | None: ...

        def embed(self, *, progress: _sync.Progress | None = None, batch: int = 64,
                  window: int = 1024) -> Embedded: ...

        def patterns(self, given: Sequence[str] | None = None) -> tuple[str, ...]: ...

        def ingest(self, path: str | os.PathLike[str] | None = None, *,
                   scope: str | None = None) -> SyncReport: ...

        def context(self, query: str, *, max_tokens: int | None = None,
                    scopes: Sequence[str] | None = None, fmt: str = "json"
                    ) -> KnowledgeContext: ...

        def render(self, ctx: KnowledgeContext, fmt: str = "markdown") -> str: ...

        def resolve(self, ref: str) -> int: ...

        def _resolve_in(self, ref: str, scopes: Sequence[str] | None) -> int: ...
