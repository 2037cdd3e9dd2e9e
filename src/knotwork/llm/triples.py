"""The extraction prompt, its JSON schema, a tolerant parser and the grounding rule.

One call per chunk asks for at most ``MAX_TRIPLES`` triples as ``{"triples": [...]}``.
A server that honours ``response_format`` returns exactly that; one that does not (or a
small model that wraps it in prose or a code fence, or trails a comma) is read by
``parse_triples``, which takes the first JSON value it can find and keeps the items that
have the three fields. Then ``ground`` keeps a triple only when its subject and its
object occur in the chunk's own text (compared without case and with runs of blanks as
one), and counts every dropped triple by its reason: a model may only point at what the
note says. Pure functions: no store, no network.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_TRIPLES", "PROMPT_VERSION", "SCHEMA", "SYSTEM_PROMPT", "Grounded", "Triple",
           "ground", "messages", "parse_triples"]

#: Part of every cache key: a change of prompt or schema must send each chunk again.
PROMPT_VERSION = "1"
MAX_TRIPLES = 20
_MAX_FIELD = 120  # characters; a longer "entity" is a sentence, not a name

SYSTEM_PROMPT = (
    "You extract facts from one passage of a person's notes as (subject, predicate, object)"
    " triples.\n"
    "Rules:\n"
    "1. Use only what the passage states. Never add outside knowledge; omit rather than"
    " guess.\n"
    "2. subject and object must be copied exactly as they are written in the passage"
    " (names of people, services, hosts, projects, decisions, dates or values).\n"
    "3. predicate is a short relation in snake_case: depends_on, owned_by, runs_on,"
    " replaces, decided, uses, part_of, located_at, ...\n"
    "4. kind is \"entity\" when the object names a thing, \"value\" when it is a number, a"
    " date or another literal.\n"
    f"5. At most {MAX_TRIPLES} triples. No triple is better than a wrong one.\n"
    'Answer with JSON only: {"triples": [{"subject": "...", "predicate": "...",'
    ' "object": "...", "kind": "entity"}]}'
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"triples": {"type": "array", "maxItems": MAX_TRIPLES, "items": {
        "type": "object",
        "properties": {"subject": {"type": "string"}, "predicate": {"type": "string"},
                       "object": {"type": "string"},
                       "kind": {"type": "string", "enum": ["entity", "value"]}},
        "required": ["subject", "predicate", "object", "kind"],
        "additionalProperties": False}}},
    "required": ["triples"],
    "additionalProperties": False,
}


def messages(text: str) -> list[dict[str, str]]:
    """The chat messages for one chunk."""
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Passage:\n<<<\n{text}\n>>>"}]


@dataclass(frozen=True, slots=True)
class Triple:
    """One triple as the model gave it (cached as is; grounded on every use)."""

    subject: str
    predicate: str
    object: str
    kind: str = "entity"

    def as_dict(self) -> dict[str, str]:
        return {"subject": self.subject, "predicate": self.predicate, "object": self.object,
                "kind": self.kind}


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")


def parse_triples(content: str) -> tuple[list[Triple], Counter[str]] | None:
    """The triples of a reply and the reasons items were refused; None: no JSON found.

    Accepted shapes: ``{"triples": [...]}``, a bare list, one triple object; inside a code
    fence or after prose; with trailing commas. An item missing a field, or with one that
    is not text, is refused as ``schema``; past ``MAX_TRIPLES`` as ``over limit``.
    """
    value = _first_json(content)
    if value is None:
        return None
    if isinstance(value, dict) and "triples" in value:
        value = value["triples"]
    elif isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    dropped: Counter[str] = Counter()
    out: list[Triple] = []
    for item in value:
        triple = _triple(item)
        if triple is None:
            dropped["schema"] += 1
        elif len(out) >= MAX_TRIPLES:
            dropped["over limit"] += 1
        else:
            out.append(triple)
    return out, dropped


def _triple(item: object) -> Triple | None:
    if not isinstance(item, Mapping):
        return None
    fields = [item.get(k) for k in ("subject", "predicate", "object")]
    if not all(isinstance(f, str | int | float) and not isinstance(f, bool) for f in fields):
        return None
    kind = item.get("kind", "entity")
    s, p, o = (str(f).strip() for f in fields)
    return Triple(s, p, o, "value" if kind == "value" else "entity")


def _first_json(content: str) -> Any:
    """The first JSON object or array in ``content``, tolerating fences and prose."""
    candidates = [m.group(1) for m in _FENCE.finditer(content)] + [content]
    for text in candidates:
        text = text.strip()
        for start, ch in enumerate(text):
            if ch not in "[{":
                continue
            end = _matching(text, start)
            if end is None:
                continue
            piece = text[start:end + 1]
            for attempt in (piece, _TRAILING_COMMA.sub(r"\1", piece)):
                try:
                    return json.loads(attempt)
                except ValueError:
                    continue
    return None


def _matching(text: str, start: int) -> int | None:
    """The index of the bracket closing ``text[start]``, skipping strings."""
    depth, in_str, escape = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return i
    return None


@dataclass(frozen=True, slots=True)
class Grounded:
    """A triple that passed grounding, with the 0-based line of the chunk that holds it."""

    triple: Triple
    line: int  # index into the chunk's lines
    text: str  # that line, as the supporting text


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def ground(triples: list[Triple], chunk: str, *, dropped: Counter[str]) -> list[Grounded]:
    """The triples whose subject and object occur in ``chunk``, each cited by the first
    line holding both (else the subject's line); the rest counted in ``dropped``."""
    whole = _norm(chunk)
    lines = chunk.split("\n")
    normed = [_norm(line) for line in lines]
    out: list[Grounded] = []
    seen: set[tuple[str, str, str]] = set()
    for t in triples:
        s, o, p = _norm(t.subject), _norm(t.object), t.predicate.strip()
        if not s or not o or not p:
            dropped["empty field"] += 1
            continue
        if len(s) > _MAX_FIELD or len(o) > _MAX_FIELD or len(p) > 60:
            dropped["too long"] += 1
            continue
        if s not in whole:
            dropped["subject not in chunk"] += 1
            continue
        if o not in whole:
            dropped["object not in chunk"] += 1
            continue
        if s == o:
            dropped["subject is object"] += 1
            continue
        key = (s, p.casefold(), o)
        if key in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(key)
        both = next((i for i, n in enumerate(normed) if s in n and o in n), None)
        line = both if both is not None else next(
            (i for i, n in enumerate(normed) if s in n), 0)
        out.append(Grounded(t, line, lines[line].strip()))
    return out
