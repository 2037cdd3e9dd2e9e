"""Every rule that splits text into words, each named for the job it does.

They differ on purpose, and a caller picks the one for its job:

- ``words``: a question's words for full-text search. ``\\w+``: ``_`` stays inside a
  word (``async_await`` is one term), as FTS5's ``unicode61`` tokenizer reads it.
- ``query_terms``: ``words`` de-duplicated, stop words dropped, capped: what a search sends.
- ``name_words``: a name's words for matching names and labels. ``_`` separates words
  too, since file names use it for a space (``2394-async_await`` → async, await).
- ``label_words``: ``name_words`` of a label as a question would say it (a record's
  number left out); ``label_initials``: what a label spells by its initials.
- ``written_acronyms``: the acronyms a question writes in capitals ("HPA"): letters only,
  3–5 of them, upper case; in lower case such a word is a word ("war", "cat").
- ``name_key``: not words but one key: a name as written, normalised into the key links
  are resolved by (NFC, case-folded, whitespace collapsed, ``.md`` dropped).

>>> words("Kestrel's async_await-queue 2024")
['kestrel', 's', 'async_await', 'queue', '2024']
>>> name_words("Kestrel's async_await-queue 2024")
['kestrel', 's', 'async', 'await', 'queue', '2024']
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "label_initials", "label_words", "name_key", "name_words",
           "named_words", "query_terms", "words", "written_acronyms"]

# Words too common to search by, or to spell an acronym with ("usa", not "usoa").
STOPWORDS = frozenset("""
a an and are as at be by for from has have how i in is it its of on or that the this to was
what when where which who why will with does do did about into can you your we our they
der die das und ist ein eine zu mit von den dem des im il lo la le e di da che un una per
les des et est du en el los las y es que del se por con
""".split())

_WORD = re.compile(r"\w+", re.UNICODE)
_NAME_SPLIT = re.compile(r"[\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s")
_CAPITALS = re.compile(r"\b[^\W\d_]{3,5}\b")  # a word an acronym may be: 3–5 letters


def words(text: str) -> list[str]:
    """Casefolded ``\\w+`` words of a question, for full-text search (``_`` joins)."""
    return [w.casefold() for w in _WORD.findall(text)]


def query_terms(text: str, *, max_terms: int = 32) -> list[str]:
    """The distinct searchable words of ``text``, stop words dropped unless all are."""
    terms = words(text)
    kept = [t for t in terms if t not in STOPWORDS] or terms
    return list(dict.fromkeys(kept))[:max_terms]


def name_words(text: str) -> list[str]:
    """Casefolded words for matching names: ``_`` separates words too (``async_await``)."""
    return [w for w in _NAME_SPLIT.split(text.casefold()) if w]


def written_acronyms(text: str) -> list[str]:
    """The acronyms ``text`` writes in capitals, casefolded, sorted, each once.

    Why upper case only: "HPA" in a question names "Horizontal Pod Autoscaler", while
    "war" or "cat" is a word. Digits end the candidate ("K8S" is none).

    >>> written_acronyms("Why does HPA scale? hpa, NATO, K8S, ABCDEF")
    ['hpa', 'nato']
    """
    return sorted({w.casefold() for w in _CAPITALS.findall(text) if w.isupper()})


# a quoted span ("…", “…”) and a word; a sentence ends at . ? ! or a line break
_QUOTED_OR_WORD = re.compile(r'"[^"\n]+"|“[^”\n]+”|\w+', re.UNICODE)
_SENTENCE_END = re.compile(r"[.?!:\n]\W*$")


def named_words(text: str) -> list[str]:
    """The words ``text`` writes as a name, casefolded: those with a capital letter that
    does not open a sentence ("Rex Maughan", "AWS", "iPhone") and those in double quotes.

    Why: a question that names something ("What company did Rex Maughan acquire?") is
    answered by the text that spells the name; one in other words ("a cluster that
    manages the other clusters") is where meaning counts more than spelling. The first
    word of a sentence is left out, since capitals there say nothing.

    >>> named_words('When did Mel read "nothing is impossible"? Then AWS, iPhone. Or')
    ['mel', 'nothing', 'is', 'impossible', 'aws', 'iphone']
    """
    out: list[str] = []
    for m in _QUOTED_OR_WORD.finditer(text):
        token = m.group()
        if token[0] in "\"“":
            out += words(token)
        elif (any(c.isupper() for c in token)
              and m.start() > 0 and not _SENTENCE_END.search(text[:m.start()])):
            out.append(token.casefold())
    return list(dict.fromkeys(out))


# A record's identifier opening its title: "KEP-1441: kubectl debug", "RFC 2094: NLL",
# "7. Use queues" (adr-tools), "TASK-ALR-001: Define alert rules".
_RECORD_TITLE = re.compile(r"(?:[A-Z][A-Z0-9]*(?:[- ][A-Z0-9]*\d[A-Z0-9]*)+|\d+)"
                           r"[ \t]*[.:–—][ \t]+(?P<rest>\S.*)")


def label_words(label: str) -> list[str]:
    """A label's words as a question would name it: a record's number left out.

    Why: numbered records are named by file name — ``0001-use-postgres``,
    ``2394-async_await``, ``2024-05-01-standup`` — or by a title that opens with their
    identifier — "KEP-1441: kubectl debug" —, and a question asks about the subject,
    rarely the number. A slug (no spaces) loses its leading digits, and a title the
    identifier before its colon, only when a word remains: in "1998 FIFA World Cup" the
    year is part of the name.

    >>> label_words("2394-async_await"), label_words("1998 FIFA World Cup")
    (['async', 'await'], ['1998', 'fifa', 'world', 'cup'])
    >>> label_words("2024-05-01-standup"), label_words("404")
    (['standup'], ['404'])
    >>> label_words("KEP-1441: kubectl debug"), label_words("7. Use queues")
    (['kubectl', 'debug'], ['use', 'queues'])
    >>> label_words("Apollo 11: The Untold Story")
    ['apollo', '11', 'the', 'untold', 'story']
    """
    if _SPACE.search(label):
        # (the separators a record's identifier ends with, tested first: most labels have
        # none, and the expression is the slower test)
        record = _RECORD_TITLE.match(label) if (":" in label or ". " in label or "–" in label
                                                or "—" in label) else None
        subject = name_words(record.group("rest")) if record else []
        return subject or name_words(label)
    out = name_words(label)
    lead = 0
    while lead < len(out) and out[lead].isdigit():
        lead += 1
    return out[lead:] if lead < len(out) else out


def label_initials(label: str) -> tuple[str, ...]:
    """What a label of 3–5 words spells by its initials, for a question that says the
    acronym: all its words' ("usoa"), and its words but stop words' ("usa"), each of
    3–5 letters. A label with a number or a word of one letter spells none.

    >>> label_initials("Horizontal Pod Autoscaler"), label_initials("Non-lexical lifetimes")
    (('hpa',), ('nll',))
    >>> label_initials("United States of America"), label_initials("Apollo 11 Moon Landing")
    (('usoa', 'usa'), ())
    """
    if label.count(" ") + label.count("-") + label.count("_") < 2 or not label.replace(
            " ", "").replace("-", "").replace("_", "").isalpha():
        return ()  # under three words, or a number: most labels, told without a split
    found = name_words(label)
    if not 3 <= len(found) <= 5 or not all(len(w) > 1 for w in found):
        return ()
    out = ["".join(w[0] for w in found)]
    content = "".join(w[0] for w in found if w not in STOPWORDS)
    if content != out[0] and len(content) >= 3:
        out.append(content)
    return tuple(out)


def name_key(text: str) -> str:
    """Normalise a name as written into the key links are resolved by.

    Unicode NFC, case-folded, whitespace collapsed, a trailing ``.md`` and surrounding
    slashes dropped: ``[[ Kestrel  Queue ]]`` and ``[[kestrel queue]]`` name the same
    thing, and so do a link typed as ``Café`` and a file ``Café.md`` whose name macOS
    wrote decomposed (``e`` + combining accent).
    """
    key = unicodedata.normalize(
        "NFC", " ".join(text.replace("\\", "/").split()).casefold())
    if key.endswith(".md"):
        key = key[:-3]
    return key.strip("/ ")
