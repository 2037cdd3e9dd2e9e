"""Token counting and fitting an answer to a budget.

Budgets count what is sent: the caller passes a ``Measure``, which renders the answer in
the format the agent receives and counts its tokens; packing drops the lowest-scored item
(entity or evidence chunk) until the rendered answer fits.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidQuery
from ..types import ContextEntity, Evidence, KnowledgeContext

_lock = threading.Lock()
_Count = Callable[[str], int]


@lru_cache(maxsize=4)
def _counter(name: str) -> _Count:
    """How ``count_tokens`` counts under encoding ``name``.

    Why not ``bpe_openai.get_encoding``: importing that package builds Python rank tables
    for three encodings (~1 s, paid by every CLI call) that counting never reads. Its
    compiled tokenizer carries its own tables and loads in ~0.1 s, so it is loaded alone;
    should the package's layout ever differ, the public API is used instead.
    """
    with _lock:
        try:
            tokenizer = _bindings().tokenizer_for_encoding(name)
        except Exception:  # noqa: BLE001 - any surprise in a private layout: take the API
            with warnings.catch_warnings():
                # it loads its tables with importlib.resources.open_binary, deprecated since
                # Python 3.11; the warning is theirs, not the caller's
                warnings.simplefilter("ignore", DeprecationWarning)
                import bpe_openai  # type: ignore[import-untyped]

                encoding = bpe_openai.get_encoding(name)
            return lambda text: len(encoding.encode_ordinary(text))

    def count(text: str) -> int:
        try:
            return int(tokenizer.count(text))
        except UnicodeEncodeError:  # lone surrogates: replaced, as the package's API does
            return int(tokenizer.count(
                text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")))

    return count


def _bindings() -> Any:
    """``bpe_openai._bindings``, imported without running the package's ``__init__``."""
    name = "bpe_openai._bindings"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bpe_openai is not installed")
    for folder in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"_bindings{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader(name, str(path))
                module_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                if module_spec is None:
                    break
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                sys.modules[name] = module  # the package, if imported later, reuses it
                return module
    raise ImportError("bpe_openai's compiled tokenizer was not found")


def count_tokens(text: str, *, encoding: str = "o200k_base") -> int:
    """Tokens of ``text`` under an OpenAI encoding (offline tables; no download)."""
    if not text:
        return 0
    return _counter(encoding)(text)


# Where o200k/cl100k never join two tokens, so the count of a text is the sum of its
# segments' counts. Their pre-tokenisers cut text into pieces and merge bytes only inside a
# piece, and a piece never spans these points:
# - right after a dict's opening `{"`, before a lower-case key: the run of two or more
#   punctuation marks ends there (a single mark could prefix the letters instead);
# - right after a newline followed (past blanks) by a printable ASCII character other than
#   `/`: no pattern continues past a newline except a whitespace run ending in another
#   newline, or a punctuation run taking `\r`, `\n` or `/` right after it.
# Other encodings (gpt2-style patterns join a newline with the next line's indentation;
# voyage3's were not checked) are counted whole.
# (A match ends where a segment may end; no look-behind, which would be tried at every
# character: 4x slower on an answer. Two expressions, not one alternation: each then
# scans for its own first character, 4-5x faster on a JSON answer, which holds no newline.)
_CUT_DICT = re.compile(r'\{"(?=[a-z])')
_CUT_LINE = re.compile(r'\n(?=[ \t]*[!-.0-~])')
_SEGMENTED = frozenset({"o200k_base", "cl100k_base"})
_CACHE_ENTRIES = 1 << 16


class TokenCounter:
    """Count tokens exactly as ``count_tokens`` does, segment by segment, caching segments.

    Why: an answer is counted many times while it is packed (each item alone, then the
    whole), and its facts, citations and lines recur across those renderings and across
    queries. Split at points no token spans, a rendering costs dictionary lookups for what
    was counted before and encodes only new segments.
    """

    def __init__(self, encoding: str = "o200k_base", *, entries: int = _CACHE_ENTRIES) -> None:
        self.encoding = encoding
        self._segmented = encoding in _SEGMENTED
        self._entries = entries
        self._cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if not self._segmented:
            return count_tokens(text, encoding=self.encoding)
        cache, total = self._cache, 0
        for segment in segments(text):
            n = cache.get(segment)
            if n is None:
                if len(cache) >= self._entries:
                    cache.clear()  # simpler than LRU, and a full table turns over rarely
                n = cache[segment] = count_tokens(segment, encoding=self.encoding)
            total += n
        return total


