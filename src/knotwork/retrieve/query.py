"""Turn free text into a safe FTS5 query: words OR-ed, each quoted, stop words dropped."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset("""
a an and are as at be by for from has have how i in is it its of on or that the this to was
what when where which who why will with does do did about into can you your we our they
der die das und ist ein eine zu mit von den dem des im il lo la le e di da che un una per
les des et est du en el los las y es que del se por con
""".split())


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def fts_query(text: str, *, max_terms: int = 32) -> str | None:
    """An FTS5 MATCH string for ``text``, or None when it holds no searchable word.

    Why quote every term: user text may contain FTS5 syntax (AND, NEAR, ``*``, ``"``) and a
    malformed MATCH would be an error, not an empty answer.
    """
    terms = words(text)
    kept = [t for t in terms if t not in STOPWORDS] or terms
    kept = list(dict.fromkeys(kept))[:max_terms]
    if not kept:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in kept)
