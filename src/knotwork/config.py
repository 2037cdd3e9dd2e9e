"""Settings: every knob with its default and a help line, read once from ``KNOTWORK_*``.

Only the composition root (``core.Knotwork``) reads settings; lower layers take explicit
keyword arguments. ``tests/test_docs.py`` checks the README documents every setting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("db", ".knotwork/store.db", "Store location: a file path or sqlite:///path."),
    Setting("scope", "default", "Scope that ingested documents and asserted facts belong to."),
    Setting("actor", "", "Who writes, recorded on every event (default: cli:<user>)."),
    Setting("patterns", "**/*.md", "Globs of the vault files read as notes, comma-separated"
            " (`**/` spans folders; matched case-insensitively, relative to the vault)."),
    Setting("max_file_bytes", 5_000_000, "Files larger than this are refused with an error."),
    Setting("chunk_tokens", 220, "Approximate token cap of one chunk (chunks follow headings)."),
    Setting("workers", 0, "Worker processes that parse and write large ingests, 200 files or more"
            " (0 = one per core, 1 = everything in this process)."),
    Setting("synchronous", "FULL", "SQLite synchronous pragma: FULL makes every commit durable"
            " (a parallel ingest syncs its worker commits once, when they are done)."),
    Setting("max_entities", 20, "Default number of entities a context answer returns."),
    Setting("link_depth", 1, "Default hops of link expansion in context answers."),
    Setting("max_facts", 20, "Facts listed per entity in a context answer."),
    Setting("context_max_tokens", 6000,
            "Default token budget of a context answer as rendered (0 = no limit)."),
    Setting("min_confidence", 0.6, "Relations below this confidence are dropped on agent ingest."),
    Setting("token_encoding", "o200k_base", "Tokenizer used to count the tokens of answers."),
    Setting("debounce_ms", 500, "Watcher debounce: file events closer than this are merged."),
    Setting("embedder", "minilm",
            "Embedding model for semantic search: minilm (bundled, offline), openai:<model>,"
            " st:<model>, hash (tests only) or none."),
    Setting("fusion", "zscore", "How hybrid search fuses BM25 and vector ranks: zscore or rrf."),
    Setting("ann_threshold", 50_000,
            "Live chunk vectors past which vector search uses an HNSW index (0 = always exact)."),
    Setting("ontology", "", "JSON/YAML file of extra type and relation synonyms for agent ingest."),
)

_TYPES = {s.name: type(s.default) for s in SETTINGS}


@dataclass(frozen=True, slots=True)
class Settings:
    db: str = ".knotwork/store.db"
    scope: str = "default"
    actor: str = ""
    patterns: str = "**/*.md"
    max_file_bytes: int = 5_000_000
    chunk_tokens: int = 220
    workers: int = 0
    synchronous: str = "FULL"
    max_entities: int = 20
    link_depth: int = 1
    max_facts: int = 20
    context_max_tokens: int = 6000
    min_confidence: float = 0.6
    token_encoding: str = "o200k_base"
    debounce_ms: int = 500
    embedder: str = "minilm"
    fusion: str = "zscore"
    ann_threshold: int = 50_000
    ontology: str = ""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then ``KNOTWORK_<NAME>`` variables, then explicit overrides."""
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for s in SETTINGS:
            raw = env.get("KNOTWORK_" + s.name.upper())
            if raw is not None and raw != "":
                values[s.name] = _coerce(s.name, raw)
        for k, v in overrides.items():
            if k not in _TYPES:
                raise ConfigError(f"unknown setting {k!r}", key=k,
                                  hint="valid: " + ", ".join(sorted(_TYPES)))
            if v is not None:
                values[k] = v
        return replace(cls(), **values)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _coerce(name: str, raw: str) -> Any:
    kind = _TYPES[name]
    try:
        if kind is bool:
            return raw.lower() in ("1", "true", "yes", "on")
        return kind(raw)
    except ValueError as exc:
        raise ConfigError(f"KNOTWORK_{name.upper()}={raw!r} is not a valid {kind.__name__}",
                          key=name) from exc
