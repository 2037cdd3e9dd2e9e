"""BM25 over ``tsvector`` columns, computed as SQLite's FTS5 computes ``bm25()``.

PostgreSQL's ``ts_rank`` is no BM25 (no IDF, no length normalisation of that form), so the
score is computed from stored statistics: each row's token count (``dl``: kept
with the postings), the live rows and their tokens (counts in ``meta``, kept by the writer), each
term's document frequency (a count on the GIN index) and its weighted frequency in the
row (``unnest(tsv)``: a column's weight is a lexeme weight, A for the first column).

FTS5's formula, for each query phrase that a row holds::

    idf = max(1e-6, ln((N - n + 0.5) / (n + 0.5)))
    score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

with ``tf`` the weighted count over columns, k1 = 1.2, b = 0.75. A term is stemmed by the
index's own configuration; a term of several tokens counts each of its lexemes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..records import TextQuery
from .connection import Con
from .connection import kept as kept_of

K1 = 1.2
B = 0.75
WEIGHTS = {"chunk": {"A": 2.0, "B": 1.0}, "entity": {"A": 10.0, "B": 6.0, "C": 1.0}}
TABLES = {"chunk": ("chunks", "live", "live_chunks", "live_chunk_tokens"),
          "entity": ("entity_fts", "TRUE", "entity_rows", "entity_tokens")}

_LEXEMES: dict[str, tuple[str, ...]] = {}
_LEXEMES_MAX = 100_000


def lexemes(con: Con, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each word's lexemes as the index stems them (remembered per process)."""
    missing = [w for w in dict.fromkeys(words) if w not in _LEXEMES]
    if missing:
        if len(_LEXEMES) > _LEXEMES_MAX:
            _LEXEMES.clear()
        got = dict(con.execute(
            "SELECT w, ARRAY(SELECT lexeme FROM unnest(to_tsvector('kw', w))"
            " ORDER BY positions[1]) FROM unnest(?::text[]) AS w",
            # (a NUL no text value can hold: a word of the query's, it separates words)
            ([w.replace("\x00", " ") for w in missing],)).rows)
        for w in missing:
            _LEXEMES[w] = tuple(got.get(w.replace("\x00", " ")) or ())
    return {w: _LEXEMES[w] for w in words}


def counts(con: Con, words: Sequence[str], scopes: Sequence[str] | None
           ) -> dict[str, tuple[int, int] | None]:
    """Each word's live rows holding it, (chunks, entities), of ``scopes`` (all when
    None), exact, from the counts kept per scope (``stats.py``); None for a word of no
    lexeme or of several (a phrase: ``frequencies`` counts it).

    One statement stems the words and probes both tables' counts, and inside a snapshot
    the answers are kept for its life (``Con.kept``). Why: a ``context`` asks for its
    words' chunk counts capped, perhaps again exact or to a higher cap, and then for the
    entities' counts of the same words; each was a round trip of its own, after one more
    for the lexemes."""
    kept = kept_of(con)
    key = None if scopes is None else tuple(sorted(set(scopes)))
    out: dict[str, tuple[int, int] | None] = {}
    ask: list[str] = []
    for w in dict.fromkeys(words):
        if kept is not None and ("df", key, w) in kept:
            out[w] = kept["df", key, w]
        else:
            ask.append(w)
    if not ask:
        return out
    within = "" if scopes is None else " AND d.scope = ANY(?::text[])"
    rows = con.execute(
        "SELECT x.lx, CASE WHEN cardinality(x.lx) = 1 THEN COALESCE((SELECT SUM(d.df)"
        f" FROM chunk_df d WHERE d.lexeme = x.lx[1]{within}), 0) END,"
        " CASE WHEN cardinality(x.lx) = 1 THEN COALESCE((SELECT SUM(d.df)"
        f" FROM entity_df d WHERE d.lexeme = x.lx[1]{within}), 0) END"
        " FROM unnest(?::text[]) WITH ORDINALITY AS u(w, i) CROSS JOIN LATERAL"
        " (SELECT ARRAY(SELECT lexeme FROM unnest(to_tsvector('kw', u.w))"
        " ORDER BY positions[1]) AS lx) x ORDER BY u.i",
        (*([list(scopes)] * 2 if scopes is not None else []),
         # (a NUL no text value can hold: a word of the query's, it separates words)
         [w.replace("\x00", " ") for w in ask])).rows
    if len(_LEXEMES) > _LEXEMES_MAX:
        _LEXEMES.clear()
    for w, (lx, chunk, entity) in zip(ask, rows, strict=True):
        _LEXEMES[w] = tuple(lx or ())
        out[w] = (int(chunk), int(entity)) if chunk is not None else None
        if kept is not None:
            kept["df", key, w] = out[w]
    return out