def segments(text: str) -> list[str]:
    """``text`` cut at the points where no o200k/cl100k token spans (``_CUT_DICT``,
    ``_CUT_LINE``)."""
    ends = [m.end() for m in _CUT_DICT.finditer(text)]
    if "\n" in text:  # the two never end at one point: one ends after `"`, one after `\n`
        ends = sorted(ends + [m.end() for m in _CUT_LINE.finditer(text)])
    starts = [0, *ends]
    ends.append(len(text))
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


@lru_cache(maxsize=8)
def token_counter(encoding: str = "o200k_base") -> TokenCounter:
    """The process's shared counter for ``encoding`` (its cache serves every query)."""
    return TokenCounter(encoding)


# Why a floor: no rendered answer here packs more than this many characters into one token
# (English prose and JSON run at 3-4.5; code and CJK text lower), so a rendering whose
# length over this ratio already exceeds the room left cannot fit, and is not tokenized.
_MAX_CHARS_PER_TOKEN = 8


@dataclass(frozen=True, slots=True)
class Measure:
    """Render an answer as the agent will receive it and count its tokens."""

    render: Callable[[KnowledgeContext], str]
    count: Callable[[str], int]

    def __call__(self, ctx: KnowledgeContext) -> int:
        return self.count(self.render(ctx))

    def within(self, ctx: KnowledgeContext, limit: int) -> int | None:
        """The token count of ``ctx``, or None when it surely exceeds ``limit``."""
        text = self.render(ctx)
        if len(text) > limit * _MAX_CHARS_PER_TOKEN:
            return None
        return self.count(text)


Finish = Callable[[KnowledgeContext], KnowledgeContext]


class Loader(Protocol):
    """An entity, read when asked; ``incoming=False``: without the facts pointing at it;
    ``facts``: with at most its first that many facts (and none pointing at it)."""

    def __call__(self, incoming: bool = True, facts: int | None = None) -> ContextEntity: ...


_TRIMMED_FACTS = 5
_MAX_MISSES = 3


