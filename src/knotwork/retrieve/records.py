"""A chunk that lists records (a chat's turns, a log's entries) scored by its best record.

BM25 scores a chunk as one bag of words, so a chunk of a dozen chat turns that holds the
question's words in one turn ("- **Melanie** (D8:3): I painted a lake sunrise last
year") scores about as a chunk that holds them scattered over several turns, and the
answer is one turn. When the question's best full-text chunks are lists (``listed``: at
least ``LISTED_SHARE`` of the first ``GATE_DEPTH``), each candidate also scores its best
line: BM25 over the candidates' lines (IDF among those lines, words matched by
``light_stem``), turned into z-scores among them and added to the fused score ×
``RECORD_GAIN`` (in the fused score's vector z units, as the agreement bonus is). A
question whose best chunks are prose (SciFact's abstracts, a KEP's sections, HotpotQA's
paragraphs) is unchanged, at the cost of reading its ten best text hits' rows.

Measured (``bench/README.md``, "A chat's turns"): LoCoMo hybrid ``search`` and ``context``
MRR 0.802 → 0.814 and 0.799 → 0.815 with the speakers left out of the question's vector
(``vector_text``), the line carrying most of it; every other set unchanged (no question
of theirs passes the gate). Only the ``POOL`` best fused candidates are read.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from ..domain.words import STOPWORDS
from ..store import StoreReader
from .query import query_terms

__all__ = ["GATE_DEPTH", "LISTED_SHARE", "POOL", "RECORD_GAIN", "by_record", "light_stem", "listed",
           "record_scores"]

# Swept on LoCoMo (0.25, 0.35, 0.5, 0.75, 1; bench/README.md): 0.35–0.5 gained the most
# MRR; the gate kept every other set unchanged at each. Ungated, scoring every chunk's
# best line cost ADRs 0.06 MRR: the reason for the gate.
RECORD_GAIN = 0.5
GATE_DEPTH = 10
POOL = 20  # the best fused candidates whose lines are read
LISTED_SHARE = 0.8
_K1, _B = 1.2, 0.75
_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")


def light_stem(word: str) -> str:
    """``word`` without a plural or verb ending ("paintings" → "paint", "camped" → "camp").

    Lighter than the index's Porter stemmer on purpose: it only has to match a question's
    word with the same word in a line of the chunks full text already found.

    >>> [light_stem(w) for w in ("paintings", "camped", "classes", "is", "sing")]
    ['paint', 'camp', 'class', 'is', 'sing']
    """
    for end in ("ings", "ing", "es", "ed", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            if end == "es" and not word.endswith(("ses", "xes", "shes", "ches")):
                return word[:-1]
            return word[: -len(end)]
    return word


def listed(text: str) -> bool:
    """Whether ``text`` is a list of records: 3 or more lines besides headings, at least
    ``LISTED_SHARE`` of them list items.

    >>> listed("## Conversation\\n- **A** (D1:1): hi\\n- **B** (D1:2): yo\\n- **A**: ok")
    True
    >>> listed("A paragraph.\\n\\nAnother one.\\n- an item")
    False
    """
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return len(lines) >= 3 and sum(bool(_ITEM.match(ln)) for ln in lines) >= (
        LISTED_SHARE * len(lines))


def record_scores(texts: Mapping[int, str], query: str) -> dict[int, float]:
    """Each chunk's best line by BM25 against ``query``'s words (stopwords left out), the
    IDF and mean length (in blank-separated words) counted over the lines of ``texts``.

    Only a line that holds one of the words as a substring is tokenised (a light stem is
    a prefix of its word): the rest count for their length alone.

    >>> s = record_scores({1: "- a red fox\\n- a cat", 2: "- the fox sleeps\\n- red sky"},
    ...                   "red fox")
    >>> s[1] > s[2] > 0
    True
    """
    asked = {light_stem(t) for t in query_terms(query) if t not in STOPWORDS}
    out = dict.fromkeys(texts, 0.0)
    if not asked:
        return out
    # a line break, or a word that starts with one of the stems: all a line is read for
    starts = re.compile(r"\n|(?<!\w)(?:" + "|".join(
        re.escape(a) for a in sorted(asked, key=len, reverse=True)) + r")\w*")
    df: Counter[str] = Counter()
    count = length = 0
    held: dict[int, list[tuple[dict[str, int], int]]] = {}
    for cid, text in texts.items():
        low = text.casefold()
        lines = low.split("\n")
        count += sum(1 for line in lines if line.strip())
        length += len(low.split())
        at, bag = 0, dict[str, int]()
        for found in [*starts.findall(low), "\n"]:
            if found != "\n":
                word = light_stem(found)
                if word in asked:
                    bag[word] = bag.get(word, 0) + 1
                continue
            if bag:
                df.update(bag.keys())
                held.setdefault(cid, []).append((bag, len(lines[at].split())))
                bag = {}
            at += 1
    if not df:
        return out
    mean = length / count
    idf = {w: math.log(1 + (count - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    for cid, bags in held.items():
        out[cid] = max(sum(idf[w] * f * (_K1 + 1) / (f + _K1 * (1 - _B + _B * size / mean))
                           for w, f in bag.items()) for bag, size in bags)
    return out


def by_record(reader: StoreReader, query: str, scores: Mapping[int, float],
              text_top: Sequence[int]) -> dict[int, float]:
    """``scores`` (chunk id → fused score), raised by each chunk's best line when the
    question's best full-text chunks (``text_top``, best first) are lists.

    >>> by_record(None, "q", {1: 2.0}, [])  # type: ignore[arg-type]
    {1: 2.0}
    """
    top = list(text_top[:GATE_DEPTH])
    if not top or len(scores) < 2:
        return dict(scores)
    rows = reader.chunks(top)
    if sum(listed(rows[c].text) for c in top if c in rows) < LISTED_SHARE * len(top):
        return dict(scores)
    pool = sorted(scores, key=lambda c: -scores[c])[:POOL]
    rest = [c for c in pool if c not in rows]
    rows.update(reader.chunks(rest) if rest else {})
    best = record_scores({c: rows[c].text for c in pool if c in rows}, query)
    vals = list(best.values())
    mean = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
    if sd == 0:
        return dict(scores)
    low = min(vals)  # a chunk below the pool: the pool's lowest, as a run's missing items
    return {c: s + RECORD_GAIN * (best.get(c, low) - mean) / sd for c, s in scores.items()}
