"""Find exact mentions of known entity names in prose: plain text becomes a graph.

Why a word n-gram table and not an Aho–Corasick automaton: an automaton must be rebuilt
whole (≈0.2 s for 30k labels) whenever one note is added, renamed or deleted, which would
make every such edit O(vault). Here each label is the tuple of its words in a dict, so
adding or removing a name is O(1), and scanning a chunk costs one dict lookup per word
and n-gram length — O(text), never a loop over labels. Matches are word-bounded by
construction; overlapping matches keep the longest ("Kestrel Queue Admin" beats
"Kestrel Queue"); labels must be at least ``MIN_LABEL_CHARS`` long and not stop words.
A label of one common word ("data", "Release": ``COMMON_WORDS``) is found only where it is
written as a name (``_means``), and several words never across a sentence's punctuation.
Mentions become ``mentions`` facts with trust ``extracted`` and a confidence below a
written link's. Only prose is read, as the note's own facts are: code (fenced or
indented), inline code, comments and headings mention nothing, a reference definition
only through a page it points at, and a name inside a link to a note is the link's (its
fact names the note already).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import islice
from typing import Any

from ..types import SELF, FactDraft, NameRef, Span
from .extract import blank_note_links, sentence_text
from .links import resolve_relative
from .markdown import CODE, HEADING, REF_DEF, TEXT, mask_inline, scan_body

MIN_LABEL_CHARS = 4
MAX_LABEL_WORDS = 8
MENTION_CONFIDENCE = 0.7
EXTRACTOR = "mention"
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset("""about after again also because before being between could does doing
during each from have having here into just more most other over same should some such than
that their them then there these they this those through under until very what when where
which while with would your note notes home index readme todo draft summary overview
motivation alternatives rationale drawbacks background introduction conclusion conclusions
references appendix abstract context consequences goals decision decisions""".split()) | {
    "non goals", "rationale and alternatives", "prior art", "unresolved questions",
    "future possibilities", "guide level explanation", "reference level explanation",
    "detailed design", "design details", "user stories", "risks and mitigations", "test plan",
    "graduation criteria", "considered options", "decision outcome", "decision drivers"}
# From "motivation" on: the sections of a design document (RFC, ADR, KEP). A note named
# after one ("3392-leadership-council/motivation.md") is no name prose means by the words:
# in a sample of 100 mentions of the Rust RFCs, 11 were of RFC 3392's section notes
# "Rationale and alternatives" and "non-goals", each time an RFC's own section.


# What a sentence, a list item or a cell may begin with before its first word: spaces,
# emphasis, opening quotes and brackets, code or a link blanked ("_"), a quote's ">".
_MARKUP = " \t*_~\"'“‘([`>#\x01"
_QUOTES = "\"'“‘«`"
_LIST_MARK = re.compile(r"\s*(?:[-+*]|\d+[.)])(?:\s+\[[ xX]\])?")
_GAP = re.compile(r"\W+")  # what lies between the words of a name (``_WORD`` runs)
# the word just before or after another, across spaces, a hyphen or a slash
_BESIDE_BEFORE = re.compile(r"(\w+)[ \t/-]+$")
_BESIDE_AFTER = re.compile(r"[ \t/-]+(\w+)")
_STOPS = frozenset(",.;:!?()")


def _common_words() -> frozenset[str]:
    """The words of ``common_words.txt`` (made by ``bench/common_words.py``)."""
    text = resources.files(__package__).joinpath("common_words.txt").read_text("utf-8")
    return frozenset(w for w in text.split("\n") if w and not w.startswith("#"))


COMMON_WORDS = _common_words()

# (the words of a label found, {name key: [label, declarations, {as written: count}]},
# the index of its first word in the line)
_Hit = tuple[tuple[str, ...], dict[str, list[Any]], int]


@dataclass(frozen=True, slots=True)
class ChunkText:
    line_start: int
    text: str


# ASCII characters outside \w, as spaces: for ASCII text, ``translate`` then ``split`` gives
# exactly the runs ``_WORD`` finds, three times faster (the mention pass reads every line
# of every changed note: tokenising was half of it).
_ASCII_GAPS = str.maketrans({c: " " for c in map(chr, range(128))
                             if not (c.isalnum() or c == "_")})


def _tokens(text: str) -> list[str]:
    """``text``'s words (the runs ``_WORD`` finds), case-folded."""
    if text.isascii():
        return text.lower().translate(_ASCII_GAPS).split()
    # composed, as name keys are: a decomposed "Café" title still matches "Café" in prose
    return _WORD.findall(unicodedata.normalize("NFC", text.casefold()))


