"""The ``qdrant`` source: nearest neighbours of the query in a Qdrant collection.

``qdrant:PATH#COLLECTION`` opens an embedded Qdrant in a folder (no server; the path is
relative to the config file); ``qdrant:http://host:6333#COLLECTION`` a server. Options,
after ``?`` or in a table: ``embedder`` (the query's embedder spec, as the ``embedder``
setting: ``minilm``, ``hash``, …; default that setting), ``content_field`` (the payload
key holding the text; default the first of content, text, page_content, document),
``source_field`` (the payload key citing it; default source, then path; else
``qdrant:COLLECTION/ID``), ``vector`` (a named vector) and ``api_key_env``.

Needs ``qdrant-client`` (``pip install 'knotwork[qdrant]'``). An embedded folder admits
one client per process, so clients are opened once and shared.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...embed import Embedder
from ...errors import ConfigError
from ..model import Fetched, Item
from .registry import SourceEnv, SourceSpec, parse_options

OPTIONS = ("embedder", "content_field", "source_field", "vector", "api_key_env")
CONTENT_FIELDS = ("content", "text", "page_content", "document")
SOURCE_FIELDS = ("source", "path")

_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def client_for(location: str, api_key: str | None = None) -> Any:
    """The process's client for ``location`` (a folder or a URL), opened on first use."""
    with _clients_lock:
        client = _clients.get(location)
        if client is None:
            try:
                from qdrant_client import QdrantClient
            except ImportError as exc:
                raise ConfigError("the qdrant source needs qdrant-client",
                                  hint="pip install 'knotwork[qdrant]'") from exc
            if location.startswith(("http://", "https://")):
                client = QdrantClient(url=location, api_key=api_key)
            else:
                client = QdrantClient(path=location)
            if not _clients:
                # closed before the interpreter tears modules down: the client's own
                # __del__ then fails, printing a traceback at the end of every CLI call
                atexit.register(close_clients, wait=0.5)
            _clients[location] = client
        return client


def close_clients(*, wait: float = -1) -> None:
    """Close every shared client (an embedded folder is then free for another process).

    ``wait``: seconds to wait for a client being opened (-1: as long as it takes); at
    exit a source still opening its folder past its timeout must not hold the process."""
    if not _clients_lock.acquire(timeout=wait):
        return
    try:
        for client in _clients.values():
            client.close()
        _clients.clear()
    finally:
        _clients_lock.release()


@dataclass(frozen=True, slots=True)
class QdrantSource:
    name: str
    location: str
    collection: str
    embed: Callable[[], Embedder]
    content_field: str | None = None
    source_field: str | None = None
    vector: str | None = None
    api_key_env: str | None = None

    @classmethod
    def from_spec(cls, spec: SourceSpec, env: SourceEnv) -> QdrantSource:
        target, _, collection = spec.target.partition("#")
        collection, _, query = collection.partition("?")
        if "?" in target:
            target, _, query = target.partition("?")
        options: dict[str, Any] = {**parse_options(query, source=spec.name), **spec.options}
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ConfigError(f"source {spec.name!r}: unknown option(s) {', '.join(unknown)}",
                              key=unknown[0], hint="valid: " + ", ".join(OPTIONS))
        if not target.strip() or not collection.strip():
            raise ConfigError(f"source {spec.name!r}: write qdrant:PATH#COLLECTION or"
                              " qdrant:http://HOST:PORT#COLLECTION", key="source")
        location = target.strip()
        if not location.startswith(("http://", "https://")):
            location = str((env.base_dir / location).resolve())
        opener = env.embedder
        if opener is None:
            raise ConfigError(f"source {spec.name!r}: no embedder to encode the query")
        embedder_spec = str(options.get("embedder") or env.default_embedder)
        if embedder_spec == "none":
            raise ConfigError(f"source {spec.name!r} needs an embedder (the embedder setting"
                              " is none)", key="embedder", hint="add ?embedder=minilm")
        return cls(spec.name, location, collection.strip(), lambda: opener(embedder_spec),
                   options.get("content_field"), options.get("source_field"),
                   options.get("vector"), options.get("api_key_env"))

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        remote = self.location.startswith(("http://", "https://"))
        if not remote and not os.path.isdir(self.location):
            # opening a folder that is not there would create an empty one
            return Fetched(error=f"no Qdrant folder at {self.location}")
        client = client_for(self.location, key)
        if not client.collection_exists(self.collection):
            return Fetched(error=f"no collection {self.collection!r} at {self.location}")
        embedder = self.embed()
        size = _size(client.get_collection(self.collection).config.params.vectors, self.vector)
        if size is not None and size != embedder.dim:
            return Fetched(error=f"collection {self.collection!r} holds {size}-dim vectors;"
                                 f" embedder {embedder.name!r} makes {embedder.dim}: name the"
                                 " model that filled it with ?embedder=")
        vector = [float(x) for x in embedder.embed([query])[0]]
        hits = client.query_points(self.collection, query=vector, using=self.vector,
                                   limit=limit, with_payload=True).points
        out = []
        for hit in hits:
            payload = hit.payload or {}
            text = _first(payload, (self.content_field,) if self.content_field
                          else CONTENT_FIELDS)
            if text is None:
                continue  # a point without text has nothing to put in a prompt
            cite = _first(payload, (self.source_field,) if self.source_field
                          else SOURCE_FIELDS)
            out.append(Item(text, cite or f"qdrant:{self.collection}/{hit.id}",
                            float(hit.score)))
        return Fetched(tuple(out))


def _size(vectors: Any, name: str | None) -> int | None:
    """The dimension of the collection's vector ``name`` (None: its only one)."""
    if isinstance(vectors, dict):
        vectors = vectors.get(name or "")
    size = getattr(vectors, "size", None)
    return size if isinstance(size, int) else None


def _first(payload: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        v = payload.get(k)
        if isinstance(v, str) and v.strip():
            return v
    return None