def pack(header: KnowledgeContext, *, entities: Sequence[tuple[float, Loader]],
         evidence: Sequence[Evidence], max_tokens: int | None, measure: Measure,
         finish: Finish) -> KnowledgeContext:
    """Build the answer from ranked items, cut to ``max_tokens`` as rendered.

    ``entities`` are loaders in rank order, so an entity's facts are read only when the
    budget may still hold it: the work grows with the budget, not with the candidates.
    Items (entities and evidence chunks) are taken in score order while they fit, each
    costed by rendering it alone; an entity that does not fit whole is tried without its
    "referenced by" list, then with its first few facts. The result is measured once more
    as a whole and trimmed if joining the pieces cost a token more. ``finish`` recomputes
    what depends on the chosen items (summary counts, the evidence chain).
    """
    if max_tokens is None:
        full = finish(replace(header, entities=tuple(load() for _, load in entities),
                              evidence=tuple(evidence)))
        return _settle(full, measure, truncated=False)

    # measured as sent when cut: the budget as its token count, truncated (see the end)
    preset = _preset(header, max_tokens, True)

    def build(ents: list[ContextEntity], evid: list[Evidence]) -> KnowledgeContext:
        return finish(replace(preset, entities=tuple(ents), evidence=tuple(evid)))

    base = measure(build([], []))
    if base > max_tokens:
        raise InvalidQuery(f"max_tokens {max_tokens} cannot hold even an empty answer to this"
                           f" query ({base} tokens with the question itself); raise it or"
                           " shorten the question")
    order: list[tuple[float, int, int]] = sorted(
        [(score, 1, i) for i, (score, _) in enumerate(entities)]
        + [(v.score, 0, i) for i, v in enumerate(evidence)], key=lambda t: (-t[0], -t[1], t[2]))
    used, misses, truncated = base, 0, False
    kept_e: dict[int, ContextEntity] = {}
    kept_v: dict[int, Evidence] = {}

    def cost(ctx: KnowledgeContext, room: int) -> int | None:
        """What adding an item costs, None when it cannot fit in ``room`` tokens."""
        n = measure.within(ctx, base + room)
        return None if n is None or n - base > room else n - base

    for _, kind, i in order:
        if misses >= _MAX_MISSES:
            truncated = True  # the rest rank lower still; stop costing them
            break
        room = max_tokens - used
        if kind == 0:
            c = cost(build([], [evidence[i]]), room)
            if c is not None:
                used, kept_v[i] = used + c, evidence[i]
                continue
        else:
            # The smallest form holds only the first few facts (none for the best-ranked
            # entity, which may shrink to its card: a tight budget kept lower-ranked
            # evidence and dropped it), so only those are read until it fits (most entities
            # past the first few do not). It is the last of ``_variants``.
            load, first = entities[i][1], not kept_e
            smallest = cost(build([load(facts=0 if first else _TRIMMED_FACTS)], []), room)
            if smallest is not None:
                # the smallest fits: take the largest that does (a miss costs one render)
                variants = _variants(load(), first)  # whole first, smallest last
                for n, item in enumerate(variants):
                    c = smallest if n == len(variants) - 1 else cost(build([item], []), room)
                    if c is not None:
                        used, kept_e[i] = used + c, item
                        truncated |= n > 0
                        break
                continue
        truncated, misses = True, misses + 1
    ents = [kept_e[i] for i in sorted(kept_e)]
    evid = [kept_v[i] for i in sorted(kept_v)]
    packed = build(ents, evid)
    while True:
        # rendered as the answer will be, but for the digits of its own token count
        total = measure(packed)
        if total <= max_tokens or not (ents or evid):
            break
        if evid and (not ents or evid[-1].score <= ents[-1].score):
            evid.pop()
        elif len(ents) == 1 and ents[0].facts:
            ents[0] = replace(ents[0], facts=ents[0].facts[:-1], incoming=())
        else:
            ents.pop()
        packed, truncated = build(ents, evid), True
    truncated |= len(ents) < len(entities) or len(evid) < len(evidence)
    if truncated:  # the count just made differs from the final one by its digits only
        return _preset(packed, _fixed_point(total - _number_tokens(max_tokens)), True)
    return _settle(packed, measure, truncated=False)


def _variants(e: ContextEntity, first: bool = False) -> list[ContextEntity]:
    """``e`` whole, then smaller: without "referenced by", with its first few facts, and
    for the ``first`` entity kept also with one fact and with none."""
    out = [e]
    if e.incoming:
        out.append(replace(e, incoming=()))
    if len(e.facts) > _TRIMMED_FACTS:
        out.append(replace(e, facts=e.facts[:_TRIMMED_FACTS], incoming=()))
    if first:
        out.extend(replace(e, facts=e.facts[:n], incoming=()) for n in (1, 0)
                   if len(e.facts) > n and len(out[-1].facts) > n)
    return out


def _preset(ctx: KnowledgeContext, tokens: int, truncated: bool) -> KnowledgeContext:
    return replace(ctx, summary=replace(ctx.summary, tokens=tokens, truncated=truncated))


def _number_tokens(n: int) -> int:
    # OpenAI encodings split digit runs into groups of at most three, context-free
    return -(-len(str(n)) // 3)


def _settle(ctx: KnowledgeContext, measure: Measure, *, truncated: bool) -> KnowledgeContext:
    """Set ``summary.tokens`` to the count of the answer that shows that very count.

    Rendered with ``tokens=0`` once; writing the real number changes only that number's
    own tokens (digit groups of three), so the fixed point is arithmetic, not re-rendering.
    """
    return _preset(ctx, _fixed_point(measure(_preset(ctx, 0, truncated)) - _number_tokens(0)),
                   truncated)


def _fixed_point(base: int) -> int:
    """The count n with n == base + tokens of n written out (``base`` excludes them)."""
    tokens = base + 1
    for _ in range(4):
        tokens = base + _number_tokens(tokens)
    return tokens