def _words(text: str) -> tuple[str, ...]:
    return tuple(_tokens(text))


def usable(label: str) -> bool:
    """A label worth matching in prose: not a folder path, long enough, not a stop word."""
    if "/" in label:
        return False
    words = _words(label)
    joined = " ".join(words)
    return (0 < len(words) <= MAX_LABEL_WORDS and len(joined) >= MIN_LABEL_CHARS
            and joined not in _STOP and not joined.replace(" ", "").isdigit())


class MentionFinder:
    """A mutable set of labels (word tuples → name key) and the scan over chunks."""

    def __init__(self, labels: Iterable[tuple[str, str]] = ()) -> None:
        """``labels``: (label text, name key), one pair per declaration (counted)."""
        self.generation: int | None = None
        self.reload(labels)

    def reload(self, labels: Iterable[tuple[str, str]]) -> None:
        """Replace every label (another process changed names: start over)."""
        # words -> {name key: [label as written, declarations, {as written: count}]}:
        # "Daily Notes" (a title) and "daily-notes" (a file name) are one label of two
        # keys; the spellings of a key ("Data" a title, "data" an alias) are kept apart,
        # since a common word is a name only as one of them writes it
        self._labels: dict[tuple[str, ...], dict[str, list[Any]]] = {}
        self._starts: dict[str, dict[int, int]] = {}  # first word -> {label length: count}
        # first word -> its labels' lengths, longest first (what ``_scan`` tries in turn)
        self._lengths: dict[str, tuple[int, ...]] = {}
        for text, key in labels:
            self.add(text, key)

    def __len__(self) -> int:
        return len(self._labels)

    def __contains__(self, text: str) -> bool:
        return _words(text) in self._labels

    def declares(self, text: str, key: str) -> bool:
        """Whether some note still has the name ``text`` of ``key``."""
        entry = self._labels.get(_words(text))
        return entry is not None and key in entry

    def shadows(self, text: str) -> bool:
        """True when a shorter label lies inside ``text`` (it may match once ``text`` goes)."""
        words = _words(text)
        return any(words[i:j] in self._labels for i in range(len(words))
                   for j in range(i + 1, len(words) + 1) if (i, j) != (0, len(words)))

    def add(self, text: str, key: str) -> None:
        if not usable(text):
            return
        words = _words(text)
        entry = self._labels.get(words)
        if entry is None:
            entry = self._labels[words] = {}
            lengths = self._starts.setdefault(words[0], {})
            if len(words) not in lengths:
                self._lengths[words[0]] = tuple(sorted((*lengths, len(words)), reverse=True))
            lengths[len(words)] = lengths.get(len(words), 0) + 1
        written = " ".join(text.split())
        slot = entry.get(key)
        if slot is None:
            entry[key] = [written, 1, {written: 1}]
        else:
            slot[1] += 1
            slot[2][written] = slot[2].get(written, 0) + 1

    def remove(self, text: str, key: str) -> None:
        words = _words(text)
        entry = self._labels.get(words)
        slot = entry.get(key) if entry is not None else None
        if entry is None or slot is None:
            return
        written = " ".join(text.split())
        slot[1] -= 1
        if slot[2].get(written, 0) > 1:
            slot[2][written] -= 1
        else:
            slot[2].pop(written, None)
        if slot[1] > 0:
            if slot[0] not in slot[2] and slot[2]:
                slot[0] = min(slot[2])  # the label shown: a spelling still declared
            return
        del entry[key]
        if entry:
            return
        del self._labels[words]
        lengths = self._starts[words[0]]
        lengths[len(words)] -= 1
        if not lengths[len(words)]:
            del lengths[len(words)]
            self._lengths[words[0]] = tuple(sorted(lengths, reverse=True))
        if not lengths:
            del self._starts[words[0]], self._lengths[words[0]]

    def find(self, chunks: Sequence[ChunkText], *, skip_keys: frozenset[str] = frozenset()
             ) -> list[FactDraft]:
        """One ``mentions`` draft per label mentioned, at its first occurrence."""
        if not self._labels:
            return []
        out: dict[str, FactDraft] = {}
        lines, references = _prose(chunks)
        for n, text, line, table, piece in lines:
            if len(text) == len(line) and ("://" in text or "www." in text or "@" in text
                                           or ".io" in text or ".com" in text
                                           or ".org" in text or ".net" in text):
                # in prose, "facelessuser.github.io" names no GitHub (a reference
                # definition's destination, read alone, may name the page it points at)
                text = _without_addresses(text)
            found = [hit for hit in _named(self._meant(text), skip_keys) if hit[0] not in out]
            if found and len(text) == len(line) and ("[" in text or text != line):
                # a name inside a link to a note is the link's: its fact says so already,
                # often by another of the note's names ("[47. Use Karpenter](047-….md)");
                # and no name spans what was blanked
                text = _unjoined(blank_note_links(text, references), line)
                found = _named(self._meant(text), skip_keys)
            for key, label, index in found:
                if key in out:
                    continue
                # on a cut line the "column" numbers the piece, as the writer numbers the
                # chunks sharing a line (``Writer.apply_mentions``)
                out[key] = FactDraft(SELF, "mentions", NameRef(key, label), Span(n, n),
                                     _support(text, line, index, label, table), EXTRACTOR,
                                     confidence=MENTION_CONFIDENCE, trust="extracted",
                                     column=piece)
        return list(out.values())

    def _meant(self, line: str) -> list[_Hit]:
        """``_scan`` less the words that do not mean the names they spell (``_means``)."""
        out = []
        for words, keys, index in self._scan(line):
            if len(words) > 1 or words[0] in COMMON_WORDS:
                keys = _means(line, words, keys, index)
            if keys:
                out.append((words, keys, index))
        return out

    def _scan(self, line: str) -> list[_Hit]:
        """``(words, {key: [label, count]}, index of its first word)`` per label found in
        ``line``."""
        words = _tokens(line)
        starts = self._lengths
        if starts.keys().isdisjoint(words):
            return []  # the common case, decided in C: no word begins any label
        # left to right, the longest label starting at each word that may begin one; a
        # match skips the words it covers
        found, after, labels, count = [], 0, self._labels, len(words)
        for i in [i for i, w in enumerate(words) if w in starts]:
            if i < after:
                continue
            for n in starts[words[i]]:
                if i + n > count:
                    continue
                label = tuple(words[i:i + n])
                hit = labels.get(label)
                if hit is not None:
                    found.append((label, hit, i))
                    after = i + n
                    break
        return found


