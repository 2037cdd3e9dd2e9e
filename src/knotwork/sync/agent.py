"""Agent-driven ingest: raw text plus the entities and relations an agent extracted.

The Mini Context Graph contract, done right: the raw text becomes a document version and
is chunked like any note; each entity and relation is linked to the span of the text that
supports it (exact match first, then case-insensitive, then the chunk with the best token
overlap); relations under the minimum confidence, or whose endpoints are neither among the
given entities nor already in the graph, are dropped and *reported*, never silently.
Nothing is invented: an entity exists only because the agent named it with its evidence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..domain.words import name_key
from ..errors import ConfigError, InvalidQuery
from ..ingest.lexicon import normalize_relation
from ..ingest.parsers import parse
from ..types import (
    SELF,
    ChunkDraft,
    FactDraft,
    Issue,
    LiteralValue,
    NameRef,
    ParsedDocument,
    Span,
)

EXTRACTOR = "agent"
_TOKEN = re.compile(r"\w+", re.UNICODE)
_DOC_ID = re.compile(r"^[\w.\-/ ]{1,200}$", re.UNICODE)

# Type names agents use for the same thing; extend with Settings/ontology at the facade.
TYPE_SYNONYMS: dict[str, str] = {
    "people": "person", "human": "person", "individual": "person",
    "org": "organization", "organisation": "organization", "company": "organization",
    "team": "team", "group": "team", "service": "service", "app": "application",
    "application": "application", "system": "system", "host": "host", "server": "host",
    "machine": "host", "bug": "issue", "problem": "issue", "incident": "incident",
    "concept": "concept", "idea": "concept", "project": "project", "tool": "tool",
    "library": "library", "place": "location", "location": "location",
}


@dataclass(frozen=True, slots=True)
class Dropped:
    kind: str  # entity | relation
    item: Mapping[str, Any]
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "item": dict(self.item), "reason": self.reason}


def load_ontology(path: str) -> dict[str, dict[str, str]]:
    """Read extra type and relation synonyms: ``{"types": {...}, "relations": {...}}``.

    JSON or YAML; keys are what agents send (normalised to snake case), values the names
    to store. An empty path means none.
    """
    if not path:
        return {}
    import json

    import yaml

    try:
        raw = Path(path).expanduser().read_text(encoding="utf-8")
        data = json.loads(raw) if path.endswith(".json") else yaml.safe_load(raw)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read ontology {path}: {exc}", key="ontology") from exc
    if not isinstance(data, dict) or not set(data) <= {"types", "relations"}:
        raise ConfigError(f"ontology {path} must map 'types' and/or 'relations' to tables",
                          key="ontology")
    out: dict[str, dict[str, str]] = {}
    for part in ("types", "relations"):
        table = data.get(part) or {}
        if not isinstance(table, dict):
            raise ConfigError(f"ontology {path}: '{part}' must be a mapping", key="ontology")
        out[part] = {"_".join(_TOKEN.findall(str(k).casefold())): str(v)
                     for k, v in table.items()}
    return out


def normalize_type(name: str, ontology: Mapping[str, str] | None = None) -> str:
    key = "_".join(_TOKEN.findall(name.casefold()))
    if ontology and key in ontology:
        return ontology[key]
    return TYPE_SYNONYMS.get(key, key or "thing")


def build_agent_document(
    doc_id: str, title: str, source: str, raw_content: str,
    entities: Sequence[Mapping[str, Any]], relations: Sequence[Mapping[str, Any]], *,
    min_confidence: float, known: Callable[[list[str]], set[str]],
    ontology: Mapping[str, str] | None = None, relation_ontology: Mapping[str, str] | None = None,
    chunk_tokens: int = 220,
) -> tuple[ParsedDocument, list[Dropped]]:
    """Turn an agent's payload into a document whose facts are ``asserted``."""
    if not _DOC_ID.match(doc_id or "") or ".." in doc_id.split("/"):
        raise InvalidQuery(f"doc_id {doc_id!r} must be 1-200 letters, digits, . - _ / or spaces")
    if not raw_content.strip():
        raise InvalidQuery("raw_content is empty")
    path = doc_id
    # an agent's text is a note, whatever its doc_id looks like
    parsed = parse(path, raw_content.encode("utf-8"), max_bytes=10_000_000,
                   chunk_tokens=chunk_tokens, type="note")
    if isinstance(parsed, Issue):
        raise InvalidQuery(f"raw_content cannot be ingested: {parsed.reason}")
    lines = raw_content.replace("\r\n", "\n").split("\n")
    locate = _Locator(lines, parsed.chunks)
    facts: list[FactDraft] = []
    dropped: list[Dropped] = []
    if source:
        facts.append(FactDraft(SELF, "source", LiteralValue(source), Span(1, 1), source,
                               EXTRACTOR, trust="asserted"))
    given: set[str] = set()
    for ent in entities:
        name = str(ent.get("name") or "").strip()
        if not name:
            dropped.append(Dropped("entity", ent, "entity has no name"))
            continue
        support = str(ent.get("supporting_text") or name)
        span = locate(support) or locate(name)
        if span is None:
            dropped.append(Dropped("entity", ent, "neither its supporting_text nor its name"
                                   " occurs in raw_content"))
            continue
        given.add(name_key(name))
        ref = NameRef.of(name)
        facts.append(FactDraft(SELF, "mentions", ref, span, support, EXTRACTOR, trust="asserted"))
        if ent.get("type"):
            facts.append(FactDraft(ref, "type", LiteralValue(normalize_type(str(ent["type"]),
                                                                            ontology)),
                                   span, support, EXTRACTOR, trust="asserted"))
    ends = [str(r.get(k) or "") for r in relations for k in ("source", "target")]
    existing = known([k for k in {name_key(e) for e in ends if e} if k not in given])
    for rel in relations:
        fact, why = _relation(rel, given | existing, locate, min_confidence, relation_ontology)
        if fact is None:
            dropped.append(Dropped("relation", rel, why))
        else:
            facts.append(fact)
    title = title.strip() or doc_id
    # What makes a re-send "unchanged": the text and what is asserted about it. By the
    # text's hash alone, a re-send dropping a relation or renaming the title was ignored.
    digest = hashlib.blake2b(parsed.content_hash.encode(), digest_size=16)
    for part in (title, *sorted(repr(f) for f in facts)):
        digest.update(b"\x1f" + part.encode())
    doc = replace(parsed, title=title, doc_type="document", facts=tuple(facts),
                  source_kind="api", issues=(), content_hash=digest.hexdigest())
    return doc, dropped


