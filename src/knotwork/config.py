"""Settings: every knob with its default and a help line, read once from ``KNOTWORK_*``.

Only the composition root (``core.Knotwork``) reads settings; lower layers take explicit
keyword arguments. ``tests/test_docs.py`` checks the README documents every setting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting as the README and ``--help`` describe it (derived from ``Settings``)."""

    name: str
    default: Any
    help: str


def _setting(default: Any, help: str) -> Any:
    """A field of ``Settings``: its default and its help line, declared together."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting, declared once: name, type, default and help (``SETTINGS`` lists them)."""

    db: str = _setting(".knotwork/store.db", "Store location: a file path or sqlite:///path.")
    scope: str = _setting("default", "Scope that ingested documents and asserted facts belong"
                          " to.")
    actor: str = _setting("", "Who writes, recorded on every event (default: cli:<user>;"
                          " a server's requests record their own).")
    patterns: str = _setting("**/*.md", "Globs of the vault files read as notes, comma-separated"
                             " (`**/` spans folders; matched case-insensitively, relative to"
                             " the vault).")
    dialect: str = _setting("auto", "How the vault's notes spell links and names: auto (found"
                            " by dendron.yml, logseq/config.edn, .foam, .obsidian at the"
                            " vault's root), markdown, obsidian, foam, dendron or logseq.")
    max_file_bytes: int = _setting(5_000_000, "Files larger than this are refused with an"
                                   " error.")
    chunk_tokens: int = _setting(220, "Approximate token cap of one chunk (chunks follow"
                                 " headings).")
    workers: int = _setting(0, "Worker processes that parse and write large ingests, 200 files"
                            " or more, and run the model when 256 chunks or more wait for"
                            " a vector (0 = one per CPU this process may use, a container's"
                            " or taskset's, not the host's; 1 = everything in this process).")
    synchronous: str = _setting("FULL", "SQLite synchronous pragma: FULL makes every commit"
                                " durable (a parallel ingest syncs its worker commits once,"
                                " when they are done).")
    max_entities: int = _setting(20, "Default number of entities a context answer returns.")
    link_depth: int = _setting(1, "Default hops of link expansion in context answers.")
    max_facts: int = _setting(20, "Facts listed per entity in a context answer.")
    context_max_tokens: int = _setting(6000, "Default token budget of a context answer as"
                                       " rendered (0 = no limit).")
    min_confidence: float = _setting(0.6, "Relations below this confidence are dropped on"
                                     " agent ingest.")
    token_encoding: str = _setting("o200k_base", "Tokenizer used to count the tokens of"
                                   " answers.")
    debounce_ms: int = _setting(500, "Watcher debounce: file events closer than this are"
                                " merged.")
    embedder: str = _setting("auto", "Embedding model for semantic search: auto (the model"
                             " a store's vectors were made with; minilm-q8 for a new store),"
                             " minilm-q8 (bundled MiniLM, int8 arithmetic, offline), minilm"
                             " (bundled MiniLM as shipped: slower), minilm-static (distilled:"
                             " fastest, weaker), openai:<model>, st:<model>, hash (tests"
                             " only) or none.")
    fusion: str = _setting("adaptive", "How hybrid search fuses BM25 and vector ranks:"
                           " adaptive (BM25 weighed by the store's size, agreement), zscore"
                           " (fixed weights) or rrf. context always fuses adaptively.")
    ann_threshold: int = _setting(50_000, "Live chunk vectors past which vector search uses an"
                                  " HNSW index (0 = always exact).")
    assemble_config: str = _setting("", "TOML file of the tiers and budget `assemble` uses"
                                    " when given none (default: one tier, this store).")
    ontology: str = _setting("", "JSON/YAML file of extra type and relation synonyms for agent"
                             " ingest.")
    wiki_dir: str = _setting("wiki", "Folder of the vault that agent-written wiki pages,"
                             " index.md and log.md live in.")
    wiki_categories: str = _setting("summary,entity,topic", "Categories of wiki pages, each"
                                    " a subfolder of wiki_dir, comma-separated.")
    single_valued: str = _setting("status,owner,runs_on,date,role", "Predicates lint treats"
                                  " as single-valued: two live values for one subject are a"
                                  " contradiction, comma-separated.")
    llm_url: str = _setting("", "OpenAI-compatible API of the model that `extract` and `ask`"
                            " use, e.g. http://localhost:11434/v1 (none: no model is ever"
                            " called). The key, if any: env KNOTWORK_LLM_API_KEY.")
    llm_model: str = _setting("", "Model name sent to llm_url, e.g. qwen2.5:7b-instruct.")
    llm_timeout: float = _setting(120.0, "Seconds one model request may take before it is"
                                  " retried.")
    llm_retries: int = _setting(4, "Retries of a model request on 429, 5xx or a time-out, with"
                                " exponential backoff.")
    llm_concurrency: int = _setting(4, "Model requests in flight at once.")
    llm_max_tokens: int = _setting(1024, "Completion cap of one model request (part of what a"
                                   " budget reserves per call).")
    llm_cache: str = _setting("", "File of cached extraction answers (default: beside the"
                              " store, store.llm-cache.db).")

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


#: Every setting with its default and help, in declaration order (the README documents each).
SETTINGS: tuple[Setting, ...] = tuple(Setting(f.name, f.default, f.metadata["help"])
                                      for f in fields(Settings))
_TYPES = {s.name: type(s.default) for s in SETTINGS}


def _coerce(name: str, raw: str) -> Any:
    kind = _TYPES[name]
    try:
        if kind is bool:
            return raw.lower() in ("1", "true", "yes", "on")
        return kind(raw)
    except ValueError as exc:
        raise ConfigError(f"KNOTWORK_{name.upper()}={raw!r} is not a valid {kind.__name__}",
                          key=name) from exc
