"""The assembly config: tiers of sources and a budget, from TOML (or the same as a dict).

```toml
[budget]
max_tokens = 6000          # 0: no limit
# encoding = "o200k_base"  # the tokenizer (default: the token_encoding setting)
# chars_per_token = 4      # count len/4 instead of tokenizing (the seed's estimate)
# allow_partial = false    # cut an item that does not fit at a sentence boundary
[defaults]                 # for tiers that do not say (these are the defaults' defaults)
top_k = 5
min_score = 0.3           # (default: none: every score is kept)
timeout = 5.0              # seconds, per source
[[tiers]]
name = "ground_truth"
priority = 1               # lower comes first; default: the tier's place in the file
sources = ["local:scope=myapp__project_decisions", {source = "http://…", timeout = 2}]
top_k = 8
pin = true                 # every item of the tier is kept whatever the budget
min_score = 0.3
```

Every mistake is a ``ConfigError`` naming the file, the line of the table at fault and
what is wrong (an unknown key lists the valid ones).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .model import Budget, Tier
from .sources import SourceEnv, open_source
from .sources.registry import parse_spec

TOP = ("budget", "defaults", "tiers")
BUDGET = ("max_tokens", "encoding", "chars_per_token", "allow_partial")
DEFAULTS = ("top_k", "min_score", "timeout")
TIER = ("name", "priority", "sources", "top_k", "min_score", "pin", "timeout")


@dataclass(frozen=True, slots=True)
class TierConfig:
    name: str
    priority: int
    sources: tuple[str | Mapping[str, Any], ...]
    top_k: int
    min_score: float | None
    pin: bool
    timeout: float


@dataclass(frozen=True, slots=True)
class AssembleConfig:
    """A checked config whose sources are not opened yet (``open_tiers`` opens them)."""

    tiers: tuple[TierConfig, ...]
    max_tokens: int | None = 6000
    encoding: str | None = None  # None: the caller's (the token_encoding setting)
    chars_per_token: float | None = None
    allow_partial: bool = False
    base_dir: Path = Path(".")
    origin: str = "<config>"

    def budget(self, *, encoding: str, max_tokens: int | None = None,
               allow_partial: bool | None = None) -> Budget:
        return Budget(self.max_tokens if max_tokens is None else (max_tokens or None),
                      self.encoding or encoding, self.chars_per_token,
                      self.allow_partial if allow_partial is None else allow_partial)

    def uses(self, kind: str) -> bool:
        return any(parse_spec(s).kind == kind for t in self.tiers for s in t.sources)

    def open_tiers(self, env: SourceEnv) -> list[Tier]:
        tiers = []
        for t in self.tiers:
            sources, timeouts = [], {}
            for entry in t.sources:
                source = open_source(entry, env)
                sources.append(source)
                if isinstance(entry, Mapping) and "timeout" in entry:
                    timeouts[source.name] = _seconds(entry["timeout"], self.origin,
                                                     f"tier {t.name!r}: source timeout")
            tiers.append(Tier(t.name, t.priority, tuple(sources), t.top_k, t.min_score, t.pin,
                              t.timeout, timeouts))
        return tiers


def default_config(*, max_tokens: int | None) -> AssembleConfig:
    """One tier, ``local``: this store alone."""
    return AssembleConfig((TierConfig("local", 1, ("local",), 8, None, False, 5.0),),
                          max_tokens=max_tokens, origin="<default>")


def load_config(path: str | Path) -> AssembleConfig:
    """Read and check the TOML file at ``path``."""
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read assembly config {p}: {exc.strerror or exc}",
                          key="config") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise ConfigError(f"{p}: {exc}", key="config") from exc
    return from_mapping(data, origin=str(p), text=text, base_dir=p.resolve().parent)


def from_mapping(data: Mapping[str, Any], *, origin: str = "<config>", text: str | None = None,
                 base_dir: Path | None = None) -> AssembleConfig:
    """Check a parsed config (the TOML's shape) and return it."""
    where = _Where(origin, text)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{origin}: the config is a table, not {type(data).__name__}")
    _known(data, TOP, where.at("", 0), "the config")
    budget = _table(data, "budget", where)
    defaults = _table(data, "defaults", where)
    _known(budget, BUDGET, where.at("budget", 0), "[budget]")
    _known(defaults, DEFAULTS, where.at("defaults", 0), "[defaults]")
    b = where.at("budget", 0)
    max_tokens = _int(budget.get("max_tokens", 6000), b, "max_tokens", low=0)
    cpt = budget.get("chars_per_token")
    if cpt is not None and (not _number(cpt) or cpt <= 0):
        raise ConfigError(f"{b}: chars_per_token must be a positive number, got {cpt!r}",
                          key="chars_per_token")
    encoding = budget.get("encoding")
    if encoding is not None and (not isinstance(encoding, str) or not encoding.strip()):
        raise ConfigError(f"{b}: encoding must name a tokenizer, got {encoding!r}",
                          key="encoding")
    d = where.at("defaults", 0)
    top_k = _int(defaults.get("top_k", 5), d, "top_k", low=1)
    min_score = _opt_float(defaults.get("min_score"), d, "min_score")
    timeout = _seconds(defaults.get("timeout", 5.0), d, "timeout")
    raw_tiers = data.get("tiers")
    if not isinstance(raw_tiers, list) or not raw_tiers:
        raise ConfigError(f"{origin}: no [[tiers]]: add at least one, e.g. [[tiers]] name ="
                          ' "notes", sources = ["local"]', key="tiers")
    tiers: list[TierConfig] = []
    for n, raw in enumerate(raw_tiers):
        at = where.at("tiers", n)
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{at}: a tier is a table ([[tiers]])", key="tiers")
        tiers.append(_tier(raw, n, at, top_k, min_score, timeout))
    names = [t.name for t in tiers]
    if dup := next((x for x in names if names.count(x) > 1), None):
        raise ConfigError(f"{origin}: two tiers are named {dup!r}", key="name")
    return AssembleConfig(tuple(tiers), max_tokens or None,
                          encoding.strip() if isinstance(encoding, str) else None,
                          float(cpt) if cpt is not None else None,
                          _bool(budget.get("allow_partial", False), b, "allow_partial"),
                          base_dir or Path.cwd(), origin)


def _tier(raw: Mapping[str, Any], n: int, at: str, top_k: int, min_score: float | None,
          timeout: float) -> TierConfig:
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        _known(raw, TIER, at, "a tier")
        raise ConfigError(f"{at}: the tier needs name = \"…\"", key="name")
    at = f"{at} (tier {name!r})"
    _known(raw, TIER, at, "a tier")
    sources = raw.get("sources")
    if isinstance(sources, str | Mapping):
        sources = [sources]
    if not isinstance(sources, list) or not sources:
        raise ConfigError(f"{at}: sources must list at least one source, e.g. [\"local\"]",
                          key="sources")
    for s in sources:
        if not isinstance(s, str | Mapping):
            raise ConfigError(f"{at}: a source is a string or a table, not {s!r}",
                              key="sources")
        try:
            parse_spec(s)
        except ConfigError as exc:
            raise ConfigError(f"{at}: {exc.message}", key=exc.key, hint=exc.hint) from exc
    return TierConfig(name.strip(), _int(raw.get("priority", n + 1), at, "priority"),
                      tuple(sources), _int(raw.get("top_k", top_k), at, "top_k", low=1),
                      _opt_float(raw.get("min_score", min_score), at, "min_score"),
                      _bool(raw.get("pin", False), at, "pin"),
                      _seconds(raw.get("timeout", timeout), at, "timeout"))


class _Where:
    """``file:line`` of a table, found in the TOML text (best effort: headers only)."""

    def __init__(self, origin: str, text: str | None) -> None:
        self.origin = origin
        self.lines = (text or "").splitlines()

    def at(self, table: str, n: int) -> str:
        if not table:
            return self.origin
        pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
        hits = [i + 1 for i, line in enumerate(self.lines) if pattern.match(line)]
        return f"{self.origin}:{hits[n]}" if n < len(hits) else f"{self.origin} [{table}]"


def _table(data: Mapping[str, Any], key: str, where: _Where) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where.at(key, 0)}: {key} is a table ([{key}])", key=key)
    return value


