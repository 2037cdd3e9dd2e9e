"""What a store answers while its vectors are still being made: partial MiniLM coverage
alone, or with a fast static tier (``minilm-static``) standing in for the rest. JSON lines.

    python bench/tiered.py --workdir /tmp/emb-stores --sets scifact,locomo,k8s_keps \\
        --coverage 0.25,0.5,0.75

The question a tiered index has to answer before it is built: a first tier of static
vectors makes a whole vault "searchable by meaning" in minutes (77× MiniLM's speed), but is
a hybrid over it better than the hybrid over the MiniLM vectors already made plus BM25?
For each set (the stores of ``bench/fusion.py``, their MiniLM vectors as the store holds
them; the static table's are computed here and cached under ``WORKDIR/_vectors``) and each
coverage ``p`` (the fraction of live chunks MiniLM has embedded so far), in two orders:

- ``doc``: the order ``embed_pending`` takes them today (by chunk id: the order notes were
  first ingested), so coverage ``p`` is the first notes;
- ``content``: chunks that say something first, headings-only chunks after (what an
  embedding queue that ranks its work would do),

it ranks by, with ``search``'s fusion (``adaptive_sum``) and its headings-last rule:

- ``partial``: BM25 fused with MiniLM's cosines over the embedded chunks only, a chunk
  without a vector given the vector list's lowest z-score (what a store mid-way through
  ``knotwork embed`` answered until 2026-12-02);
- ``fair``: the same, but a chunk without a vector takes the vector z-score at its BM25
  rank (``adaptive_sum``'s ``unembedded``: what ``search`` and ``context`` do now);
- ``tiered``: BM25 fused with one vector list where an embedded chunk has MiniLM's cosine
  and the others the static one's, each z-scored over its own tier's chunks (two models'
  cosines are not comparable; their standing within their tier is).

``p`` = 0 of ``tiered`` is the static model alone, ``p`` = 1 of either is MiniLM's hybrid.
Each row also gives the share of MiniLM tokens (characters, as a stand-in) the coverage
took; ``tiered`` and ``fair`` rows their paired difference from ``partial`` at the same
``p`` with a 95% bootstrap interval.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fusion  # noqa: E402
from embed_quality import _chunks, _matrix, _open, _rank, kw_embedder  # noqa: E402
from fusion import DEPTH, METRICS, _ordered, _queries  # noqa: E402


def _orders(chunks: list[Any]) -> dict[str, np.ndarray]:
    from knotwork.retrieve.pipeline import says_something

    doc = np.arange(len(chunks))
    says = np.array([says_something(c[5], 1) for c in chunks])
    content = np.concatenate([doc[says], doc[~says]])
    return {"doc": doc, "content": content}


def _top(scores: np.ndarray, mask: np.ndarray, ids: np.ndarray) -> list[tuple[int, float]]:
    """The ``DEPTH`` best of ``scores`` among ``mask``'s rows, as (chunk id, score)."""
    rows = np.flatnonzero(mask)
    if not len(rows):
        return []
    k = min(DEPTH, len(rows))
    part = rows[np.argpartition(-scores[rows], k - 1)[:k]]
    part = part[np.argsort(-scores[part], kind="stable")]
    return [(int(ids[i]), float(scores[i])) for i in part]


def _z(sims: np.ndarray, mask: np.ndarray) -> np.ndarray:
    if not mask.any():
        return np.zeros_like(sims)
    sd = float(sims[mask].std()) or 1.0
    return (sims - float(sims[mask].mean())) / sd


