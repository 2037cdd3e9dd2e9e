"""The ``local`` source: this store's context pipeline (``Knotwork.context``).

``local`` reads every scope the caller may read; ``local:scope=a,b`` only those, and the
pipeline's filters are options too: ``local:scope=myapp__decisions&min_confidence=0.8``
(or, in a table, ``{source = "local", scope = ["a", "b"], min_confidence = 0.8}``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...errors import ConfigError
from ..model import Fetched
from .knowledge import items_from_context
from .registry import LocalQuery, SourceEnv, SourceSpec, parse_options

OPTIONS = ("scope", "min_confidence", "link_depth", "expand_links", "as_of", "valid_at",
           "trust")


@dataclass(frozen=True, slots=True)
class LocalSource:
    """This store, asked through ``run`` (the facade's context pipeline)."""

    name: str
    run: Callable[[str, LocalQuery], Mapping[str, Any]]
    query: LocalQuery

    @classmethod
    def from_spec(cls, spec: SourceSpec, env: SourceEnv) -> LocalSource:
        if env.local is None:
            raise ConfigError(f"source {spec.name!r}: no local store to read here", key="local")
        options: dict[str, Any] = {**parse_options(spec.target, source=spec.name),
                                   **spec.options}
        replace(spec, options=options).refuse_unknown(OPTIONS)
        try:
            q = LocalQuery(
                limit=0, budget=None, scopes=_names(options.get("scope")),
                min_confidence=float(options.get("min_confidence", 0.0)),
                link_depth=None if "link_depth" not in options else int(options["link_depth"]),
                expand_links=_flag(options.get("expand_links", True)),
                as_of=options.get("as_of"), valid_at=options.get("valid_at"),
                trusts=_names(options.get("trust")))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"source {spec.name!r}: {exc}") from exc
        return cls(spec.name, env.local, q)

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched:
        ctx = self.run(query, replace(self.query, limit=limit, budget=budget))
        return Fetched(tuple(items_from_context(ctx)))


def _names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(str(p).strip() for p in parts if str(p).strip())
    return names or None


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError(f"expand_links must be true or false, not {value!r}")
    return text in ("true", "1", "yes")
