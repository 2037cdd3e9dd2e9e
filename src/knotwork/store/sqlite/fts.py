"""A ``TextQuery`` spelled as an FTS5 MATCH string: the one place that syntax is written.

Why quote every term: user text may contain FTS5 syntax (AND, NEAR, ``*``, ``"``) and a
malformed MATCH would be an error, not an empty answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..records import TextQuery

_OPS = {"any": " OR ", "all": " AND "}


def fts_match(words: Sequence[str], op: str = "OR") -> str:
    """Quote each word and join with AND or OR.

    >>> print(fts_match(['a"b', "near"], "AND"))
    "a""b" AND "near"
    """
    return f" {op} ".join('"' + w.replace('"', '""') + '"' for w in words)


def match_string(query: TextQuery) -> str:
    """The FTS5 MATCH string for ``query``; a ``field`` becomes a column filter.

    >>> match_string(TextQuery(("nll", "hpa"), field="label"))
    'label : ("nll" OR "hpa")'
    """
    terms = _OPS[query.match].join('"' + w.replace('"', '""') + '"' for w in query.terms)
    return f"{query.field} : ({terms})" if query.field else terms