def tsquery_text(terms: Sequence[str], op: str, weight: str = "") -> str:
    """A tsquery's text of exact lexemes (quoted: never query syntax)."""
    def one(lex: str) -> str:
        return "'" + lex.replace("\\", "\\\\").replace("'", "''") + "'" + (
            f":{weight}" if weight else "")
    return f" {op} ".join(one(t) for t in terms)


def scope_stats(con: Con, table: str, scopes: Sequence[str] | None
                ) -> dict[str, tuple[int, float]]:
    """Each scope's (rows, average tokens a row) of the live rows of ``table`` (chunk |
    entity), for ``scopes`` (every scope holding rows when None): ``stats.py``."""
    sql = "SELECT scope, n, tokens FROM text_stats WHERE kind = ? AND n > 0"
    args: list[object] = [table]
    if scopes is not None:
        sql += " AND scope = ANY(?)"
        args.append(list(scopes))
    return {str(sc): (int(n), int(tokens) / int(n)) for sc, n, tokens in
            con.execute(sql + " ORDER BY scope", args).rows}


def frequencies(con: Con, table: str, queries: Sequence[str], cap: int | None = None,
                scopes: Sequence[str] | None = None) -> list[int]:
    """How many live rows of ``table`` (of ``scopes``: all when None) match each tsquery
    text (counted up to ``cap``), in one statement."""
    name, live, _, _ = TABLES[table]
    limit = "" if cap is None else f" LIMIT {int(cap)}"
    scope = "" if scopes is None else " AND scope = ANY(?::text[])"
    row = con.execute(
        f"SELECT ARRAY(SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM {name} WHERE {live}"
        f" AND tsv @@ q::tsquery{scope}{limit}) x) FROM unnest(?::text[]) WITH ORDINALITY"
        " AS u(q, i) ORDER BY i)",
        (*([] if scopes is None else [list(scopes)]), list(queries))).fetchone()
    return [int(n) for n in row[0]] if row else [0] * len(queries)


# Each scope's N and token total (``st``), and each (scope, query lexeme)'s IDF (``terms``),
# from the counts kept per scope (``stats.py``): a probe each, never a count of postings.
# Parameters: the scopes (a text array, when ``{within}`` asks for them), the lexemes.
_SCOPE_TERMS = (
    "WITH st AS MATERIALIZED (SELECT scope, n::float8 AS n, tokens::float8 AS tokens"
    " FROM text_stats WHERE kind = '{kind}' AND n > 0{within}),"
    " terms AS MATERIALIZED (SELECT st.scope, l AS lexeme, GREATEST(1e-6, ln(GREATEST(st.n"
    " - COALESCE(d.{df}, 0) + 0.5, 1e-9) / (COALESCE(d.{df}, 0) + 0.5::float8))) AS idf,"
    " COALESCE(d.{df}, 0) AS df"
    " FROM st CROSS JOIN unnest(?::text[]) AS l LEFT JOIN {kind}_df d ON d.lexeme = l"
    " AND d.scope = st.scope)")


def _scope_terms(table: str, scopes: Sequence[str] | None, lexes: list[str], *,
                 label: bool = False) -> tuple[str, list[object]]:
    """``_SCOPE_TERMS`` for ``table`` and ``scopes``, and its parameters."""
    sql = _SCOPE_TERMS.format(kind=table, df="df_label" if label else "df",
                              within="" if scopes is None else " AND scope = ANY(?::text[])")
    return sql, [*([] if scopes is None else [list(scopes)]), lexes]


