"""Build a ``ContextSource`` from the spec a config names it by.

A spec is a string, ``KIND[:TARGET]`` (``local``, ``local:scope=a,b``,
``qdrant:./qdrant-data#archive``, ``memory:items.json``), or an ``http://``/``https://``
URL (another knotwork server); or a table with the string as ``source`` and the kind's
options beside it: ``{source = "http://10.0.0.5:3030", token_env = "KW_TOKEN",
timeout = 2}``. Kinds come from this module's table, then from the entry-point group
``knotwork.sources``; an unknown kind or option is a ``ConfigError`` naming the valid ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from ...embed import Embedder
from ...errors import ConfigError
from ..model import ContextSource

ENTRY_POINT_GROUP = "knotwork.sources"


@dataclass(frozen=True, slots=True)
class LocalQuery:
    """What the ``local`` source asks this store's context pipeline."""

    limit: int
    budget: int | None
    scopes: tuple[str, ...] | None = None
    min_confidence: float = 0.0
    link_depth: int | None = None
    expand_links: bool = True
    as_of: str | None = None
    valid_at: str | None = None
    trusts: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class SourceEnv:
    """What sources may use, given by the composition root: this store's context pipeline
    (``local``, returning the KnowledgeContext's JSON shape), an embedder by spec, the
    default embedder, and the folder relative paths start from (the config file's)."""

    local: Callable[[str, LocalQuery], Mapping[str, Any]] | None = None
    embedder: Callable[[str], Embedder] | None = None
    default_embedder: str = "minilm"
    base_dir: Path = field(default_factory=Path.cwd)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A parsed spec: the kind, what follows its colon, the table's other options and the
    name errors use (the spec as written)."""

    kind: str
    target: str
    options: Mapping[str, Any]
    name: str

    def refuse_unknown(self, valid: Sequence[str]) -> None:
        unknown = sorted(set(self.options) - set(valid))
        if unknown:
            raise ConfigError(f"source {self.name!r}: unknown option(s) {', '.join(unknown)}",
                              key=unknown[0], hint="valid: " + (", ".join(valid) or "none"))


Factory = Callable[[SourceSpec, SourceEnv], ContextSource]


def _local(spec: SourceSpec, env: SourceEnv) -> ContextSource:
    from .local import LocalSource

    return LocalSource.from_spec(spec, env)


def _http(spec: SourceSpec, env: SourceEnv) -> ContextSource:
    from .http import HttpSource

    return HttpSource.from_spec(spec, env)


def _qdrant(spec: SourceSpec, env: SourceEnv) -> ContextSource:
    from .qdrant import QdrantSource

    return QdrantSource.from_spec(spec, env)


def _memory(spec: SourceSpec, env: SourceEnv) -> ContextSource:
    from .memory import MemorySource

    return MemorySource.from_spec(spec, env)


BUILTIN: dict[str, Factory] = {"local": _local, "http": _http, "https": _http,
                               "qdrant": _qdrant, "memory": _memory}


def _plugins() -> dict[str, Factory]:
    found: dict[str, Factory] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, _deferred(ep.name, ep.load))
    return found


def _deferred(name: str, load: Callable[[], Any]) -> Factory:
    """A factory that imports its entry point when first used, and says which one broke."""

    def build(spec: SourceSpec, env: SourceEnv) -> ContextSource:
        try:
            factory = load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin: a clear config error
            raise ConfigError(f"source kind {name!r} ({ENTRY_POINT_GROUP} entry point) failed"
                              f" to load: {type(exc).__name__}: {exc}", key=name) from exc
        source = factory(spec, env)
        if not isinstance(source, ContextSource):
            raise ConfigError(f"source kind {name!r} built {type(source).__name__}, which has"
                              " no name and fetch(query, *, limit, budget)", key=name)
        return source

    return build


def kinds() -> list[str]:
    """Every kind a spec may name: the built-in ones, then the installed plugins'."""
    return [*BUILTIN, *(k for k in _plugins() if k not in BUILTIN)]


def parse_spec(entry: str | Mapping[str, Any]) -> SourceSpec:
    """A config's source entry (string or table) as a ``SourceSpec``."""
    if isinstance(entry, Mapping):
        options = {k: v for k, v in entry.items() if k not in ("source", "timeout")}
        raw = entry.get("source")
        if not isinstance(raw, str) or not raw.strip():
            raise ConfigError("a source table needs source = \"KIND[:TARGET]\" (a string)",
                              key="source")
    elif isinstance(entry, str):
        raw, options = entry, {}
    else:
        raise ConfigError(f"a source is a string or a table, not {type(entry).__name__}",
                          key="sources")
    raw = raw.strip()
    kind, sep, target = raw.partition(":")
    kind = kind.strip().lower()
    if kind in ("http", "https") and sep:
        target = raw  # the URL is the target, scheme and all
    return SourceSpec(kind, target.strip(), options, raw)


def open_source(entry: str | Mapping[str, Any], env: SourceEnv) -> ContextSource:
    """The source a config entry names, ready to ``fetch``."""
    spec = parse_spec(entry)
    factory = BUILTIN.get(spec.kind) or _plugins().get(spec.kind)
    if factory is None:
        raise ConfigError(f"unknown source kind {spec.kind!r} in {spec.name!r}", key=spec.kind,
                          hint="valid: " + ", ".join(kinds()))
    return factory(spec, env)


def parse_options(text: str, *, source: str) -> dict[str, str]:
    """``k=v&k=v`` (or ``;``-separated) as a dict; a part without ``=`` is an error."""
    out: dict[str, str] = {}
    for part in text.replace(";", "&").split("&"):
        if not part.strip():
            continue
        if "=" not in part:
            raise ConfigError(f"source {source!r}: {part!r} is not KEY=VALUE", key=part)
        k, v = next(iter(parse_qsl(part, keep_blank_values=True)))
        out[k.strip()] = v.strip()
    return out