class ScopedFinder:
    """One ``MentionFinder`` per scope: a note's prose is read against the names of its own
    scope's notes alone, so what a scope's notes mention (longest match, common words) is
    what a store of that scope alone finds, and no scope's facts tell another's titles."""

    def __init__(self, labels: Iterable[tuple[str, str, str]] = ()) -> None:
        """``labels``: (label text, name key, scope), one per declaration."""
        self.generation: int | None = None
        self.reload(labels)

    def reload(self, labels: Iterable[tuple[str, str, str]]) -> None:
        """Replace every label (another process changed names: start over)."""
        self._tables: dict[str, MentionFinder] = {}
        for text, key, scope in labels:
            self.add(text, key, scope)

    def table(self, scope: str) -> MentionFinder:
        """``scope``'s labels (an empty table for a scope that has none)."""
        found = self._tables.get(scope)
        return found if found is not None else _EMPTY

    def add(self, text: str, key: str, scope: str) -> None:
        table = self._tables.get(scope)
        if table is None:
            table = self._tables[scope] = MentionFinder()
        table.add(text, key)

    def remove(self, text: str, key: str, scope: str) -> None:
        table = self._tables.get(scope)
        if table is not None:
            table.remove(text, key)

    def find(self, chunks: Sequence[ChunkText], *, scope: str,
             skip_keys: frozenset[str] = frozenset()) -> list[FactDraft]:
        """``MentionFinder.find`` with ``scope``'s labels only."""
        return self.table(scope).find(chunks, skip_keys=skip_keys)


_EMPTY = MentionFinder()  # never added to: ``ScopedFinder.table`` of a scope without labels


