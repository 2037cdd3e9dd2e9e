"""The ``memory`` source: a fixed list of items, for tests, demos and standing notes.

In a config, a table with ``items`` (``{source = "memory", items = [{content = "…",
score = 0.9, pinned = true}]}``) or ``memory:FILE.json`` (a JSON list of such objects,
relative to the config file). An item is returned when it shares a word with the query,
best score first; ``match = "all"`` returns every item whatever the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigError
from ..model import Fetched, Item
from .registry import SourceEnv, SourceSpec

OPTIONS = ("items", "match")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class MemorySource:
    name: str
    items: tuple[Item, ...]
    match: str = "any"

    @classmethod
    def from_spec(cls, spec: SourceSpec, env: SourceEnv) -> MemorySource:
        spec.refuse_unknown(OPTIONS)
        raw: Any = spec.options.get("items")
        if spec.target:
            if raw is not None:
                raise ConfigError(f"source {spec.name!r}: give items or a file, not both")
            path = env.base_dir / spec.target
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"source {spec.name!r}: cannot read {path}: {exc}") from exc
        match = spec.options.get("match", "any")
        if match not in ("any", "all"):
            raise ConfigError(f"source {spec.name!r}: match is 'any' or 'all', not {match!r}",
                              key="match")
        return cls(spec.name, tuple(items_from(raw or [], spec.name)), match)

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched:
        words = {w.casefold() for w in _WORD.findall(query)}
        found = [i for i in self.items if self.match == "all"
                 or words & {w.casefold() for w in _WORD.findall(i.content)}]
        found.sort(key=lambda i: -i.score)
        return Fetched(tuple(found[:limit]))


def items_from(raw: Any, name: str) -> list[Item]:
    """``raw``, a list of ``{content, source?, score?, pinned?}``, as items."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ConfigError(f"source {name!r}: items is a list of tables", key="items")
    out = []
    for n, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("content"), str):
            raise ConfigError(f"source {name!r}: item {n + 1} needs content = \"…\" (text)",
                              key="items")
        unknown = sorted(set(entry) - {"content", "source", "score", "pinned"})
        if unknown:
            raise ConfigError(f"source {name!r}: item {n + 1} has unknown key(s) "
                              f"{', '.join(unknown)}", key=unknown[0],
                              hint="valid: content, source, score, pinned")
        try:
            score = float(entry.get("score", 1.0))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"source {name!r}: item {n + 1}: score is a number") from exc
        out.append(Item(entry["content"], str(entry.get("source") or f"{name}#{n + 1}"),
                        score, pinned=bool(entry.get("pinned", False))))
    return out
