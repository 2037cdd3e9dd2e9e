"""Every fusion on every set, from one pass of BM25 and vector runs: the table that says
whether hybrid ever falls below the better of its two inputs. Prints JSON lines.

    python bench/fusion.py --workdir /tmp/knotwork-guard          # the stores guard keeps
    python bench/fusion.py --sets scifact,locomo --workdir /tmp/kw

For each query of each set it takes, once, what ``search`` fuses: BM25's top 100 chunks
with the corpus moments (``rank.bm25_moments``) and the vectors' top 100 with theirs; then
ranks by BM25 alone, vectors alone and each fusion of ``rank.FUSIONS`` (the very
functions ``search`` calls, with its weights, and a question's date as ``search`` weighs
it: ``dated.by_date``; ``adaptive`` with a list's best line, ``records.by_record``; the
vector query without a name every chunk holds, ``vector_text``), lists headings-only
chunks after the rest as ``search`` does, and scores the distinct documents:

- ``scifact`` (train) and ``hotpotqa_dev50`` (dev): nDCG@10 (and recall@2 for HotpotQA),
  k = 100 as ``bench/beir.py``; the stores of ``bench/beir.py --workdir DIR/<set>``.
- ``locomo``: note recall@5 and MRR, k = 10 (``bench/locomo.py --workdir DIR/locomo``).
- ``k8s_keps``, ``adrs``, ``rust_rfcs``: MRR of the answering note among the first 10
  (``bench/answers.py --workdir DIR/answers-<set>``).

A set whose store is missing or has no vectors is skipped with a note on stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATASETS = HERE.parent.parent / "shared" / "datasets"
SETS = ("scifact", "hotpotqa_dev50", "locomo", "k8s_keps", "adrs", "rust_rfcs")
DEPTH = 100


def _queries(name: str, workdir: Path) -> list[tuple[Path, Path, list[tuple[str, Any]]]]:
    """(vault, store, [(question, gold)]) per store of the set."""
    sys.path.insert(0, str(HERE))
    if name in ("scifact", "hotpotqa_dev50"):
        from beir import read_beir

        _, queries, qrels = read_beir(DATASETS / name, "train" if name == "scifact" else "dev")
        qs = [(queries[q], qrels[q]) for q in qrels if q in queries]
        return [(workdir / name / "vault", workdir / name / "s.db", qs)]
    if name == "locomo":
        rows = [json.loads(line) for line in
                (DATASETS / "locomo_dev" / "questions.jsonl").read_text().splitlines() if line]
        convs = sorted({int(r["conv"]) for r in rows})
        return [(DATASETS / "locomo_dev" / "vault" / f"conv-{c:02d}",
                 workdir / "locomo" / f"conv-{c:02d}" / "s.db",
                 [(r["question"], set(r["gold_notes"])) for r in rows
                  if int(r["conv"]) == c and r["gold_notes"]]) for c in convs]
    from answers import read_questions

    return [(DATASETS / name, workdir / f"answers-{name}" / "s.db",
             read_questions(HERE / "questions" / f"{name}.tsv"))]


def _score(name: str, docs: Sequence[str], gold: Any) -> tuple[float, float]:
    from beir import ndcg_at, recall_at

    if name in ("scifact", "hotpotqa_dev50"):
        stems = [Path(d).stem for d in docs]
        return ndcg_at(stems, gold, 10), recall_at(stems, gold, 2)
    if name == "locomo":
        stems = [Path(d).stem for d in docs]
        first = next((i for i, d in enumerate(stems[:10], 1) if d in gold), None)
        return len(gold & set(stems[:5])) / len(gold), 1 / first if first else 0.0
    first = next((i for i, d in enumerate(docs[:10], 1) if gold in d), None)
    return (1 / first if first else 0.0), float(first == 1)


METRICS = {"scifact": ("ndcg@10", "recall@2"), "hotpotqa_dev50": ("ndcg@10", "recall@2"),
           "locomo": ("recall@5", "mrr")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--datasets", type=Path, default=None,
                    help="the shared datasets folder (default: ../shared/datasets)")
    args = ap.parse_args()
    global DATASETS
    DATASETS = args.datasets or DATASETS

    from knotwork import Knotwork
    from knotwork.retrieve import fulltext
    from knotwork.retrieve.adaptive import adaptive_sum
    from knotwork.retrieve.dated import by_date
    from knotwork.retrieve.pipeline import says_something
    from knotwork.retrieve.rank import HYBRID_WEIGHTS, bm25_moments, rrf, zscore_sum
    from knotwork.retrieve.records import by_record

    Run = list[tuple[int, float]]
    Stats = list[tuple[float, float] | None]
    modes: dict[str, Callable[[list[Run], Stats, int], Run]] = {
        "bm25": lambda runs, st, n: runs[0],
        "vector": lambda runs, st, n: runs[1],
        "zscore": lambda runs, st, n: _ordered(zscore_sum(runs, weights=HYBRID_WEIGHTS,
                                                          stats=st)),
        "rrf": lambda runs, st, n: _ordered(rrf(runs)),
        "adaptive": lambda runs, st, n: _ordered(adaptive_sum(runs, stats=st, n=n)),
    }
    listed = {"adaptive"}  # the fusions ``search`` adds a list's best line to (by_record)
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        k = 100 if name in ("scifact", "hotpotqa_dev50") else 10
        scores: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
        for vault, db, questions in _queries(name, args.workdir):
            if not db.exists():
                print(f"{name}: no store at {db}: skipped", file=sys.stderr)
                break
            with Knotwork.open(vault, db=str(db)) as kw:
                if kw.embedding_status() != "complete":
                    print(f"{name}: vectors {kw.embedding_status()}: skipped", file=sys.stderr)
                    break
                reader = kw._reader()
                n = reader.live_chunk_count()
                for question, gold in questions:
                    text = [(h.id, h.score) for h in
                            fulltext.search_chunks(reader, question, limit=DEPTH)]
                    # the question's words a vector sees (``retrieve.vector_text``)
                    vec, moments = kw._vector_search(kw._vector_text(question, None), DEPTH)
                    runs = [text, vec]
                    stats: Stats = [bm25_moments([s for _, s in text], n), moments]
                    for mode, fuse in modes.items():
                        ranked = fuse(runs, stats, n)
                        if mode in listed:
                            ranked = _ordered(by_record(reader, question, dict(ranked),
                                                        [c for c, _ in text]))
                        if mode not in ("bm25", "vector"):  # as search's hybrid does
                            ranked = _ordered(by_date(reader, question, dict(ranked)))
                        ranked = ranked[:3 * k]
                        rows = reader.chunks([c for c, _ in ranked])
                        found = [c for c, _ in ranked if c in rows]
                        full = [c for c in found if says_something(rows[c].text, 1)]
                        top = (full + [c for c in found if c not in set(full)])[:k]
                        docs = list(dict.fromkeys(rows[c].path for c in top))
                        scores[mode].append(_score(name, docs, gold))
        else:
            first, second = METRICS.get(name, ("mrr", "hit@1"))
            for mode, vals in scores.items():
                print(json.dumps({"set": name, "mode": mode, "queries": len(vals),
                                  first: round(statistics.mean(v[0] for v in vals), 4),
                                  second: round(statistics.mean(v[1] for v in vals), 4)}),
                      flush=True)
    return 0


def _ordered(scores: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


if __name__ == "__main__":
    raise SystemExit(main())
