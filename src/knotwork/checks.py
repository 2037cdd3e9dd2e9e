"""The checks of the facade's arguments: each returns the value as used, or raises.

``InvalidQuery`` for a query's options (counts, budgets, dates), ``ConfigError`` for note
patterns; the messages name the argument and the accepted values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime

from .errors import ConfigError, InvalidQuery
from .store import record_time

__all__ = ["assertion", "bounded", "budget", "check_datatype", "checked_date", "globs",
           "instant", "positive", "unit", "validity"]


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
    if not isinstance(value, int) or value < 1:
        raise InvalidQuery(f"{name} must be a positive integer, got {value!r}")
    return value


def budget(value: int) -> int | None:
    """A token budget: 0 means none; a negative or absurdly small one is refused."""
    if not isinstance(value, int) or value < 0 or 0 < value < 50:
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
    if isinstance(value, str):
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
    if not isinstance(value, int) or not lo <= value <= hi:
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
