"""Turn free text into query words: distinct, stop words dropped, rare terms kept.

How the words are spelled for an index (FTS5 quoting, OR/AND) is the store's business
(``store.TextQuery``); nothing here knows a query syntax.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from ..domain.words import STOPWORDS, label_words, name_words, query_terms, words

__all__ = ["STOPWORDS", "acronym", "fold", "initialisms",
           "label_words", "name_words", "named_spans", "query_terms", "selective_terms",
           "words"]

@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """A word with an English plural ending folded: how a question and a name are compared
    ("Kestrel Queues" names "Kestrel Queue"; "editions" covers "3501-edition-2024").

    Both sides fold alike, so a wrong singular ("series" → "sery") still matches itself.

    >>> [fold(w) for w in ("queues", "policies", "policy", "class", "bus", "os", "dns")]
    ['queue', 'policy', 'policy', 'class', 'bus', 'os', 'dns']
    """
    if len(word) < 4 or word[-1] != "s" or word[-2] in "su" or not word.isalpha():
        return word
    return word[:-3] + "y" if word.endswith("ies") else word[:-1]


def initialisms(query: list[str], *, shortest: int = 3, longest: int = 5
                ) -> dict[str, tuple[int, int]]:
    """What each run of 3–5 consecutive question words spells by its initials, with the
    run's word span (the first run wins). A stop word or a word with digits ends a run.

    >>> initialisms(words("How do non-lexical lifetimes change borrowck?"))
    {'nll': (2, 5), 'nllc': (2, 6), 'nllcb': (2, 7), 'llc': (3, 6), 'llcb': (3, 7), 'lcb': (4, 7)}
    """
    out: dict[str, tuple[int, int]] = {}
    for i in range(len(query)):
        letters = ""
        for j in range(i, min(len(query), i + longest)):
            w = query[j]
            if not w.isalpha() or w in STOPWORDS:
                break
            letters += w[0]
            if j - i + 1 >= shortest:
                out.setdefault(letters, (i, j + 1))
    return out


def acronym(label: str, found: list[str]) -> str | None:
    """The word a label is, if it may be an acronym: one word of 3–5 letters (a numbered
    record's number aside), written in capitals or as a lower-case file name. ``found``:
    the label's ``label_words``, which the caller has already.

    Why the casing: "NLL" and ``2094-nll`` name a thing by its initials; "Cat" is a word.

    >>> [acronym(x, label_words(x)) for x in ("2094-nll", "NLL", "Cat", "HPA v2", "nl")]
    ['nll', 'nll', None, None, None]
    """
    if len(found) != 1 or not 3 <= len(found[0]) <= 5 or not found[0].isalpha():
        return None
    if label.isupper() or (label.islower() and not any(c.isspace() for c in label)):
        return found[0]
    return None


def named_spans(query: list[str], labels: dict[int, list[str]],
                initials: Mapping[str, tuple[int, int]] | None = None,
                acronyms: Mapping[int, str | None] | None = None
                ) -> dict[int, tuple[int, int]]:
    """The labels the query spells out in full, word for word: key → (start, end) word span.

    The rule a passage's plain text follows to mention a note (``ingest.mentions``): word-
    bounded, the whole label, at least four characters, not only stop words or digits, and
    the longest match wins — a label lying inside a longer named one is not named by it.
    A label that is an acronym (``acronyms``: key → its word) is also named by the words
    it abbreviates (``initials``: what ``initialisms`` found in the query).

    >>> q = words("Is Kestrel Queue Admin faster than 200 West Street?")
    >>> named_spans(q, {1: words("Kestrel Queue Admin"), 2: words("Kestrel Queue"),
    ...                 3: words("200 West Street"), 4: words("West Street District"),
    ...                 5: words("Is"), 6: words("200")})
    {1: (1, 4), 3: (6, 9)}
    >>> q = words("Did non-lexical lifetimes fix lifetimes?")
    >>> named_spans(q, {1: ["nll"], 2: ["fix", "lifetimes"], 3: ["lifetimes"]},
    ...             initialisms(q), {1: "nll"})
    {1: (1, 4), 2: (4, 6)}
    """
    found: dict[int, tuple[int, int]] = {}
    folded = [fold(w) for w in query]
    for key, label in labels.items():
        short = acronyms.get(key) if acronyms and initials else None
        if short is not None and initials and short in initials:
            found[key] = initials[short]
            continue
        n = len(label)
        if not n or len("".join(label)) < 4 or all(w in STOPWORDS or w.isdigit() for w in label):
            continue
        label = [fold(w) for w in label]
        for i in range(len(query) - n + 1):
            if folded[i:i + n] == label:
                found[key] = (i, i + n)
                break
    return {k: (a, b) for k, (a, b) in found.items()
            if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in found.values())}


# A term this many times more frequent than the query's rarest one carries almost no BM25
# weight beside it (IDF), yet scoring its postings is most of a query's cost.
PRUNE_RATIO = 100
PRUNE_MIN_DF = 1000


def selective_terms(freqs: list[tuple[str, int]]) -> list[str]:
    """Drop terms that match far more rows than the rarest term present; keep order.

    >>> selective_terms([("note", 90000), ("01234", 22), ("queue", 9000)])
    ['01234']
    >>> selective_terms([("queue", 9000), ("proxy", 8000)])
    ['queue', 'proxy']
    """
    present = [df for _, df in freqs if df > 0]
    if not present:
        return [w for w, _ in freqs]
    floor = min(present)
    return [w for w, df in freqs
            if df > 0 and not (df > PRUNE_MIN_DF and df > PRUNE_RATIO * floor)]
