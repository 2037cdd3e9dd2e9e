"""The context pipeline: direct hits → link expansion → rank → cut to budget.

1. Direct: an exact name match (title, file stem, alias, path), a label the question spells
   out in full (it *names* the entity, as prose mentions a note), full-text hits on entity
   labels/aliases/literal values, and full-text hits on chunk text mapped to the entity
   the chunk speaks for. With vectors, the chunks they find join the text's, fused into
   one list by strength (``_fused``); an entity only they find is ``Semantic``.
2. Linked: outgoing and incoming live facts from the hits, ``link_depth`` hops, scored by
   the parent's score × hop decay × the fact's confidence × a hub penalty.
3. Order (``rank.cover_order``): one entity at a time, each pick the one whose score plus
   what it adds is highest — the question's words its matched chunks hold and no entity
   above it holds, and a link to an entity above it. So the second hop of a question
   (the note the first one names, holding what the first does not) climbs past a second
   note about the first hop. Keep ``max_entities``, attach facts and evidence, fit
   ``max_tokens``.
Every score carries its reasons (``explain=True``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..domain.supersession import live_status
from ..domain.words import STOPWORDS, name_key, named_words, written_acronyms
from ..store import StoreReader, TextQuery
from ..types import (
    ContextEntity,
    ContextSummary,
    EntityRow,
    Evidence,
    FactRow,
    KnowledgeContext,
    Relevance,
)
from . import fulltext, rank
from .adaptive import adaptive_sum, context_scale
from .budget import Loader, Measure, pack
from .dated import by_date
from .factrank import POOL, fact_terms, rank_facts
from .query import (
    acronym,
    fold,
    initialisms,
    label_words,
    name_words,
    named_spans,
    query_terms,
)
from .records import by_record

# the top k chunks by vector, (chunk id, cosine), and the cosine's (mean, sd) over every
# chunk, or None when unknown
SemanticSearch = Callable[[str, int],
                          tuple[list[tuple[int, float]], tuple[float, float] | None]]


@dataclass(slots=True)
class _Cand:
    score: float = 0.0
    relevance: Relevance = "Direct"
    signals: list[float] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    chunks: dict[int, float] = field(default_factory=dict)
    via: tuple[int, str, str] | None = None  # (parent id, predicate, "out" | "in")
    links: dict[int, tuple[float, str]] = field(default_factory=dict)  # hit -> (conf, pred)
    # the question's words that name it without being its label's ("non lexical lifetimes"
    # for 2094-nll, "hpa" for Horizontal Pod Autoscaler): they count as words it holds
    naming: set[str] = field(default_factory=set)
    wiki: bool = False  # a page of the vault's wiki, boosted (``_wiki_first``)


@dataclass(frozen=True, slots=True)
class ContextOptions:
    max_entities: int = 20
    link_depth: int = 1
    expand_links: bool = True
    max_facts: int = 20
    max_tokens: int | None = None
    max_evidence: int = 8
    scopes: Sequence[str] | None = None
    as_of: str | None = None
    valid_at: str | None = None
    min_confidence: float = 0.0
    trusts: Sequence[str] | None = None
    explain: bool = False
    # the iri prefix of the vault's wiki pages (``kw:note/wiki/``), whose direct hits get
    # ``WIKI_BOOST``; None: no wiki. ``wiki_skip``: its generated pages (index, log)
    wiki_iri: str | None = None
    wiki_skip: tuple[str, ...] = ()


def build_context(reader: StoreReader, query: str, opts: ContextOptions, *, measure: Measure,
                  semantic: SemanticSearch | None = None, embedding_status: str = "none",
                  notes: tuple[str, ...] = (), fresh: tuple[bool, int] | None = None
                  ) -> KnowledgeContext:
    """Answer ``query`` with ranked, cited entities (see the module docstring).

    ``fresh``: whether the store has caught up with its vault and how many changed files
    it has not applied yet (a server's catch-up), said in the summary and, when not
    fresh, in a note."""
    freqs = fulltext.frequencies(reader, query_terms(query), table="chunk", scopes=opts.scopes)
    cands, known, text_hits = _direct(reader, query, opts, freqs)
    if semantic is None:
        dated = _dated(reader, query, dict(text_hits))
        _add_chunk_hits(reader, cands, _scaled(dated[0], "text"),
                        dict.fromkeys(dated[1], _NEAR))
    else:
        vector_hits, moments = semantic(query, 40)
        _add_chunk_hits(reader, cands, *_fused(
            reader, query, freqs, text_hits, _text_then(reader, vector_hits, opts), moments,
            opts.scopes, partial=embedding_status.startswith("partial")))
    _existing(reader, cands, opts)
    for c in cands.values():
        c.score = rank.combine_signals(c.signals)
    if opts.wiki_iri:
        _wiki_first(reader, cands, opts.wiki_iri, opts.wiki_skip)
    if opts.expand_links and opts.link_depth > 0:
        _expand(reader, cands, opts)
        _existing(reader, cands, opts)
    ranked, rows = _cover(reader, cands, freqs, opts, known)
    top = max((c.score for _, c in ranked), default=0.0)
    if top > 1.0:  # keep the best answer at 1.0, the rest in proportion
        for _, c in ranked:
            c.score /= top
    load = _Loader(reader, ranked, rows, opts, query_terms(query))
    ranked = [(e, c) for e, c in ranked if e in load.rows]
    if fresh is not None and not fresh[0]:
        pending = f"{fresh[1]} changed files not applied yet" if fresh[1] else "changes"
        notes = (*notes, f"the vault is still being indexed ({pending}): what is not indexed"
                         " yet is missing from this answer; ask again shortly")
    header = KnowledgeContext(
        query=query, entities=(), evidence=(), explain=opts.explain, notes=notes,
        summary=ContextSummary(0, 0, 0, 0, 0, tokens=0, truncated=False,
                               embedding_status=embedding_status,
                               index_fresh=None if fresh is None else fresh[0],
                               pending_changes=None if fresh is None else fresh[1]))
    return pack(header, entities=[(c.score, load.one(eid)) for eid, c in ranked],
                evidence=_evidence(reader, ranked, opts), max_tokens=opts.max_tokens,
                measure=measure, finish=lambda ctx: _finish(ctx, ranked))


# How much a wiki page the question hits directly gains: the seed's "check the wiki
# first", kept small so that a page never buries the note it summarises.
WIKI_BOOST = 1.2


def _wiki_first(reader: StoreReader, cands: dict[int, _Cand], prefix: str,
                skip: tuple[str, ...]) -> None:
    """Boost and mark the direct hits that are pages of the vault's wiki."""
    direct = [e for e, c in cands.items() if c.relevance == "Direct"]
    if not direct:
        return
    for eid, row in reader.entities(direct).items():
        if row.iri.startswith(prefix) and row.iri not in skip:
            c = cands[eid]
            c.score *= WIKI_BOOST
            c.wiki = True
            c.why.append(f"a wiki page: checked first (score ×{WIKI_BOOST})")


def _existing(reader: StoreReader, cands: dict[int, _Cand], opts: ContextOptions) -> None:
    """Drop the entities outside ``scopes``, and with ``as_of`` those the store did not
    hold yet at that time.

    Their facts are filtered already; without this an exact name match or a link from an
    entity in scope brought in an entity of another scope, and an answer "as of" a time
    before a note was written still listed the note, with no facts. (Names and labels are
    the current ones: the store keeps no history of a label.)
    """
    as_of, scopes = opts.as_of, opts.scopes
    if (as_of is None and not scopes) or not cands:
        return
    rows = reader.entities(list(cands))
    for eid in [e for e in cands if e not in rows
                or (as_of is not None and rows[e].created_at > as_of)
                or (scopes and rows[e].scope not in scopes)]:
        del cands[eid]


def _text_then(reader: StoreReader, hits: list[tuple[int, float]], opts: ContextOptions
               ) -> list[tuple[int, float]]:
    """Only the chunk hits of documents in ``scopes``, and with ``as_of`` only those whose
    text the store held at that time.

    Vectors index every scope's chunks; full text and vectors index the current versions,
    so a chunk of a version recorded later matched words that were not written yet.
    """
    as_of, scopes = opts.as_of, opts.scopes
    if (as_of is None and not scopes) or not hits:
        return hits
    rows = reader.chunks([cid for cid, _ in hits])
    return [(cid, s) for cid, s in hits if cid in rows
            and (as_of is None or rows[cid].recorded_at <= as_of)
            and (not scopes or rows[cid].scope in scopes)]


def _finish(ctx: KnowledgeContext, ranked: list[tuple[int, _Cand]]) -> KnowledgeContext:
    """Recount the summary and the evidence chain for the entities actually kept."""
    es = ctx.entities
    summary = replace(
        ctx.summary, total_entities=len(es),
        total_facts=sum(len(e.facts) + len(e.incoming) for e in es),
        direct_hits=sum(e.relevance == "Direct" for e in es),
        linked_additions=sum(e.relevance == "Linked" for e in es),
        semantic_hits=sum(e.relevance == "Semantic" for e in es))
    return replace(ctx, summary=summary, evidence_chain=tuple(_chain(list(es), ranked)))


def _direct(reader: StoreReader, query: str, opts: ContextOptions,
            freqs: list[tuple[str, int]]
            ) -> tuple[dict[int, _Cand], dict[int, frozenset[str]], list[tuple[int, float]]]:
    """The entities the question names or whose labels and values match it, the terms
    each chunk hit is known to hold (``fulltext.search_chunks_holding``), and the chunk
    hits by full text, (chunk id, BM25), best first."""
    cands: dict[int, _Cand] = {}
    key = name_key(query)
    if key:
        for eid in reader.lookup_names([key], referred=True, scopes=opts.scopes).values():
            c = cands.setdefault(eid, _Cand())
            c.signals.append(rank.EXACT_SCORE)
            c.why.append("exact name match")
    hits = fulltext.search_entities(reader, query, limit=50, scopes=opts.scopes)
    qlist = name_words(query)
    qwords = {fold(w) for w in qlist}
    # labels the question may spell by their initials ("non-lexical lifetimes", 2094-nll)
    initials = initialisms(qlist)
    if initials:
        seen = {h.id for h in hits}
        # one lookup on the label column, unranked by term counts: a label either is
        # one of these words or is not named by them
        match = TextQuery(tuple(initials), field="label")
        spelled = [h for h in reader.search_entities(match, limit=20, scopes=opts.scopes)
                   if h.id not in seen]
    else:
        spelled = []
    found = hits + spelled
    rows = reader.entities([h.id for h in found])
    labels = {h.id: label_words(rows[h.id].label) for h in found if h.id in rows}
    named = named_spans(qlist, labels, initials, {e: acronym(rows[e].label, words)
                                                  for e, words in labels.items()}
                        if initials else None)
    for h in hits + [h for h in spelled if h.id in named]:
        c = cands.setdefault(h.id, _Cand())
        if h.id in named:
            start, end = named[h.id]
            c.signals.append(rank.NAMED_SCORE)
            if end - start == len(labels[h.id]):
                c.why.append("named in the question")
            else:
                c.why.append("named in the question by its initials")
                c.naming.update(qlist[start:end])
            continue
        label = labels.get(h.id, [])
        coverage = sum(fold(w) in qwords for w in label) / len(label) if label else 0.0
        c.signals.append(rank.label_score(coverage))
        c.why.append(f"label/alias/value match (label coverage {coverage:.2f})")
    # an acronym the question writes in capitals names the label it abbreviates ("HPA",
    # "Horizontal Pod Autoscaler"); in lower case it is a word ("war", "cat")
    capitals = written_acronyms(query)
    for eid, short in reader.spelled_by(capitals, scopes=opts.scopes) if capitals else ():
        c = cands.setdefault(eid, _Cand())
        c.naming.add(short)
        if rank.NAMED_SCORE not in c.signals:
            c.signals.append(rank.NAMED_SCORE)
            c.why.append("named in the question by its acronym")
    chunk_hits, holding = fulltext.search_chunks_holding(reader, query, limit=40,
                                                         scopes=opts.scopes, freqs=freqs)
    held = frozenset(holding)
    return (cands, ({h.id: held for h in chunk_hits} if held else {}),
            _text_then(reader, [(h.id, h.score) for h in chunk_hits], opts))


# A scored chunk hit: chunk id, score, what found it ("text", "vector", "text and vector")
_Hit = tuple[int, float, str]


def _scaled(hits: Mapping[int, float], what: str) -> list[_Hit]:
    """Chunk hits of one kind, scaled against the best of them (``rank.chunk_hit_score``)."""
    best = max(hits.values(), default=0.0)
    return [(cid, rank.chunk_hit_score(s, best), what) for cid, s in hits.items()]


_NEAR = ", dated near the question's date"


def _dated(reader: StoreReader, query: str, scores: dict[int, float]
           ) -> tuple[dict[int, float], frozenset[int]]:
    """``dated.by_date``'s scores, and the chunks it raised (for ``--explain``)."""
    out = by_date(reader, query, scores)
    return out, frozenset(cid for cid, s in out.items() if s != scores.get(cid))


def _fused(reader: StoreReader, query: str, freqs: list[tuple[str, int]],
           text: list[tuple[int, float]], vector: list[tuple[int, float]],
           moments: tuple[float, float] | None, scopes: Sequence[str] | None = None,
           *, partial: bool = False) -> tuple[list[_Hit], dict[int, str]]:
    """Text and vector chunk hits as one list, fused as ``search --mode hybrid`` fuses
    them (``adaptive.adaptive_sum``: BM25's corpus z-scores weighed by the store's size,
    the vectors', agreement), raised by a list's best line (``records.by_record``) and
    the question's date (``dated.by_date``) and scaled against the best; and what raised
    which chunk, for the reasons.

    BM25's scale is search's unless the question writes a name the store holds in few
    chunks (``adaptive.context_scale``): then the text that spells it counts more.
    ``partial``: some chunks have no vector yet; those the text found are not taken for
    dissimilar (``adaptive_sum``'s ``unembedded``).

    Why one list: scored apart, the best text hit scored the most whatever its words were
    worth, and a chunk only vectors found counted for 0.6 of a text hit of its rank, so it
    could never pass it. Why not fixed weights (0.3 / 0.7 until 2026-12-02): BM25's
    z-scores grow with the store, and at LoCoMo's ~100 chunks a conversation they gave
    BM25 a third of the voice they gave it at SciFact's 9,902 (``bench/README.md``).
    """
    if not vector:
        scores, dated = _dated(reader, query, dict(text))
        return _scaled(scores, "text"), dict.fromkeys(dated, _NEAR)
    in_text = {cid for cid, _ in text}
    # a chunk only vectors found counts when it is similar enough to show; it still takes
    # part in the fusion (a run's missing items get its lowest z-score)
    shown = {cid for cid, s in vector if cid in in_text
             or rank.vector_worth_showing(s, moments)}
    n = reader.live_chunk_count(scopes)  # the reader's scopes: theirs alone
    named = [t for w in named_words(query) for t in query_terms(w) if t not in STOPWORDS]
    # (without the corpus's moments, a run's own items give them)
    plain = adaptive_sum([text, vector], stats=[rank.bm25_moments([s for _, s in text], n),
                                                moments], n=n,
                         scale=context_scale(named, dict(freqs), n),
                         unembedded=reader.unembedded([c for c, _ in text]) if partial
                         else ())
    lined = by_record(reader, query, plain, [cid for cid, _ in text])
    fused, dated = _dated(reader, query, lined)
    # (what a list's best line raised, said as the date is: among the chunks shown first)
    raised = {cid: ", its best line holds the question's words" for cid, s in lined.items()
              if s > plain[cid]}
    best = max(fused.values())
    in_vector = {cid for cid, _ in vector}
    return [(cid, rank.chunk_hit_score(max(s, 0.0), best),
             "text and vector" if cid in in_text and cid in in_vector
             else "text" if cid in in_text else "vector")
            for cid, s in fused.items() if cid in in_text or cid in shown], {
                **raised, **{cid: raised.get(cid, "") + _NEAR for cid in dated}}


def _add_chunk_hits(reader: StoreReader, cands: dict[int, _Cand], hits: list[_Hit],
                    raised: Mapping[int, str]) -> None:
    """Credit each chunk hit to the entities it speaks for: one signal per entity, its
    best chunk's. An entity found only by vectors is a ``Semantic`` hit. ``raised``: what
    raised a chunk (its date, its best line), said in the reasons."""
    if not hits:
        return
    owners = reader.chunk_entities([cid for cid, _, _ in hits])
    best: dict[int, tuple[float, str, int]] = {}
    for cid, base, what in hits:
        for i, eid in enumerate(owners.get(cid, [])):
            score = base if i == 0 else base * rank.CITED_FACTOR
            c = cands.get(eid)
            if c is None:
                c = cands[eid] = _Cand(relevance="Semantic" if what == "vector" else "Direct")
            elif what != "vector":
                c.relevance = "Direct"
            c.chunks[cid] = max(c.chunks.get(cid, 0.0), score)
            if score > best.get(eid, (-1.0, "", 0))[0]:
                best[eid] = (score, what, cid)
    for eid, (score, what, cid) in best.items():
        cands[eid].signals.append(score)
        cands[eid].why.append(f"chunk {what} match (score {score:.2f}{raised.get(cid, '')})")


def _expand(reader: StoreReader, cands: dict[int, _Cand], opts: ContextOptions) -> None:
    frontier = {e: c.score for e, c in sorted(cands.items(), key=lambda kv: -kv[1].score)
                [: max(opts.max_entities, 10)]}
    for hop in range(1, opts.link_depth + 1):
        edges = reader.edges(frontier, as_of=opts.as_of, min_confidence=opts.min_confidence,
                             trusts=opts.trusts, scopes=opts.scopes, valid_at=opts.valid_at)
        reached: dict[int, tuple[float, int, str, str, float]] = {}
        weight, best = frontier.get, reached.get
        for src, dst, pred, conf in edges:
            if src == dst:
                continue
            if hop == 1 and src in cands and dst in cands:
                # hits that name each other: the ordering step credits the link when one
                # of them is placed above the other (``rank.cover_order``)
                for a, b in ((src, dst), (dst, src)):
                    if conf > cands[a].links.get(b, (0.0, ""))[0]:
                        cands[a].links[b] = (conf, pred)
            # each end reached from the other, if that one is in the frontier; a tie keeps
            # the edge met first
            w = weight(src)
            if w is not None and ((r := best(dst)) is None or w * conf > r[0]):
                reached[dst] = (w * conf, src, pred, "out", conf)
            w = weight(dst)
            if w is not None and ((r := best(src)) is None or w * conf > r[0]):
                reached[src] = (w * conf, dst, pred, "in", conf)
        # Why only the best few get a degree: the hub penalty only lowers scores, so the
        # children that can still rank are the ones already ahead before it.
        keep = max(3 * opts.max_entities, 30)
        reached = dict(sorted(reached.items(), key=lambda kv: -kv[1][0])[:keep])
        degrees = reader.degrees(reached)
        # what vectors alone found is no anchor: a fact from it relabels nothing
        anchored = {e for e in frontier if cands[e].relevance != "Semantic"}
        nxt: dict[int, float] = {}
        for child, (_, parent, pred, direction, conf) in reached.items():
            score = rank.linked_score(frontier[parent], conf, degrees.get(child, 0))
            c = cands.get(child)
            if c is None:
                c = cands[child] = _Cand(relevance="Linked", via=(parent, pred, direction))
                c.why.append(f"hop {hop}: {direction} {pred} from #{parent} (conf {conf:.2f},"
                             f" degree {degrees.get(child, 0)})")
            elif c.relevance == "Semantic" and parent in anchored:
                # found by vectors and reached through a fact from a hit of the question's
                # words or names: the fact is what ties it to the question (Kestrel Queue
                # "runs_on node-altair"), and it adds to the score
                c.relevance, c.via = "Linked", (parent, pred, direction)
                c.why.append(f"hop {hop}: {direction} {pred} from #{parent} (conf {conf:.2f},"
                             f" degree {degrees.get(child, 0)}), also a vector match")
                c.score = rank.combine_signals([c.score, score])
                nxt[child] = c.score
                continue
            elif c.relevance != "Linked":
                continue  # a hit keeps its own score; its links count in the ordering
            elif score <= c.score:
                continue
            else:
                c.via = (parent, pred, direction)
            c.score = score
            nxt[child] = score
        frontier = dict(sorted(nxt.items(), key=lambda kv: -kv[1])[:50])
        if not frontier:
            break


def _cover(reader: StoreReader, cands: dict[int, _Cand], freqs: list[tuple[str, int]],
           opts: ContextOptions, known: Mapping[int, frozenset[str]]
           ) -> tuple[list[tuple[int, _Cand]], dict[int, EntityRow]]:
    """The best ``max_entities`` by score, reordered as ``rank.cover_order`` picks them,
    and their entity rows (read once here, for labels, and again used to load them).

    What an entity holds: the question's terms found in the chunks that matched it (text
    and vector hits, tokenised as the index tokenises) and in its label; terms weigh by
    BM25's IDF. Bounded: only the entities already cut to ``max_entities`` and the chunks
    already fetched for them (at most the 40 text and 40 vector hits), never the vault.
    Why not a wider pool: letting the next ``max_entities`` in too gave the same HotpotQA
    numbers at twice the tokenising cost.
    """
    pool = sorted(cands.items(), key=lambda kv: (-kv[1].score, kv[0]))[: opts.max_entities]
    # A term no chunk holds covers nothing. A term full text dropped as far too common has
    # a count that stops at the pruning bar (``fulltext.frequencies``), so it weighs a
    # little more than its exact count would give, still little beside a rare term
    # (HotpotQA dev50: the same R@2, 0.91, as with exact counts).
    terms = [(w, df) for w, df in freqs if df > 0]
    index = {w: i for i, (w, _) in enumerate(terms)}
    n = reader.live_chunk_count(opts.scopes) if terms else 0
    weights = [rank.term_weight(df, n) for _, df in terms]
    chunk_ids = sorted({cid for _, c in pool for cid in c.chunks})
    # a chunk known to hold every term (an AND hit of all of them) is not tokenised again
    words = frozenset(w for w, _ in terms)
    held_by_chunk: dict[int, Collection[str]] = {
        cid: words for cid in chunk_ids if words <= known.get(cid, frozenset())}
    rest = [cid for cid in chunk_ids if cid not in held_by_chunk]
    if terms and rest:
        held_by_chunk.update(reader.chunk_terms(rest, [w for w, _ in terms]))
    rows = reader.entities([e for e, _ in pool])
    items = []
    for eid, c in pool:
        held = {index[w] for cid in c.chunks for w in held_by_chunk.get(cid, ())}
        if eid in rows:
            held.update(index[w] for w in name_words(rows[eid].label) if w in index)
        held.update(index[w] for w in c.naming if w in index)
        items.append((eid, c.score, frozenset(held)))
    links = {e: {nb: conf for nb, (conf, _) in c.links.items()} for e, c in pool if c.links}
    out = []
    for pick in rank.cover_order(items, weights, links=links, limit=opts.max_entities):
        c = cands[pick.key]
        if pick.cover > 0:
            c.why.append(f"+{rank.COVER_GAIN * pick.cover:.2f}: holds {pick.cover:.0%} of the"
                         " question's term weight no entity above it holds")
        if pick.linked_to is not None:
            conf, pred = c.links[pick.linked_to]
            c.why.append(f"+{pick.link:.2f}: {pred} link with #{pick.linked_to}, placed above"
                         f" (conf {conf:.2f})")
        c.score = pick.score
        out.append((pick.key, c))
    return out, rows


_TYPES_AHEAD = 4  # entities whose types are read together (see ``_Loader._types``)


class _Loader:
    """Load one ranked entity with its facts on demand (the packer decides which).

    In two steps when the packer asks: its own facts first (enough to cost its smallest
    form), the facts pointing at it only if that form fits. Each is read once.
    """

    def __init__(self, reader: StoreReader, ranked: list[tuple[int, _Cand]],
                 rows: dict[int, EntityRow], opts: ContextOptions,
                 terms: Sequence[str] = ()) -> None:
        self.reader, self.opts, self.terms = reader, opts, terms
        self.cands = dict(ranked)
        self.rows = rows
        self.order = [e for e, _ in ranked]
        self.rank = {e: i for i, e in enumerate(self.order)}
        self.types: dict[int, list[str]] = {}
        self.typed: set[int] = set()
        self.own: dict[int, tuple[FactRow, ...]] = {}

    def one(self, eid: int) -> Loader:
        return lambda incoming=True, facts=None: self.load(eid, incoming=incoming, facts=facts)

    def _types(self, eid: int) -> list[str]:
        """``eid``'s types, read with those of the next few ranked entities not read yet.

        Why not all at once: the packer asks in rank order and, under a budget, stops after
        the first few; reading the types of every candidate cost more than the rest.
        """
        if eid not in self.typed:
            i = self.rank[eid]
            batch = [e for e in self.order[i:i + _TYPES_AHEAD] if e not in self.typed]
            self.types.update(self.reader.types(batch))
            self.typed.update(batch)
        return self.types.get(eid, [])

    def _first(self, eid: int, facts: list[FactRow]) -> tuple[FactRow, ...]:
        """The facts best first for the question (``factrank``); a status another
        document's ``superseded`` outranks left out (``live_status``)."""
        row = self.rows[eid]
        return rank_facts(live_status(facts), fact_terms(self.terms, row.label),
                          own_document=row.document_id)

    def _read(self, eid: int, *, out_limit: int, in_limit: int
              ) -> tuple[list[FactRow], list[FactRow]]:
        o = self.opts
        out, inc = self.reader.entity_facts(
            eid, out_limit=out_limit, in_limit=in_limit, as_of=o.as_of, scopes=o.scopes,
            min_confidence=o.min_confidence, trusts=o.trusts, valid_at=o.valid_at,
            own_document=self.rows[eid].document_id)
        return [f for f in out if not _pageless_folder(f)], inc

    def load(self, eid: int, *, incoming: bool = True, facts: int | None = None
             ) -> ContextEntity:
        o = self.opts
        own = self.own.get(eid)
        if own is None and facts == 0:
            return self._entity(eid, (), [])  # the packer's first look at the best-ranked
        in_limit = max(1, o.max_facts // 2) if incoming and facts is None else 0
        if own is None:
            # a pool of its facts, so the best ``max_facts`` for the question are chosen
            # among them, not the oldest (an edited fact is the newest)
            out, inc = self._read(eid, out_limit=max(o.max_facts, POOL), in_limit=in_limit)
            own = self.own[eid] = self._first(eid, out)[:o.max_facts]
        else:
            inc = self._read(eid, out_limit=0, in_limit=in_limit)[1] if in_limit else []
        return self._entity(eid, own if facts is None else own[:facts], inc)

    def _entity(self, eid: int, facts: tuple[FactRow, ...], incoming: list[FactRow]
                ) -> ContextEntity:
        c, row = self.cands[eid], self.rows[eid]
        return ContextEntity(
            iri=row.iri, label=row.label, types=tuple(self._types(eid)),
            relevance=c.relevance, score=c.score, facts=facts,
            incoming=tuple(incoming), why=tuple(c.why), entity_id=eid, wiki=c.wiki)


def _pageless_folder(f: FactRow) -> bool:
    """Whether ``f`` points at a folder no note is the page of (its name's IRI ends in a
    slash, ``domain.names.folder_key``): the folder says nothing an answer could use."""
    return f.value_type == "Entity" and f.value.endswith("/")


def _evidence(reader: StoreReader, ranked: list[tuple[int, _Cand]], opts: ContextOptions
              ) -> list[Evidence]:
    scored: dict[int, float] = {}
    for _, c in ranked:
        for cid, s in c.chunks.items():
            scored[cid] = max(scored.get(cid, 0.0), s)
    order = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[Evidence] = []
    start, want = 0, opts.max_evidence
    # read as many as are wanted, then more only for those left out
    while len(out) < want and start < len(order):
        part = order[start:start + want - len(out)]
        start += len(part)
        rows = reader.chunks([cid for cid, _ in part])
        out += [Evidence(chunk_id=cid, path=rows[cid].path, heading=rows[cid].heading_path,
                         line_start=rows[cid].line_start, line_end=rows[cid].line_end,
                         text=rows[cid].text, score=s)
                for cid, s in part if cid in rows and says_something(rows[cid].text)]
    return out


def says_something(text: str, need: int = 3) -> bool:
    """Whether a chunk holds more than headings and a word or two (``need`` words outside
    headings): "## Infrastructure Needed / None.", a run of headings. Such a chunk can
    match a question best (its heading path names the note, and BM25 favours short rows)
    yet tells the reader nothing, so it is no evidence; the entity it speaks for still
    ranks by it. Under a heading that asks a question, a word is an answer (a KEP's "Will
    enabling this feature result in new API types?" / "No."). With ``need`` 1: whether it
    holds any text but headings (what ``search`` asks).

    >>> says_something("## Infrastructure Needed\\n\\nNone."), says_something("# A\\n\\n## B")
    (False, False)
    >>> says_something("## Status\\n\\nAccepted by the team."), says_something("## New API?\\nNo.")
    (True, True)
    >>> says_something("## Drawbacks", 1), says_something("## Drawbacks\\nN/A", 1)
    (False, True)
    """
    words = 0
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            if line.rstrip().endswith("?"):
                need = 1
        else:  # words by blanks, and no more of them than are needed
            words += len(line.split(None, need))
            if words >= need:
                return True
    return False


def _chain(entities: list[ContextEntity], ranked: list[tuple[int, _Cand]]) -> list[str]:
    labels = {e.entity_id: e.label for e in entities}
    out = []
    for eid, c in ranked:
        if c.via and c.via[0] in labels and eid in labels:
            parent, pred, direction = c.via
            a, b = (labels[parent], labels[eid]) if direction == "out" else (labels[eid],
                                                                               labels[parent])
            out.append(f"{a} --[{pred}]--> {b}")
    return out