def bm25(con: Con, table: str, query: TextQuery, *, limit: int, select: str, join: str = "",
         where: str = "", args: Sequence[object] = (),
         scopes: Sequence[str] | None = None, more: str = "") -> list[tuple[Any, ...]]:
    """The rows of ``table`` (of ``scopes``: all when None) matching ``query``, best
    first: (``select``'s id, score). One statement.

    Each row is scored with its own scope's statistics (``stats.py``): N, average length
    and document frequencies of that scope's rows alone, as a store of that scope alone
    would score it; hits of several scopes are merged by score (a federated search).
    ``select``: the id column given back (``t`` is the table); ``join``/``where``/``args``
    narrow the rows further; in ``where``, ``{cid}`` stands for the chunk's id (whether the
    rows are read from the chunks or from their postings).

    ``more``: a join on each hit ``x`` (its ``x.id``) whose columns ``r`` follow the id and
    score in each row, read in the same statement (what a caller reads of every hit next:
    ``Reader``'s snapshot keeps it); a query read from the rows' own vectors (a phrase)
    gives the id and score alone.
    """
    name, live, _, _ = TABLES[table]
    words = lexemes(con, query.terms)
    phrases = [lx for lx in (words[t] for t in query.terms) if lx]
    if query.match == "all_else_any" and len(phrases) < len(query.terms):
        query = replace(query, match="any")  # (no row holds a term without lexemes)
    if not phrases or (query.match == "all" and len(phrases) < len(query.terms)):
        return []
    weight = "A" if query.field == "label" else ""
    flat = list(dict.fromkeys(lx for ph in phrases for lx in ph))
    stats_sql, stats_args = _scope_terms(table, scopes, flat, label=bool(weight))
    if query.match == "all_else_any" and (
            table != "entity" or any(len(ph) > 1 for ph in phrases)):
        raise ValueError("all_else_any: entities of one-lexeme terms only (postings_answer)")
    if table == "chunk" and all(len(ph) == 1 for ph in phrases):
        return _from_postings(con, flat, query.match == "all", stats_sql, stats_args,
                              limit=limit, where=where.replace("{cid}", "t.chunk_id"),
                              args=args, more=more)
    if table == "entity" and all(len(ph) == 1 for ph in phrases):
        return _entities_from_postings(con, flat, query.match, bool(weight),
                                       stats_sql, stats_args, limit=limit, where=where,
                                       args=args, more=more)
    where = where.replace("{cid}", "t.id")
    weights = WEIGHTS[table] if not weight else {"A": WEIGHTS[table]["A"]}
    case = " ".join(f"WHEN '{w}' THEN {v}" for w, v in weights.items())
    if query.match == "all":
        match = " & ".join(f"({tsquery_text(ph, '<->', weight)})" for ph in phrases)
    else:
        match = " | ".join(f"({tsquery_text(ph, '<->', weight)})" for ph in phrases)
    sql = (
        f"{stats_sql} SELECT {select}, SUM(q.idf * s.tf * {K1 + 1} / (s.tf + {K1} * ({1 - B}"
        f" + {B}::float8 * {'kw_doclen(t.tsv)' if table == 'chunk' else 't.dl'}"
        " / GREATEST(a.tokens / a.n, 1e-9)))) AS score"
        f" FROM {name} t {join} JOIN st a ON a.scope = t.scope"
        " CROSS JOIN LATERAL (SELECT u.lexeme, (SELECT SUM(CASE w"
        f" {case} ELSE 0 END) FROM unnest(u.weights) w) AS tf FROM unnest(t.tsv) u"
        " WHERE u.lexeme = ANY(?::text[])) s"
        " JOIN terms q ON q.lexeme = s.lexeme AND q.scope = t.scope"
        f" WHERE t.{live if live != 'TRUE' else 'tsv IS NOT NULL'} AND t.tsv @@ ?::tsquery"
        f" {where} GROUP BY 1 ORDER BY score DESC, 1 LIMIT ?")
    rows = con.execute(sql, (*stats_args, flat, match, *args, limit)).rows
    return [(int(r[0]), float(r[1] or 0.0)) for r in rows if r[1]]


