"""The checks of the facade's arguments: each returns the value as used, or raises.

``InvalidQuery`` for a query's options (counts, budgets, dates), ``ConfigError`` for note
patterns; the messages name the argument and the accepted values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from . import limits
from .errors import ConfigError, InvalidQuery
from .store import record_time

__all__ = ["agent_document", "assertion", "bounded", "budget", "check_datatype",
           "checked_date", "fact_id", "fact_text", "globs", "instant", "positive", "sized",
           "text", "unit", "validity"]


def globs(raw: Sequence[str]) -> tuple[str, ...]:
    """The note patterns, each one able to match a path inside the vault.

    Why refuse the others: a glob that matches nothing makes a full sync find no notes,
    and a sync deletes what it does not find (``--pattern '../*.md'`` emptied the store).
    """
    out = tuple(dict.fromkeys(p.strip() for p in raw if p.strip()))
    if not out:
        raise ConfigError("no file patterns: give at least one glob, e.g. **/*.md",
                          key="patterns")
    for glob in out:
        if glob.startswith(("/", "\\")) or glob.endswith(("/", "\\")) \
                or ".." in glob.replace("\\", "/").split("/") \
                or (len(glob) > 2 and glob[1] == ":" and glob[2] in "/\\"):
            raise ConfigError(f"pattern {glob!r} can never match a note: patterns match file"
                              " paths inside the vault (no leading or trailing '/', no '..',"
                              " no drive)", key="patterns")
    return out


def positive(name: str, value: int) -> int:
    # a bool is an int to Python, never a count to a caller: ``True`` meant 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidQuery(f"{name} must be a positive integer, got {value!r}")
    return value


def budget(value: int) -> int | None:
    """A token budget: 0 means none; a negative or absurdly small one is refused."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or 0 < value < 50:
        raise InvalidQuery(f"max_tokens must be 0 (no limit) or at least 50, got {value!r}")
    return value or None


