"""Retrieval benchmark on a BEIR-format folder: prints one JSON line per mode (never a test).

    python bench/beir.py --data ../shared/datasets/scifact --split train --mode bm25
    python bench/beir.py --data ../shared/datasets/hotpotqa_dev50 --split dev --mode all
    python bench/beir.py --self-check            # the metric functions on a hand-made example

The folder holds ``corpus.jsonl`` (``_id, title, text``), ``queries.jsonl`` (``_id, text``)
and ``qrels/<split>.tsv`` (header ``query-id corpus-id score``). Every passage becomes one
Markdown note ``<_id>.md`` = ``# <title>\\n\\n<text>\\n`` in a temporary vault, ingested into a
fresh store through the ``Knotwork`` facade (``ingest(embed=False)``, then ``embed()`` unless
only BM25 is asked for). Each query runs through knotwork's own search API and hits map back
to passages by their path, each passage at its best rank:

- ``bm25 | vector | hybrid``: ``kw.search(q, k=100, mode=mode)`` (``--fusion`` goes to hybrid);
- ``graph``: the ``kw:note/<_id>`` entities of ``kw.context(q, max_entities=20, link_depth=1,
  max_tokens=0)`` in their order, then the passages of ``kw.search(q, k=100, mode="hybrid")``
  not listed yet, so recall@100 stays comparable. Its latency is both calls together.

Metrics are small pure functions below. nDCG uses trec_eval's gain by default (the qrels
value, linear — what pytrec_eval and so BEIR report; ``m_ndcg_cut.c``: "Gain values are the
relevance values in the qrels file"); ``gain="exp"`` gives ``2^rel - 1``. The two agree on
binary qrels, which SciFact and HotpotQA have. Queries without a relevant passage in the
split are skipped, as pytrec_eval does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

MODES = ("bm25", "vector", "hybrid", "graph")
NOTE_IRI = "kw:note/"
K_SEARCH = 100


# ------------------------------------------------------------ metrics (pure)

def dcg_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int, *,
           gain: str = "linear") -> float:
    """Discounted cumulative gain of the first ``k`` ids: sum of g(rel) / log2(rank + 1).

    >>> round(dcg_at(["b", "x", "a"], {"a": 2, "b": 1}, 10), 4)      # 1/1 + 2/2
    2.0
    >>> round(dcg_at(["b", "x", "a"], {"a": 2, "b": 1}, 10, gain="exp"), 4)  # 1/1 + 3/2
    2.5
    """
    g = _gain(gain)
    return sum(g(qrels.get(doc, 0)) / math.log2(rank + 1)
               for rank, doc in enumerate(ranking[:k], start=1) if qrels.get(doc, 0) > 0)


def ndcg_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int, *,
            gain: str = "linear") -> float:
    """nDCG@k; the ideal ranking is the judged passages sorted by grade (from the qrels).

    >>> round(ndcg_at(["b", "x", "a"], {"a": 2, "b": 1}, 10), 4)     # 2 / (2 + 1/log2 3)
    0.7602
    >>> round(ndcg_at(["b", "x", "a"], {"a": 2, "b": 1}, 10, gain="exp"), 4)  # 2.5 / 3.6309
    0.6885
    >>> ndcg_at(["a", "b"], {"a": 2, "b": 1}, 10), ndcg_at(["x"], {"a": 1}, 10)
    (1.0, 0.0)
    """
    g = _gain(gain)
    grades = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    ideal = sum(g(r) / math.log2(rank + 1) for rank, r in enumerate(grades, start=1))
    return dcg_at(ranking, qrels, k, gain=gain) / ideal if ideal > 0 else 0.0


def recall_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Share of the relevant passages found in the first ``k``.

    >>> run, qrels = ["b", "x", "a"], {"a": 2, "b": 1}
    >>> recall_at(run, qrels, 1), recall_at(run, qrels, 2), recall_at(run, qrels, 3)
    (0.5, 0.5, 1.0)
    """
    gold = {d for d, r in qrels.items() if r > 0}
    return len(gold.intersection(ranking[:k])) / len(gold) if gold else 0.0


def mrr_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant passage within the first ``k`` (else 0).

    >>> mrr_at(["x", "y", "a"], {"a": 1}, 10), mrr_at(["x", "y", "a"], {"a": 1}, 2)
    (0.3333333333333333, 0.0)
    """
    for rank, doc in enumerate(ranking[:k], start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (numpy's default), ``p`` in 0..100.

    >>> percentile([1, 2, 3, 4], 50), percentile([1, 2, 3, 4], 95), percentile([7], 95)
    (2.5, 3.85, 7.0)
    """
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * p / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