def _known(table: Mapping[str, Any], valid: Sequence[str], at: str, what: str) -> None:
    unknown = sorted(set(table) - set(valid))
    if unknown:
        raise ConfigError(f"{at}: {what} has unknown key(s) {', '.join(unknown)}",
                          key=unknown[0], hint="valid: " + ", ".join(valid))


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _int(v: Any, at: str, key: str, *, low: int | None = None) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or (low is not None and v < low):
        need = "an integer" if low is None else f"an integer ≥ {low}"
        raise ConfigError(f"{at}: {key} must be {need}, got {v!r}", key=key)
    return v


def _float(v: Any, at: str, key: str) -> float:
    if not _number(v):
        raise ConfigError(f"{at}: {key} must be a number, got {v!r}", key=key)
    return float(v)


def _opt_float(v: Any, at: str, key: str) -> float | None:
    return None if v is None else _float(v, at, key)


def _seconds(v: Any, at: str, key: str) -> float:
    if not _number(v) or v <= 0:
        raise ConfigError(f"{at}: {key} must be a positive number of seconds, got {v!r}",
                          key=key)
    return float(v)


def _bool(v: Any, at: str, key: str) -> bool:
    if not isinstance(v, bool):
        raise ConfigError(f"{at}: {key} must be true or false, got {v!r}", key=key)
    return v