def evaluate(name: str, workdir: Path, coverage: list[float]) -> None:
    from knotwork import Knotwork
    from knotwork.retrieve import fulltext
    from knotwork.retrieve.adaptive import adaptive_sum
    from knotwork.retrieve.rank import bm25_moments

    k = 100 if name in ("scifact", "hotpotqa_dev50") else 10
    runs: dict[str, list[tuple[float, float]]] = {}
    shares: dict[str, float] = {}
    static = _open("minilm-static")
    for vault, db, questions in _queries(name, workdir):
        if not db.exists():
            print(f"{name}: no store at {db}: skipped", file=sys.stderr)
            return
        chunks = _chunks(db)
        n = len(chunks)
        ids = np.array([c[0] for c in chunks])
        allowed = set(ids.tolist())
        mini, _, _ = _matrix("store", db, chunks, workdir / "_vectors")
        stat, _, _ = _matrix("minilm-static", db, chunks, workdir / "_vectors")
        sizes = np.array([len(c[4]) for c in chunks], dtype=np.float64)
        masks: dict[str, np.ndarray] = {}
        for order_name, order in _orders(chunks).items():
            for p in coverage:
                mask = np.zeros(n, dtype=bool)
                mask[order[: round(p * n)]] = True
                masks[f"{order_name} {p:g}"] = mask
                share = float(sizes[mask].sum() / sizes.sum())
                shares[f"{order_name} {p:g}"] = shares.get(f"{order_name} {p:g}", 0.0) + share
        mini_emb = kw_embedder(db)
        with Knotwork.open(vault, db=str(db), embedder="none") as kw:
            reader = kw._reader()
            for question, gold in questions:
                text = [(h.id, h.score) for h in
                        fulltext.search_chunks(reader, question, limit=3 * DEPTH)
                        if h.id in allowed][:DEPTH]
                bm_stats = bm25_moments([s for _, s in text], n)
                sm = mini @ mini_emb.embed([question])[0]
                ss = stat @ static.embed([question])[0]

                ranked: dict[str, list[tuple[int, float]]] = {"bm25": text}
                everyone = np.ones(n, dtype=bool)
                vec_runs: dict[str, tuple[list[tuple[int, float]], Any]] = {
                    "minilm hybrid": (_top(sm, everyone, ids),
                                      (float(sm.mean()), float(sm.std()))),
                    "static hybrid": (_top(ss, everyone, ids),
                                      (float(ss.mean()), float(ss.std())))}
                for label, mask in masks.items():
                    if mask.any():
                        vec_runs[f"{label} partial"] = (
                            _top(sm, mask, ids), (float(sm[mask].mean()), float(sm[mask].std())))
                    else:
                        ranked[f"{label} partial"] = text
                    merged = np.where(mask, _z(sm, mask), _z(ss, ~mask))
                    vec_runs[f"{label} tiered"] = (_top(merged, everyone, ids), (0.0, 1.0))
                for label, (vec, moments) in vec_runs.items():
                    ranked[label] = _ordered(adaptive_sum([text, vec],
                                                          stats=[bm_stats, moments], n=n))
                for label, mask in masks.items():
                    if mask.any() and not mask.all():  # as shipped: ``search``, ``context``
                        vec, moments = vec_runs[f"{label} partial"]
                        ranked[f"{label} fair"] = _ordered(adaptive_sum(
                            [text, vec], stats=[bm_stats, moments], n=n,
                            unembedded={c for c, _ in text} & set(ids[~mask].tolist())))
                for label, order in ranked.items():
                    runs.setdefault(label, []).append(_rank(reader, order, k, name, gold))
    first, second = METRICS.get(name, ("mrr", "hit@1"))
    stores = len(_queries(name, workdir))
    for label, vals in runs.items():
        row: dict[str, Any] = {"set": name, "run": label, "queries": len(vals),
                               first: round(statistics.mean(v[0] for v in vals), 4),
                               second: round(statistics.mean(v[1] for v in vals), 4)}
        key = label.rsplit(" ", 1)[0]
        if key in shares:
            row["minilm_text_share"] = round(shares[key] / stores, 3)
        if label.endswith((" tiered", " fair")):
            a = np.array(vals) - np.array(runs[f"{key} partial"])
            boot = a[np.random.default_rng(0).integers(0, len(a), (2000, len(a)))].mean(1)
            lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
            row["minus_partial"] = {m: [round(float(a[:, j].mean()), 4),
                                        round(float(lo[j]), 4), round(float(hi[j]), 4)]
                                    for j, m in enumerate((first, second))}
        print(json.dumps(row), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sets", default="scifact,locomo,k8s_keps")
    ap.add_argument("--coverage", default="0,0.25,0.5,0.75")
    ap.add_argument("--datasets", type=Path, default=fusion.DATASETS,
                    help="the shared datasets folder (default: beside the checkout)")
    args = ap.parse_args()
    fusion.DATASETS = args.datasets
    coverage = [float(p) for p in args.coverage.split(",") if p.strip()]
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        evaluate(name, args.workdir, coverage)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