def _means(line: str, words: tuple[str, ...], keys: dict[str, list[Any]], index: int
           ) -> dict[str, list[Any]]:
    """The names of ``keys`` that ``words``, found in ``line`` as its ``index``-th word on,
    are likely meant as.

    - One common word ("data", "Release", "tags": ``COMMON_WORDS``) names a note only when
      written as a name: as one of the note's names spells it, with a capital, not where
      a sentence starts (where any word has one), and not beside another capitalised
      word (a longer name's: "- Feature Name:" heads every Rust RFC). "The data is
      stale", "Release notes follow", "- tags" and "the Release Signoff checklist" name
      nothing; "we moved to Python" names the note "Python". A name all in capitals
      ("REST") is a name wherever it stands. On a Dendron vault of 1,012 notes, titles
      such as "data", "name", "Find", "Build" and "Example" made most of its facts.
    - Several words do not span a sentence's punctuation where the name has a space
      between them: "Foam: Search Tag" (a command's name) is no mention of the note
      "foam search", nor "we use foam, search later".
    """
    place = _place(line, index, words)
    if len(words) == 1:
        if place is None:
            return {}
        written = line[place[0]:place[1]]
        if written.islower() or (not written.isupper() and (
                _opens(line, place[0]) or _titled(line, *place))):
            return {}
        return {k: v for k, v in keys.items()
                if any(_WORD.findall(form) == [written] for form in v[2])}
    if place is None:
        return keys
    gaps = _GAP.findall(line[place[0]:place[1]])
    if not any(_STOPS.intersection(g) for g in gaps):
        return keys
    return {k: v for k, v in keys.items()
            if any(_spans(gaps, _GAP.findall(form)) for form in v[2])}


def _spans(gaps: list[str], name_gaps: list[str]) -> bool:
    """Whether text whose words are apart by ``gaps`` may be the name whose words are apart
    by ``name_gaps``: only where the name's own gap is no space ("2318-custom-test-…"
    stands for "2318: Custom Test Frameworks") may the text's hold punctuation."""
    if len(gaps) != len(name_gaps):
        return True  # the name's words are cut otherwise (an accent, an underscore)
    return all(not _STOPS.intersection(g) or not n.isspace()
               for g, n in zip(gaps, name_gaps, strict=True))


def _titled(line: str, start: int, end: int) -> bool:
    """Whether the word at ``[start, end)`` of ``line`` has a capitalised word beside it: it
    is then a word of a longer name ("Feature Name", "Release Signoff checklist", "Plain
    Old Data"), which is what made it capitalised."""
    before = _BESIDE_BEFORE.search(line, 0, start)
    after = _BESIDE_AFTER.match(line, end)
    return bool(before and before.group(1)[0].isupper()
                or after and after.group(1)[0].isupper())


def _opens(line: str, start: int) -> bool:
    """Whether the word at ``start`` of ``line`` opens a sentence (or a list item, a table
    cell, the text after a colon or a dash), where any word may be capitalised; or stands
    in quotes, where it is the word itself that is spoken of ('than "Example"')."""
    if start and line[start - 1] in _QUOTES:
        return True
    before = line[:start].rstrip(_MARKUP)
    return (not before or before[-1] in ".!?:;|—–" or before.endswith((" -", "\t-"))
            or _LIST_MARK.fullmatch(before) is not None)


def _named(hits: list[_Hit], skip_keys: frozenset[str]) -> list[tuple[str, str, int]]:
    """``(key, label, index)`` of each label found that names no note of ``skip_keys``.

    Several notes may have a name of the same words ("Daily Notes" a title, "daily-notes"
    a file name): when any is skipped (the document is that note, or links to it) the
    words are taken as meaning it, and mention nothing; else they mean the name spelt as
    the words are (a title or alias), or the least key, whatever order the names came in.
    """
    out = []
    for words, keys, index in hits:
        if skip_keys.isdisjoint(keys):
            spaced = " ".join(words)
            key = spaced if spaced in keys else min(keys)
            out.append((key, keys[key][0], index))
    return out


# A web or mail address, or a host name ("facelessuser.github.io"): what is in it names a
# host or a path, not a note.
_ADDRESS = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[^\s<>()\[\]\x00]+"
    r"|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
    r"|\b[\w\-]+(?:\.[\w\-]+)*\.(?:com|org|net|io)\b(?:/[^\s<>()\[\]\x00]*)?")


def _without_addresses(text: str) -> str:
    """``text`` with each address made a run of "_" (a word no name holds), character for
    character, so the words on its two sides stay apart."""
    return _ADDRESS.sub(lambda m: "_" * (m.end() - m.start()), text)


def _unjoined(text: str, line: str) -> str:
    """``text`` with each run ``line`` has blanked in it (code, a comment, a link) made a
    word of "_", which no name holds: the words on its two sides are not adjacent.

    "by using `Foam: Open Daily Note`). Foam will" read "using Foam", a note's title.
    """
    if text == line:
        return text
    return "".join("_" if t != c else t for t, c in zip(text, line, strict=True))