def best_rank(ids: Iterable[str]) -> list[str]:
    """Distinct ids in first-seen order: each passage keeps its best rank.

    >>> best_rank(["a", "b", "a", "c", "b"])
    ['a', 'b', 'c']
    """
    return list(dict.fromkeys(ids))


def _gain(kind: str) -> Callable[[int], float]:
    if kind == "linear":
        return float
    if kind == "exp":
        return lambda r: 2.0 ** r - 1.0
    raise ValueError(f"gain must be 'linear' or 'exp', got {kind!r}")


def evaluate(runs: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]
             ) -> dict[str, float]:
    """Mean of every metric over the queries of ``runs`` (each has at least one relevant)."""
    metrics: dict[str, Callable[[Sequence[str], Mapping[str, int]], float]] = {
        "ndcg@10": lambda r, q: ndcg_at(r, q, 10),
        "recall@100": lambda r, q: recall_at(r, q, 100),
        "mrr@10": lambda r, q: mrr_at(r, q, 10),
        "recall@2": lambda r, q: recall_at(r, q, 2),
        "recall@5": lambda r, q: recall_at(r, q, 5),
    }
    return {name: round(statistics.fmean(f(runs[qid], qrels[qid]) for qid in runs), 4)
            if runs else 0.0 for name, f in metrics.items()}


def _self_check() -> None:
    """The metrics on a hand-made example (worked by hand in the docstrings)."""
    import doctest

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for fn in (dcg_at, ndcg_at, recall_at, mrr_at, percentile, best_rank):
        for test in finder.find(fn, globs=dict(globals())):
            runner.run(test)
    failed, tried = runner.summarize(verbose=False)
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    runs = {"q1": ["a", "x", "y", "b"], "q2": ["x", "c"]}
    # q1: DCG = 1 + 1/log2(5), IDCG = 1 + 1/log2(3); q2: DCG = IDCG / log2(3) = 1/log2(3)
    want = ((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3)) + 1 / math.log2(3)) / 2
    got = evaluate(runs, qrels)
    assert failed == 0 and tried > 0, f"{failed} of {tried} doctests failed"
    assert abs(got["ndcg@10"] - round(want, 4)) < 1e-9, got
    assert got["recall@2"] == 0.75 and got["recall@5"] == 1.0, got
    assert got["mrr@10"] == 0.75, got


# ------------------------------------------------------------ data