def unit(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidQuery(f"{name} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _parsed(name: str, value: object) -> datetime | None:
    """``value``, an ISO 8601 date or time as text, parsed; None for none (None or blank)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and len(value) <= limits.DATE_CHARS:
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidQuery(f"{name} must be an ISO 8601 date or time (2026-03-01,"
                       f" 2026-03-01T12:00:00Z), got {value!r}")


def instant(name: str, value: str | None) -> str | None:
    """An ISO 8601 date or time, spelled as the store spells record times
    (``store.record_time``), so that comparing it with them compares instants.

    Why: record times are compared as text; ``yesterday`` sorted after every one of them
    (so it meant "now"), and an offset such as ``+01:00`` was compared as characters. A
    time without an offset is taken as UTC; a date alone is its first instant.
    """
    t = _parsed(name, value)
    if t is None:
        return None
    try:
        return record_time(t)
    except OverflowError:  # 9999-12-31T23:59:59-14:00 is past the last UTC instant
        raise InvalidQuery(f"{name} {value!r} is outside the years 1 to 9999 in UTC"
                           ) from None


def checked_date(name: str, value: str | None) -> str | None:
    """A date or time that must parse, kept as written: valid times come from the notes
    themselves (``valid_from: 2026-03-01``) and are compared as the dates they are."""
    return None if value is None or _parsed(name, value) is None else value.strip()


def check_datatype(value: str, datatype: str) -> None:
    """A literal must read as its declared datatype (the ones the parser itself writes)."""
    text = value.strip()
    checks: dict[str, Callable[[str], object]] = {
        "integer": int, "number": float, "date": date.fromisoformat,
        "datetime": datetime.fromisoformat,
        "boolean": lambda t: {"true": 1, "false": 0}[t.lower()]}
    check = checks.get(datatype)
    if check is None:
        return
    try:
        check(text)
    except (ValueError, KeyError):
        raise InvalidQuery(f"value {value!r} is not a valid {datatype}") from None


def bounded(name: str, value: int, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidQuery(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
    return value


def assertion(subject: str, predicate: str, value: str, *, value_type: str,
              confidence: float) -> None:
    """The parts of an asserted fact, refused when missing or out of range (the
    predicate's spelling and a literal's datatype are checked apart, after them)."""
    if not subject.strip() or not predicate.strip() or not value.strip():
        raise InvalidQuery("subject, predicate and value are required")
    if not 0.0 <= confidence <= 1.0:
        raise InvalidQuery(f"confidence must be within 0..1, got {confidence}")
    if value_type not in ("Entity", "Literal"):
        raise InvalidQuery(f"value_type must be Entity or Literal, got {value_type!r}")


def validity(valid_from: str | None, valid_to: str | None) -> tuple[str | None, str | None]:
    """A fact's validity bounds, each a date or time that must parse, in order."""
    valid_from = checked_date("valid_from", valid_from)
    valid_to = checked_date("valid_to", valid_to)
    if valid_from and valid_to and str(instant("valid_from", valid_from)) > str(
            instant("valid_to", valid_to)):
        raise InvalidQuery(f"valid_from {valid_from} is after valid_to {valid_to}")
    return valid_from, valid_to


TRUST_STATES = ("stated", "asserted", "extracted", "unreviewed", "approved", "rejected")


def trusts(values: Sequence[str] | None) -> list[str] | None:
    """Trust states to keep (how a fact came in, or what review made of it), checked."""
    if not values:
        return None
    out = [v.strip().lower() for v in values if v.strip()]
    bad = [v for v in out if v not in TRUST_STATES]
    if bad:
        raise InvalidQuery(f"unknown trust state {bad[0]!r}: use {', '.join(TRUST_STATES)}")
    return out or None


def text(name: str, value: object, limit: int, *, required: bool = False) -> str:
    """A string argument no longer than ``limit`` characters (``knotwork.limits``)."""
    if not isinstance(value, str):
        raise InvalidQuery(f"{name} must be text, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidQuery(f"{name} is {len(value):,} characters long; the limit is"
                           f" {limit:,}")
    if required and not value.strip():
        raise InvalidQuery(f"{name} is empty")
    return value


def sized(name: str, items: Sequence[object], limit: int) -> None:
    """A list argument of at most ``limit`` items."""
    if len(items) > limit:
        raise InvalidQuery(f"{name} has {len(items):,} items; the limit is {limit:,}")


def fact_id(value: object) -> int:
    """A fact's id: a positive integer, never a bool or a numeral in text."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidQuery(f"fact_id must be a positive integer, got {value!r}")
    return value


def fact_text(subject: str, predicate: str, value: str, supporting_text: str,
              reason: str | None) -> None:
    """The text of an asserted fact, each part within its limit."""
    text("subject", subject, limits.SUBJECT_CHARS)
    text("predicate", predicate, limits.PREDICATE_CHARS)
    text("value", value, limits.VALUE_CHARS)
    text("supporting_text", supporting_text, limits.SUPPORTING_TEXT_CHARS)
    if reason is not None:
        text("reason", reason, limits.REASON_CHARS)


def agent_document(doc_id: str, title: str, source: str, raw_content: str,
                   entities: Sequence[Mapping[str, Any]],
                   relations: Sequence[Mapping[str, Any]]) -> None:
    """An agent document within the limits: its text, its lists and every item's fields."""
    text("doc_id", doc_id, limits.DOC_ID_CHARS, required=True)
    text("title", title, limits.TITLE_CHARS)
    text("source", source, limits.SOURCE_CHARS)
    text("raw_content", raw_content, limits.RAW_CONTENT_CHARS, required=True)
    sized("entities", entities, limits.ENTITIES_MAX)
    sized("relations", relations, limits.RELATIONS_MAX)
    fields = {"name": limits.NAME_CHARS, "source": limits.NAME_CHARS,
              "target": limits.NAME_CHARS, "type": limits.TYPE_CHARS,
              "supporting_text": limits.SUPPORTING_TEXT_CHARS}
    for kind, items in (("entities", entities), ("relations", relations)):
        for i, item in enumerate(items):
            for key, limit in fields.items():
                got = item.get(key)
                if isinstance(got, str) and len(got) > limit:
                    text(f"{kind}[{i}].{key}", got, limit)