def _from_postings(con: Con, lexes: list[str], every: bool, stats_sql: str,
                   stats_args: Sequence[object], *, limit: int, where: str,
                   args: Sequence[object], more: str = "") -> list[tuple[Any, ...]]:
    """BM25 of the chunks holding any (``every``: all) of ``lexes`` in one statement, from
    the postings index alone (a term's rows, never a chunk's whole vector) and the counts
    kept per scope (``stats_sql``: ``_scope_terms``, whose scopes are the ones searched).
    ``where`` names the posting ``t`` (its ``scope``)."""
    having = f" HAVING COUNT(*) = {len(lexes)}" if every else ""
    sql = (
        f"{stats_sql} SELECT t.chunk_id, SUM({_term_score('t', 'q')}) AS score"
        " FROM chunk_postings t JOIN terms q ON q.lexeme = t.lexeme AND q.scope = t.scope"
        " JOIN st ON st.scope = t.scope WHERE t.lexeme = ANY(?::text[])"
        f" {where} GROUP BY 1{having} ORDER BY score DESC, 1 LIMIT ?")
    params: tuple[object, ...] = (*stats_args, lexes, *args, limit)
    if every and len(lexes) == 2:
        sql, params = _both(stats_sql, stats_args, where=where, args=args, limit=limit)
    if more:
        sql = (f"SELECT x.id, x.score, r.* FROM ({sql}) x(id, score) {more}"
               " ORDER BY x.score DESC, x.id")
    rows = con.execute(sql, params).rows
    return [(int(r[0]), float(r[1] or 0.0), *r[2:]) for r in rows if r[1]]


# A posting list ``PROBE_RATIO`` times shorter than the other's is joined by probing the
# other's primary key for each of its chunks; two of more alike length are merged.
PROBE_RATIO = 8
# One word's postings (``{lexeme}``: a scalar), as a subquery the planner keeps whole
# (``OFFSET 0``), so no plan of the join over it hangs on how many rows it guesses.
_POSTINGS_OF = ("(SELECT lexeme, chunk_id, scope, tf, dl FROM chunk_postings"
                " WHERE lexeme = {lexeme}{more} OFFSET 0)")