def read_beir(data: Path, split: str) -> tuple[dict[str, tuple[str, str]], dict[str, str],
                                               dict[str, dict[str, int]]]:
    """(corpus ``_id → (title, text)``, queries ``_id → text``, qrels ``qid → {_id: grade}``)."""
    qrels_path = data / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        have = sorted(p.stem for p in (data / "qrels").glob("*.tsv"))
        raise SystemExit(f"no qrels for split {split!r} in {data}; splits here: {have}")
    corpus: dict[str, tuple[str, str]] = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                corpus[str(row["_id"])] = (row.get("title") or "", row.get("text") or "")
    queries: dict[str, str] = {}
    with open(data / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                queries[str(row["_id"])] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if i == 0 and parts[0] == "query-id" or len(parts) < 3:
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return corpus, queries, qrels


def write_vault(root: Path, corpus: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """One note per passage, ``<_id>.md``; returns path → passage id."""
    root.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    for doc_id, (title, text) in corpus.items():
        if "/" in doc_id or "\\" in doc_id or doc_id.startswith("."):
            raise SystemExit(f"passage id {doc_id!r} cannot be a file name")
        name = f"{doc_id}.md"
        (root / name).write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        paths[name] = doc_id
    return paths


# ------------------------------------------------------------ runs

def run_mode(kw: Any, mode: str, queries: Sequence[tuple[str, str]], paths: Mapping[str, str],
             *, fusion: str | None) -> tuple[dict[str, list[str]], list[float]]:
    """Ranked passage ids per query and the latency (ms) of each query's calls."""
    hybrid_kw: dict[str, Any] = {"fusion": fusion} if fusion else {}
    known = set(paths.values())

    def ranked(hits: Iterable[Any]) -> list[str]:
        return [paths[h.path] for h in hits if h.path in paths]

    runs: dict[str, list[str]] = {}
    lat: list[float] = []
    for n, (qid, text) in enumerate(queries, start=1):
        t0 = time.perf_counter()
        if mode == "graph":
            ctx = kw.context(text, max_entities=20, link_depth=1, max_tokens=0)
            hits = kw.search(text, k=K_SEARCH, mode="hybrid", **hybrid_kw)
            lat.append((time.perf_counter() - t0) * 1000)
            notes = [unquote(e.iri[len(NOTE_IRI):]) for e in ctx.entities
                     if e.iri.startswith(NOTE_IRI)]
            ids = [d for d in notes if d in known] + ranked(hits)
        else:
            extra = hybrid_kw if mode == "hybrid" else {}
            hits = kw.search(text, k=K_SEARCH, mode=mode, **extra)
            lat.append((time.perf_counter() - t0) * 1000)
            ids = ranked(hits)
        runs[qid] = best_rank(ids)
        if n % 100 == 0:
            print(f"  {mode}: {n}/{len(queries)} queries", file=sys.stderr, flush=True)
    return runs, lat


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    ap.add_argument("--mode", choices=(*MODES, "all"), default="bm25")
    ap.add_argument("--split", default="test", help="qrels/<split>.tsv (train, dev, test)")
    ap.add_argument("--limit-queries", type=int, default=0, help="first N judged queries")
    ap.add_argument("--fusion", default=None, help="hybrid fusion by name, e.g. rrf, zscore")
    ap.add_argument("--embedder", default="minilm", help="minilm | hash")
    ap.add_argument("--self-check", action="store_true", help="check the metrics and exit")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="keep the vault and store here; a second run reuses them (ingest and"
                         " embedding are incremental, so nothing is redone)")
    ap.add_argument("--db", default=None,
                    help="store URL, e.g. postgresql://... of an empty database (default: a"
                         " SQLite file beside the vault)")
    args = ap.parse_args(argv)

    _self_check()
    if args.self_check:
        print("metrics self-check ok", file=sys.stderr)
        return 0
    if args.data is None:
        ap.error("--data is required")

    from knotwork import Knotwork

    data = args.data.expanduser().resolve()
    corpus, queries, qrels = read_beir(data, args.split)
    judged = [(qid, text) for qid, text in queries.items()
              if any(r > 0 for r in qrels.get(qid, {}).values())]
    if args.limit_queries > 0:
        judged = judged[:args.limit_queries]
    modes = MODES if args.mode == "all" else (args.mode,)

    with contextlib.ExitStack() as stack:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            tmp = str(args.workdir)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kw-beir-"))
        vault = Path(tmp) / "vault"
        paths = write_vault(vault, corpus)
        print(f"{data.name}: {len(corpus)} passages, {len(judged)} queries ({args.split})",
              file=sys.stderr, flush=True)
        db = args.db or str(Path(tmp) / "s.db")
        with Knotwork.open(vault, db=db, embedder=args.embedder) as kw:
            t0 = time.perf_counter()
            report = kw.ingest(embed=False)
            ingest_s = time.perf_counter() - t0
            print(f"ingested in {ingest_s:.1f}s: {report}", file=sys.stderr, flush=True)
            embed_s = chunks_per_s = tokens_per_s = None
            if modes != ("bm25",):
                t0 = time.perf_counter()
                stats = kw.embed()
                embed_s = time.perf_counter() - t0
                chunks, tokens = stats.embedded, stats.tokens
                chunks_per_s = round(chunks / embed_s, 1) if chunks and embed_s else None
                tokens_per_s = round(tokens / embed_s, 1) if tokens and embed_s else None
                print(f"embedded in {embed_s:.1f}s: {stats}", file=sys.stderr, flush=True)
            for mode in modes:
                runs, lat = run_mode(kw, mode, judged, paths, fusion=args.fusion)
                out: dict[str, Any] = {
                    "dataset": data.name, "mode": mode, "split": args.split,
                    "queries": len(runs), **evaluate(runs, qrels),
                    "p50_ms": round(percentile(lat, 50), 1),
                    "p95_ms": round(percentile(lat, 95), 1),
                    "ingest_s": round(ingest_s, 2),
                    "embed_s": None if embed_s is None else round(embed_s, 2),
                    "embed_chunks_per_s": chunks_per_s, "embed_tokens_per_s": tokens_per_s,
                    "embedder": None if embed_s is None else args.embedder,
                    "fusion": (args.fusion or kw.settings.fusion)
                    if mode in ("hybrid", "graph") else None,
                }
                print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
