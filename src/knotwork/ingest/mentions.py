"""Find exact mentions of known entity names in prose: plain text becomes a graph.

An Aho–Corasick automaton over every known label (note titles, file stems, aliases) scans
a chunk once, whatever the number of labels. A mention must be word-bounded, at least
``MIN_LABEL_CHARS`` long and not a stop word; overlapping matches keep the longest
("Kestrel Queue Admin" beats "Kestrel Queue"). Mentions become ``mentions`` facts with
trust ``extracted`` and a confidence below a written link's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import ahocorasick

from ..types import SELF, FactDraft, NameRef, Span

MIN_LABEL_CHARS = 4
MENTION_CONFIDENCE = 0.7
EXTRACTOR = "mention"
_STOP = frozenset("""about after again also because before being between could does doing
during each from have having here into just more most other over same should some such than
that their them then there these they this those through under until very what when where
which while with would your note notes home index readme todo draft summary overview""".split())


@dataclass(frozen=True, slots=True)
class ChunkText:
    line_start: int
    text: str


def usable(label: str) -> bool:
    folded = label.casefold()
    return (len(folded) >= MIN_LABEL_CHARS and folded not in _STOP
            and not folded.replace(" ", "").isdigit())


class MentionFinder:
    """Scan text for any of a fixed set of labels (build once, scan many chunks)."""

    def __init__(self, labels: Iterable[tuple[str, str]]) -> None:
        """``labels``: (label text, name key it resolves by)."""
        self._auto = ahocorasick.Automaton()
        count = 0
        for text, key in labels:
            folded = " ".join(text.split()).casefold()
            if usable(folded) and folded not in self._auto:
                self._auto.add_word(folded, (len(folded), key, " ".join(text.split())))
                count += 1
        self.size = count
        if count:
            self._auto.make_automaton()

    def find(self, chunks: Sequence[ChunkText], *, skip_keys: frozenset[str] = frozenset()
             ) -> list[FactDraft]:
        """One ``mentions`` draft per label mentioned, at its first occurrence."""
        if not self.size:
            return []
        out: dict[str, FactDraft] = {}
        for chunk in chunks:
            folded = chunk.text.casefold()
            if len(folded) != len(chunk.text):
                continue  # casefold changed offsets (ß → ss): the spans would lie
            for start, key, label in self._longest(folded):
                if key in skip_keys or key in out:
                    continue
                before = chunk.text.count("\n", 0, start)
                lines = chunk.text.split("\n")
                line_text = lines[before].strip()
                line_no = chunk.line_start + before
                out[key] = FactDraft(SELF, "mentions", NameRef(key, label), Span(line_no, line_no),
                                     line_text, EXTRACTOR, confidence=MENTION_CONFIDENCE,
                                     trust="extracted")
        return list(out.values())

    def _longest(self, folded: str) -> list[tuple[int, str, str]]:
        found: list[tuple[int, int, str, str]] = []
        for end, (length, key, label) in self._auto.iter(folded):
            start = end - length + 1
            if _bounded(folded, start, end + 1):
                found.append((start, end + 1, key, label))
        found.sort(key=lambda m: (m[0], -(m[1] - m[0])))
        kept: list[tuple[int, str, str]] = []
        reach = -1
        for start, stop, key, label in found:
            if start >= reach:
                kept.append((start, key, label))
                reach = stop
        return kept


def _bounded(text: str, start: int, stop: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[stop] if stop < len(text) else " "
    return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")