def _both(stats_sql: str, stats_args: Sequence[object], *, where: str,
          args: Sequence[object], limit: int) -> tuple[str, tuple[object, ...]]:
    """The chunks holding both of two lexemes (those of ``stats_sql``'s terms), best first:
    one statement whose join is chosen as it runs, from the words' counts (``terms.df``).

    Why not one join left to the planner: the statement is prepared once a connection
    has sent it a few times, and the generic plan of a store built note by note (its
    index larger than a fresh one) probed the primary key once for each of a common
    word's ~10,000 postings: 11.7 ms a statement at 10,000 notes (median of the bench's
    59 two-word questions) where reading both lists whole takes 4.0 (2.8 merged, when the
    plan of a freshly indexed copy merges them). So each way is spelled so the planner has
    one sound plan for it whatever it guesses, and a one-time filter runs one: the rarer
    word's postings each probing the other's (when far rarer: a lateral subquery, so a
    nested loop), else both lists read whole and joined (each a subquery kept whole: no
    plan can probe one for each row of the other). The score is the same sum of the two
    terms either way."""
    pick = ("o AS MATERIALIZED (SELECT lexeme, SUM(df) AS df FROM terms GROUP BY 1),"
            " pick AS MATERIALIZED (SELECT (SELECT lexeme FROM o ORDER BY df, lexeme LIMIT 1)"
            " AS rare, (SELECT lexeme FROM o ORDER BY df DESC, lexeme DESC LIMIT 1) AS common,"
            f" (SELECT MIN(df) * {PROBE_RATIO} < MAX(df) FROM o) AS probe)")
    rare = _POSTINGS_OF.format(lexeme="(SELECT rare FROM pick)", more="")
    common = _POSTINGS_OF.format(lexeme="(SELECT common FROM pick)", more="")
    probed = _POSTINGS_OF.format(lexeme="(SELECT common FROM pick)",
                                 more=" AND chunk_id = t.chunk_id AND scope = t.scope")
    merged = ("(SELECT t.chunk_id, t.scope, t.lexeme, t.tf, t.dl, u.lexeme AS u_lexeme,"
              f" u.tf AS u_tf, u.dl AS u_dl FROM {rare} t JOIN {common} u"
              " ON u.chunk_id = t.chunk_id AND u.scope = t.scope OFFSET 0)")
    score = ("SELECT t.chunk_id, {a} + {b} AS score FROM {join}"
             " JOIN terms q ON q.lexeme = t.lexeme AND q.scope = t.scope"
             " JOIN terms p ON p.lexeme = {ul} AND p.scope = t.scope"
             " JOIN st ON st.scope = t.scope WHERE {gate}")
    sql = (f"{stats_sql}, {pick} "
           + score.format(join=f"{rare} t CROSS JOIN LATERAL {probed} u",
                          a=_term_score("t", "q"), b=_term_score("u", "p"),
                          # (the word probed, not ``u``'s: joined before the probe, its
                          # row then asks one probe of each posting, not one a term)
                          ul="(SELECT common FROM pick)",
                          gate="(SELECT probe FROM pick)") + f" {where} UNION ALL "
           + score.format(join=f"{merged} t", a=_term_score("t", "q"),
                          b=_score("p", "t.u_tf", "t.u_dl"), ul="t.u_lexeme",
                          gate="NOT (SELECT probe FROM pick)")
           + f" {where} ORDER BY score DESC, 1 LIMIT ?")
    return sql, (*stats_args, *args, *args, limit)


def _term_score(t: str, q: str) -> str:
    """One term's BM25 in the row of posting ``t``, with its weight row ``q`` (``terms``)
    and its scope's counts ``st``: FTS5's formula (the module docstring)."""
    return _score(q, f"{t}.tf", f"{t}.dl")


def _score(q: str, tf: str, dl: str) -> str:
    """``_term_score`` of a posting's ``tf`` and ``dl`` given as columns."""
    return (f"{q}.idf * {tf} * {K1 + 1} / ({tf} + {K1} * ({1 - B}"
            f" + {B}::float8 * {dl} / GREATEST(st.tokens / st.n, 1e-9)))")


def postings_answer(con: Con, query: TextQuery) -> bool:
    """Whether ``bm25`` reads ``query`` from a postings table (every term one lexeme, or
    none), where an ``"all_else_any"`` query is one statement."""
    words = lexemes(con, query.terms)
    return all(len(words[t]) <= 1 for t in query.terms)


