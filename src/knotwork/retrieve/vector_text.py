"""The words of a question a vector should see: a name every other chunk holds left out.

A chat's notes name their two speakers on every turn ("- **Caroline** (D1:3): …"), so
"What did Melanie paint recently?" shares "Melanie" with every chunk: full text knows
(the word's IDF is near 0), a sentence embedding does not — the name pulls the question
toward the chunks whose *text* says "Melanie" (the other speaker addressing her), away
from the turn that answers it. The question's vector is taken without such a name: a
word the question writes as a name (``domain.words.named_words``) that at least
``COMMON_SHARE`` of the store's chunks hold. A name few chunks hold ("Rex Maughan") is
what the question is about and stays; a question with no name is unchanged, and costs
nothing but one regular expression.

Measured (``bench/README.md``, "A chat's turns"): LoCoMo vector-only note recall@5 / MRR
0.729 / 0.553 → 0.793 / 0.641 (fused, a little: hybrid 0.868 / 0.802 → 0.866 / 0.805); no
question of SciFact, HotpotQA, the KEPs, ADRs or RFCs is changed (their names are held by
under 10% of their chunks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..domain.words import STOPWORDS, named_words
from ..store import StoreReader
from .query import query_terms

__all__ = ["COMMON_SHARE", "vector_text"]

# A name held by at least this share of the chunks names nothing in particular. LoCoMo's
# speakers are in 94–100% of their conversation's chunks; the commonest name of a question
# of the other sets is in under 10% of theirs.
COMMON_SHARE = 0.5


def vector_text(reader: StoreReader, query: str, *,
                scopes: Sequence[str] | None = None) -> str:
    """``query`` without the names at least ``COMMON_SHARE`` of the chunks hold (and
    their possessive "'s"); ``query`` itself when it names none or would be left empty.
    """
    named = [w for w in named_words(query) if w not in STOPWORDS]
    terms = {w: [t for t in query_terms(w) if t not in STOPWORDS] for w in named}
    wanted = sorted({t for ts in terms.values() for t in ts})
    if not wanted:
        return query
    n = reader.live_chunk_count(scopes)
    bar = COMMON_SHARE * n
    df = dict(reader.term_frequencies(wanted, table="chunk", cap=int(bar) + 1,
                                      scopes=scopes))
    common = [w for w, ts in terms.items() if ts and all(df.get(t, 0) >= bar for t in ts)]
    if not common or n == 0:
        return query
    out = query
    for word in common:
        out = re.sub(rf"(?<!\w){re.escape(word)}(?:['’]s)?(?!\w)", " ", out, flags=re.I)
    out = " ".join(out.split())
    return out if query_terms(out) else query