def _support(text: str, line: str, index: int, label: str, table: bool) -> str:
    """A mention's supporting text: the sentence of ``line`` where ``label`` was found,
    its ``index``-th word of the scanned ``text``; the whole line where it cannot be told.

    Why here and not in ``_scan``: positions cost on every line scanned, and only a
    note's first mention of each name is cited. The scanned text is the line masked
    character for character (code, comments and links to notes blanked), but for a
    reference definition's destination.
    """
    if len(text) != len(line):
        return line.strip()
    place = _place(text, index, _words(label))
    return line.strip() if place is None else sentence_text(line, text, *place, table)


def _place(text: str, index: int, words: tuple[str, ...]) -> tuple[int, int] | None:
    """Where ``words`` lie in ``text`` as its ``index``-th word on: ``[start, end)``, or
    None when ``_tokens`` cut ``text`` into other words than it has in place.

    An ASCII line is cut in place by ``translate`` and ``split`` with a limit, which makes
    no match object per word before the label (the long way took 30 µs a mention).
    """
    if text.isascii():
        gapped = text.lower().translate(_ASCII_GAPS)  # the words of _tokens, in place
        rest = gapped.split(None, index)[-1] if index else gapped.lstrip()
        start = len(gapped) - len(rest)
        label = rest.split(None, len(words))
        if label[:len(words)] != list(words):
            return None
        head = rest[:len(rest) - len(label[-1])] if len(label) > len(words) else rest
        return start, start + len(head.rstrip())
    found = list(islice(_WORD.finditer(text), index, index + len(words)))
    if len(found) != len(words):
        return None
    start, end = found[0].start(), found[-1].end()
    # a decomposed accent or a case folding to more letters cut the words elsewhere
    return (start, end) if _words(text[start:end]) == words else None


# A link reference definition "[label]: destination" (what the parser classifies RULE
# besides "---" and "===" rules, which hold no words).
def _destination(line: str) -> str:
    """What a reference definition mentions: a page its destination names, never a note.

    "[RFC 1068]: https://github.com/…/1068-rust-governance.md" names RFC 1068 (200 Rust
    RFCs cite each other so). "[UFCS]: 0132-ufcs.md" is a link to a note, made where
    "[UFCS]" is used (Foam writes one beside each wikilink); "[motivation]: #motivation"
    points into the note itself (in 400 RFCs it mentioned another RFC's "motivation.md").
    """
    m = REF_DEF.match(line)  # the parser's own: a line it read as a definition
    if m is None:
        return ""
    dest = m.group(2)
    if dest.startswith("<"):  # "<a file name.md>": the destination between the brackets
        dest = dest[1:-1]
    if not dest or dest.startswith("#"):
        return ""
    path, escaped = resolve_relative(dest, "")
    return "" if path is not None or escaped else dest


# file line, text to scan, text to cite, whether a table row, and which piece of its line
# (0 but on a line cut into several chunks: the chunks' order within the line)
_Line = tuple[int, str, str, bool, int]


def _prose(chunks: Sequence[ChunkText]) -> tuple[list[_Line], Mapping[str, str]]:
    """A ``_Line`` for each prose line (or piece of one) of a note's chunks, given in
    their order; and the note's link reference definitions.

    The text to scan has inline code and comments masked; code lines and headings are
    left out. Why: "## Motivation" in 600 Rust RFCs mentioned one RFC's "motivation.md",
    and JSON in a fence mentioned notes by its keys. A heading names a section of this
    note; what the section says about another note is in its prose.

    The chunks are put back in their lines and classified by the parser's own scanner
    (chunk by chunk would be wrong: a long fenced block is cut into chunks by lines, so
    a chunk may start inside it). A line cut into pieces (one over the chunk budget) is
    classified whole and each piece scanned on its own.
    """
    pieces: dict[int, list[str]] = {}
    for chunk in chunks:
        for offset, piece in enumerate(chunk.text.split("\n")):
            pieces.setdefault(chunk.line_start + offset, []).append(piece)
    if not pieces:
        return [], {}
    first = min(pieces)
    body = [" ".join(pieces.get(n, ())) for n in range(first, max(pieces) + 1)]
    scanned, references, _ = scan_body(body, 0)
    out: list[_Line] = []
    for n, line in enumerate(scanned, first):
        if line.kind in (CODE, HEADING) or n not in pieces:
            continue
        texts = pieces[n]
        if line.kind != TEXT:  # a rule, or a reference definition: its destination only
            if dest := _destination(texts[0]):
                out.append((n, dest, texts[0], line.table, 0))
        elif len(texts) == 1:
            out.append((n, line.masked, texts[0], line.table, 0))
        else:
            out.extend((n, mask_inline(piece, 0)[0], piece, line.table, k)
                       for k, piece in enumerate(texts))
    return out, references