def _entities_from_postings(con: Con, lexes: list[str], match: str, label: bool,
                            stats_sql: str, stats_args: Sequence[object], *, limit: int,
                            where: str, args: Sequence[object], more: str = ""
                            ) -> list[tuple[Any, ...]]:
    """BM25 of the indexed entities holding any (``match`` "all": all) of ``lexes``
    (``label``: in their label), from ``entity_postings`` in one statement (``stats_sql``
    as for ``_from_postings``): (canonical id, score) of each entity row, best first.
    ``where`` names the entity ``e``.

    ``"all_else_any"``: the rows holding all when, as ``Reader.search_entities`` counts
    them (distinct canonical ids with a score), they fill ``limit``, else the rows holding
    any; one pass over the postings serves both, as each row's score is the same in
    either (the sum over the terms it holds)."""
    tf, only = ("tf_label", " AND t.tf_label > 0") if label else ("tf", "")
    having = f" HAVING COUNT(*) = {len(lexes)}" if match == "all" else ""
    head = (
        f"{stats_sql}, s AS (SELECT t.entity_id, t.scope, SUM(q.idf * t.{tf} * {K1 + 1}"
        f" / (t.{tf} + {K1} * ({1 - B} + {B}::float8 * t.dl"
        " / GREATEST(st.tokens / st.n, 1e-9)))) AS score, COUNT(*) AS k"
        " FROM entity_postings t JOIN terms q ON q.lexeme = t.lexeme AND q.scope = t.scope"
        f" JOIN st ON st.scope = t.scope WHERE t.lexeme = ANY(?::text[]){only}"
        f" GROUP BY 1, 2{having})")
    if where:
        sql, params = _entities_where(head, len(lexes), match, stats_args, lexes, where=where,
                                      args=args, limit=limit)
    elif match != "all_else_any":
        sql = f"{head} SELECT {_ENTITY_OF} FROM {_best('s', 'TRUE')} {_ENTITY_JOIN}"
        params = (*stats_args, lexes, limit)
    else:
        sql = (
            f"{head}, a AS MATERIALIZED (SELECT {_ENTITY_OF} FROM"
            f" {_best('s', f'k = {len(lexes)}')} {_ENTITY_JOIN}),"
            " filled AS (SELECT COUNT(DISTINCT id) FILTER (WHERE score <> 0) >= ? AS yes"
            "  FROM a)"
            " SELECT id, score, eid FROM a WHERE (SELECT yes FROM filled) UNION ALL"
            f" SELECT {_ENTITY_OF} FROM {_best('s', 'NOT (SELECT yes FROM filled)')}"
            f" {_ENTITY_JOIN}")
        params = (*stats_args, lexes, limit, limit, limit)
    if more:
        sql = (f"SELECT x.id, x.score, r.* FROM ({sql}) x {more}"
               " ORDER BY x.score DESC, x.eid")
    else:
        sql = f"SELECT x.id, x.score FROM ({sql}) x ORDER BY x.score DESC, x.eid"
    rows = con.execute(sql, params).rows
    return [(int(r[0]), float(r[1] or 0.0), *r[2:]) for r in rows if r[1]]


# The best ``?`` entity rows of the scored postings ``{s}`` (``entity_id``, ``scope``,
# ``score``) that pass ``{cond}``, as ``b``; then each one's entity ``e``, read for those
# rows alone (the same order: ``e.id`` is the row's ``entity_id``). Why: joining the entity
# of every row that holds a common word read ~2,500 entities to keep 50 (2 of 3.5 ms).
_ENTITY_OF = "COALESCE(e.resolved_id, e.id) AS id, b.score, e.id AS eid"
_ENTITY_JOIN = "JOIN entities e ON e.id = b.entity_id AND e.scope = b.scope"


def _best(s: str, cond: str) -> str:
    return (f"(SELECT entity_id, scope, score FROM {s} WHERE {cond}"
            " ORDER BY score DESC, entity_id LIMIT ?) b")


def _entities_where(head: str, n: int, match: str, stats_args: Sequence[object],
                    lexes: list[str], *, where: str, args: Sequence[object], limit: int
                    ) -> tuple[str, tuple[object, ...]]:
    """``_entities_from_postings``'s statement when ``where`` narrows the entities: each
    row's entity read first, for the filter to see (``head``: the scored postings ``s``)."""
    hits = ("SELECT COALESCE(e.resolved_id, e.id) AS id, s.score, e.id AS eid, s.k FROM s"
            f" JOIN entities e ON e.id = s.entity_id AND e.scope = s.scope WHERE TRUE {where}")
    if match != "all_else_any":
        return (f"{head} {hits} ORDER BY s.score DESC, e.id LIMIT ?",
                (*stats_args, lexes, *args, limit))
    sql = (
        f"{head}, r AS MATERIALIZED ({hits}),"
        f" a AS (SELECT id, score, eid FROM r WHERE k = {n}"
        "  ORDER BY score DESC, eid LIMIT ?),"
        " filled AS (SELECT COUNT(DISTINCT id) FILTER (WHERE score <> 0) >= ? AS yes"
        "  FROM a)"
        " SELECT id, score, eid FROM (SELECT id, score, eid FROM a"
        " WHERE (SELECT yes FROM filled) UNION ALL (SELECT id, score, eid FROM r"
        " WHERE NOT (SELECT yes FROM filled) ORDER BY score DESC, eid LIMIT ?)) x"
        " ORDER BY score DESC, eid")
    return sql, (*stats_args, lexes, *args, limit, limit, limit)


