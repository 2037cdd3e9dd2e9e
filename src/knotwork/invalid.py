"""How every door words a refused argument: which field, and why, in knotwork's words.

REST's 422 bodies and MCP's tool errors come from the same schema checks (Pydantic), whose
own text carried boilerplate a client or a model had to read past: a documentation URL
per problem (``https://errors.pydantic.dev/...``) and the refused input echoed back whole
(``input_value='ssss…'``, a 2 MB document included). ``problems`` keeps the field and the
reason; the input is never repeated.

    >>> problems([{"type": "string_too_long", "loc": ("body", "subject"),
    ...            "msg": "…", "ctx": {"max_length": 1000}}])
    [{'loc': ['body', 'subject'], 'type': 'string_too_long', 'msg': 'at most 1000 characters'}]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Problem = Mapping[str, Any]
# A union member's tag in a location (``max_tokens.constrained-int``): the validator's
# name for one alternative of a field, not a field
_MEMBER = re.compile(
    r"^(constrained-)?(int|float|str|bool|none|bytes|list|dict|tuple|set|decimal)(\[.*\])?$"
    r"|^(function-(after|before|wrap|plain)|literal|json-or-python|lax-or-strict"
    r"|tagged-union|is-instance|nullable|chain|union|typed-dict|model)\[.*\]$", re.S)


def _n(ctx: Mapping[str, Any], key: str) -> str:
    value = ctx.get(key, "?")
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _at_least_chars(c: Mapping[str, Any]) -> str:
    return "must not be empty" if _n(c, "min_length") == "1" else \
        f"at least {_n(c, 'min_length')} characters"


# Pydantic's error type -> the reason in knotwork's words (from the error's ``ctx``)
_WORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "missing": lambda c: "required",
    "extra_forbidden": lambda c: (
        f"not a parameter of this route (it takes: {', '.join(c['takes']) or 'none'})"
        if "takes" in c else "not a field of this request"),
    "string_too_long": lambda c: f"at most {_n(c, 'max_length')} characters",
    "string_too_short": _at_least_chars,
    "too_long": lambda c: f"at most {_n(c, 'max_length')} items",
    "too_short": lambda c: f"at least {_n(c, 'min_length')} items",
    "string_type": lambda c: "must be a string",
    "int_type": lambda c: "must be an integer",
    "int_parsing": lambda c: "must be an integer",
    "int_from_float": lambda c: "must be an integer",
    "float_type": lambda c: "must be a number",
    "float_parsing": lambda c: "must be a number",
    "bool_type": lambda c: "must be true or false",
    "bool_parsing": lambda c: "must be true or false",
    "list_type": lambda c: "must be a list",
    "dict_type": lambda c: "must be an object",
    "model_type": lambda c: "must be an object",
    "model_attributes_type": lambda c: "must be an object",
    "finite_number": lambda c: "must be a finite number",
    "greater_than_equal": lambda c: f"must be at least {_n(c, 'ge')}",
    "greater_than": lambda c: f"must be more than {_n(c, 'gt')}",
    "less_than_equal": lambda c: f"must be at most {_n(c, 'le')}",
    "less_than": lambda c: f"must be less than {_n(c, 'lt')}",
    "literal_error": lambda c: f"must be {c.get('expected', 'one of the listed values')}",
    "enum": lambda c: f"must be {c.get('expected', 'one of the listed values')}",
    "string_pattern_mismatch": lambda c: "is not in the form the schema's pattern states",
    "json_invalid": lambda c: f"malformed JSON ({c.get('error', 'cannot be read')})",
}


def reason(problem: Problem) -> str:
    """Why one field was refused."""
    kind = str(problem.get("type", ""))
    words = _WORDS.get(kind)
    if words is not None:
        return words(problem.get("ctx") or {})
    msg = str(problem.get("msg", "invalid"))
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def problems(found: Iterable[Problem]) -> list[dict[str, Any]]:
    """Each refused field once, as ``{loc, type, msg}``: no input, no URL. A field of
    several alternatives (``int | None``, 0 or 50-200000) refused by each is one problem,
    its reasons joined by "or"."""
    out: dict[tuple[object, ...], dict[str, Any]] = {}
    for p in found:
        raw = list(p.get("loc", ()))
        loc = [part for part in raw if not (isinstance(part, str) and _MEMBER.match(part))]
        why = reason(p)
        seen = out.get(tuple(loc))
        if seen is None:
            out[tuple(loc)] = {"loc": loc, "type": str(p.get("type", "")), "msg": why}
        elif why not in seen["msg"].split(" or "):
            seen["msg"] += f" or {why}"
    return list(out.values())


def where(loc: Iterable[object]) -> str:
    """``body.entities.0.name`` for a problem's location."""
    return ".".join(str(part) for part in loc) or "request"