def _relation(rel: Mapping[str, Any], names: set[str], locate: _Locator, min_confidence: float,
              relation_ontology: Mapping[str, str] | None) -> tuple[FactDraft | None, str]:
    src, dst = str(rel.get("source") or "").strip(), str(rel.get("target") or "").strip()
    kind = str(rel.get("type") or "").strip()
    if not (src and dst and kind):
        return None, "relation needs source, target and type"
    try:
        conf = float(rel.get("confidence", 1.0))
    except (TypeError, ValueError):
        return None, f"confidence {rel.get('confidence')!r} is not a number"
    if not 0.0 <= conf <= 1.0:
        return None, f"confidence {conf} is outside 0..1"
    if conf < min_confidence:
        return None, f"confidence {conf:g} is below the minimum {min_confidence:g}"
    for end in (src, dst):
        if name_key(end) not in names:
            return None, f"unknown endpoint {end!r}: not among the document's entities" \
                         " nor in the graph"
    support = str(rel.get("supporting_text") or "")
    span = locate(support) if support else None
    if span is None:
        return None, "supporting_text is missing or does not occur in raw_content"
    pred = normalize_relation(kind)
    if relation_ontology:
        pred = relation_ontology.get(pred, pred)
    if not pred:
        return None, f"type {kind!r} holds no letter or digit to name a relation by"
    return FactDraft(NameRef.of(src), pred, NameRef.of(dst), span, support, EXTRACTOR,
                     confidence=conf, trust="asserted"), ""


class _Locator:
    """Find the line span of a supporting text: exact, case-insensitive, then best chunk."""

    def __init__(self, lines: list[str], chunks: Sequence[ChunkDraft]) -> None:
        self.text = "\n".join(lines)
        self.folded = self.text.casefold()
        self.chunks = chunks
        self.chunk_tokens = [set(_TOKEN.findall(c.text.casefold())) for c in chunks]

    def __call__(self, needle: str) -> Span | None:
        needle = needle.strip()
        if not needle:
            return None
        at = self.text.find(needle)
        if at < 0:
            at = self.folded.find(needle.casefold())
        if at >= 0:
            first = self.text.count("\n", 0, at) + 1
            return Span(first, first + needle.count("\n"))
        words = set(_TOKEN.findall(needle.casefold()))
        if not words or not self.chunks:
            return None
        best = max(range(len(self.chunks)), key=lambda i: len(words & self.chunk_tokens[i]))
        if len(words & self.chunk_tokens[best]) < max(1, len(words) // 2):
            return None
        return self.chunks[best].span