# The rows of each table standing at the statement's time (``schema.AT``) that match the
# tsquery of the second parameter (the live rows written by then) or of the third (the
# history rows standing then), each with its id as ``t.id`` / its entity ``e``.
_T = "(SELECT t FROM at_t)"
_ROWS_AT = {
    "chunk": ("SELECT {select} AS id, ts_rank(t.tsv, ?::tsquery) AS score FROM chunks t"
              " JOIN versions v ON v.id = t.version_id AND v.scope = t.scope"
              f" WHERE t.live AND t.tsv @@ ?::tsquery AND v.recorded_at <= {_T}{{scope}}"
              " UNION ALL SELECT {select}, ts_rank(t.tsv, ?::tsquery) FROM chunks t"
              " JOIN versions v ON v.id = t.version_id AND v.scope = t.scope"
              f" WHERE NOT t.live AND t.tsv @@ ?::tsquery AND v.recorded_at <= {_T}"
              f" AND t.retired_at > {_T}{{scope}}"),
    "entity": ("SELECT {select} AS id, ts_rank(t.tsv, ?::tsquery) AS score FROM entity_fts t"
               " JOIN entities e ON e.id = t.entity_id AND e.scope = t.scope"
               f" WHERE t.tsv @@ ?::tsquery AND COALESCE(e.indexed_at, e.created_at) <= {_T}"
               "{scope} UNION ALL SELECT {select}, ts_rank(t.tsv, ?::tsquery) FROM entity_past t"
               " JOIN entities e ON e.id = t.entity_id AND e.scope = t.scope"
               f" WHERE t.tsv @@ ?::tsquery AND t.recorded_at <= {_T} AND t.retired_at > {_T}"
               "{scope}"),
}


def rows_at(table: str, scoped: bool = False) -> str:
    """Rows of ``table`` standing at the statement's time that match the tsquery given
    twice (live rows, history rows), for counting; ``scoped``: each tsquery is followed by
    the scopes to count in (a text array)."""
    sql = _ROWS_AT[table].format(select="t.ctid",
                                 scope=" AND t.scope = ANY(?::text[])" if scoped else "")
    return sql.replace("ts_rank(t.tsv, ?::tsquery)", "0")


def search_at(con: Con, table: str, query: TextQuery, as_of: str, *, limit: int,
              scopes: Sequence[str] | None, select: str) -> list[tuple[int, float]]:
    """The rows of ``table`` standing at ``as_of`` that match ``query``, best first: the
    live rows written by then and the history rows standing then (``trust.history``).

    Scored by ``ts_rank``, not BM25: an as-of answer's scores are approximate (the live
    path's statistics are of the live rows only); which rows match is exact."""
    from .schema import AT

    words = lexemes(con, query.terms)
    phrases = [lx for lx in (words[t] for t in query.terms) if lx]
    if not phrases or (query.match == "all" and len(phrases) < len(query.terms)):
        return []
    weight = "A" if query.field == "label" else ""
    op = " & " if query.match == "all" else " | "
    match = op.join(f"({tsquery_text(ph, '<->', weight)})" for ph in phrases)
    scope = " AND t.scope = ANY(?)" if scopes else ""
    part = [match, match, *([list(scopes)] if scopes else [])]
    rows = con.execute(
        f"{AT}SELECT id, MAX(score) FROM ({_ROWS_AT[table].format(select=select, scope=scope)})"
        f" x GROUP BY id ORDER BY 2 DESC, 1 LIMIT ?", (as_of, *part, *part, limit)).rows
    return [(int(r[0]), float(r[1] or 0.0)) for r in rows]
