"""LoCoMo, retrieval only: does a store of one conversation's sessions find the sessions
that answer each question? Prints one JSON line per mode (never a test).

    python bench/locomo.py --data ../shared/datasets/locomo_dev --workdir /tmp/kw-locomo
    python bench/locomo.py --modes bm25,context --no-budget     # no vectors needed
    python bench/locomo.py --modes hybrid --fusion rrf --per-category

The protocol is the dataset's README: one store per conversation (``vault/conv-NN``, kept
under ``--workdir``, so a second run only syncs; the first embeds every chunk), each
question asked of its own conversation's store verbatim, 10 results requested.

- ``bm25 | vector | hybrid``: ``kw.search(q, k=10, mode=mode)`` (``--fusion`` goes to
  hybrid); the ranked list of distinct notes the chunks come from.
- ``context``: ``kw.context(q, max_entities=10)`` with the default token budget
  (``--no-budget``: none); its note entities in their order.

Note level: ``recall@k`` = share of the gold notes among the first k, ``hit@k``, ``mrr``
(1 / rank of the first gold note among the first 10). Turn level (``turn_recall@5``):
each returned chunk counts for the dialog ids printed in it (``(D3:7)``), the share of the
evidence ids the first 5 chunks cover (``search`` modes only; ``context`` gives its
evidence chunks). Latency is the median wall time a question, in ms.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SEARCH_MODES = ("bm25", "vector", "hybrid")
MODES = (*SEARCH_MODES, "context")
DIALOG_ID = re.compile(r"\(D(\d+):(\d+)\)")
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}


# ------------------------------------------------------------ metrics (pure)

def note_metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """recall@5, recall@10, hit@5 and reciprocal rank (≤ 10) of one ranked note list.

    >>> note_metrics(["a", "b", "c"], ["c", "z"])
    {'recall@5': 0.5, 'recall@10': 0.5, 'hit@5': 1.0, 'mrr': 0.3333333333333333}
    """
    want = set(gold)
    first = next((i for i, n in enumerate(ranked[:10], start=1) if n in want), None)
    return {"recall@5": len(want & set(ranked[:5])) / len(want),
            "recall@10": len(want & set(ranked[:10])) / len(want),
            "hit@5": float(bool(want & set(ranked[:5]))),
            "mrr": 1.0 / first if first else 0.0}


def turn_recall(chunks: Sequence[str], evidence: Sequence[str], k: int = 5) -> float:
    """Share of the evidence dialog ids printed in the first ``k`` chunk texts.

    >>> turn_recall(["- **A** (D1:3): hi", "(D2:1) (D2:2)"], ["D1:3", "D2:2", "D9:9"])
    0.6666666666666666
    """
    seen = {f"D{a}:{b}" for text in chunks[:k] for a, b in DIALOG_ID.findall(text)}
    want = set(evidence)
    return len(want & seen) / len(want) if want else 0.0


def distinct(items: Sequence[str]) -> list[str]:
    """The items in order, each at its first place."""
    return list(dict.fromkeys(items))


def bootstrap(diffs: Sequence[float], *, rounds: int = 2000, seed: int = 7
              ) -> tuple[float, float]:
    """A 95% interval of the mean of paired differences (percentile bootstrap)."""
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


# ------------------------------------------------------------ running

def stem(path: str) -> str:
    return Path(path).stem


def ask(kw: Any, mode: str, question: str, *, fusion: str | None, budget: bool
        ) -> tuple[list[str], list[str]]:
    """(ranked distinct notes, chunk texts in order) for one question."""
    if mode == "context":
        ctx = kw.context(question, max_entities=10, **({} if budget else {"max_tokens": 0}))
        notes = [e.iri.rsplit("/", 1)[-1].removesuffix(".md") for e in ctx.entities
                 if e.iri.startswith("kw:note/")]
        return distinct(notes), [ev.text for ev in ctx.evidence]
    extra = {"fusion": fusion} if mode == "hybrid" and fusion else {}
    hits = kw.search(question, k=10, mode=mode, **extra)
    return distinct([stem(h.path) for h in hits]), [h.text for h in hits]


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    out: dict[str, Any] = {"questions": n}
    for key in ("recall@5", "recall@10", "hit@5", "mrr", "turn_recall@5"):
        out[key] = round(sum(r[key] for r in rows) / n, 4) if n else 0.0
    out["notes_per_answer"] = round(sum(r["notes"] for r in rows) / n, 2) if n else 0.0
    return out


def main(argv: Sequence[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path,
                    default=here.parent.parent / "shared" / "datasets" / "locomo_dev")
    ap.add_argument("--workdir", type=Path,
                    default=Path(tempfile.gettempdir()) / "kw-locomo")
    ap.add_argument("--modes", default=",".join(MODES),
                    help=f"comma-separated, of {', '.join(MODES)}")
    ap.add_argument("--fusion", default=None, help="hybrid's fusion (default: the setting)")
    ap.add_argument("--no-budget", action="store_true", help="context without a token budget")
    ap.add_argument("--embedder", default=None, help="embedder spec (default: the setting)")
    ap.add_argument("--per-category", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="the first N questions a conversation")
    ap.add_argument("--pairs", default="", help="a,b: paired bootstrap of b − a (e.g."
                    " bm25,hybrid) on recall@5 and mrr")
    ap.add_argument("--dump", type=Path, default=None,
                    help="write every question's ranked notes per mode (JSON lines)")
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise SystemExit(f"unknown mode(s) {', '.join(bad)}; valid: {', '.join(MODES)}")
    questions = [json.loads(line) for line in
                 (args.data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    skipped = sum(not q["gold_notes"] for q in questions)
    if skipped:  # scored as the README counts: questions with a gold session
        print(f"{skipped} question(s) without a gold note skipped", file=sys.stderr)
    by_conv: dict[int, list[dict[str, Any]]] = {}
    for q in (q for q in questions if q["gold_notes"]):
        by_conv.setdefault(int(q["conv"]), []).append(q)

    from knotwork import Knotwork

    needs_vectors = any(m in ("vector", "hybrid") for m in modes) or (
        "context" in modes and args.embedder != "none")
    per_mode: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    lat: dict[str, list[float]] = {m: [] for m in modes}
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    for conv, qs in sorted(by_conv.items()):
        if args.limit:
            qs = qs[:args.limit]
        vault = args.data / "vault" / f"conv-{conv:02d}"
        work = args.workdir / f"conv-{conv:02d}"
        work.mkdir(parents=True, exist_ok=True)
        opened = {"db": str(work / "s.db"),
                  **({"embedder": args.embedder} if args.embedder else {})}
        with Knotwork.open(vault, **opened) as kw:
            t0 = time.perf_counter()
            report = kw.ingest(embed=needs_vectors)
            print(f"conv-{conv:02d}: synced in {time.perf_counter() - t0:.1f}s (added"
                  f" {report.added}); {kw.embedding_status()}", file=sys.stderr, flush=True)
            for mode in modes:
                for q in qs:
                    t1 = time.perf_counter()
                    notes, texts = ask(kw, mode, q["question"], fusion=args.fusion,
                                       budget=not args.no_budget)
                    lat[mode].append((time.perf_counter() - t1) * 1000)
                    row = {**note_metrics(notes, q["gold_notes"]),
                           "turn_recall@5": turn_recall(texts, q["evidence_ids"]),
                           "notes": len(notes), "category": q["category"], "id": q["id"]}
                    per_mode[mode].append(row)
                    if dump:
                        dump.write(json.dumps({"id": q["id"], "mode": mode, "notes": notes,
                                               "gold": q["gold_notes"]}) + "\n")
    if dump:
        dump.close()
    for mode in modes:
        rows = per_mode[mode]
        line: dict[str, Any] = {"dataset": "locomo_dev", "mode": mode, **summarise(rows),
                                "p50_ms": round(statistics.median(lat[mode]), 1)
                                if lat[mode] else None}
        if mode == "hybrid":
            line["fusion"] = args.fusion or "default"
        if mode == "context":
            line["budget"] = not args.no_budget
        if args.per_category:
            line["per_category"] = {
                CATEGORIES[c]: summarise([r for r in rows if r["category"] == c])
                for c in sorted(CATEGORIES) if any(r["category"] == c for r in rows)}
        print(json.dumps(line), flush=True)
    if args.pairs:
        a, b = (m.strip() for m in args.pairs.split(","))
        if a in per_mode and b in per_mode:
            for key in ("recall@5", "mrr"):
                diffs = [y[key] - x[key] for x, y in zip(per_mode[a], per_mode[b], strict=True)]
                lo, hi = bootstrap(diffs)
                print(json.dumps({"paired": f"{b} - {a}", "metric": key,
                                  "mean": round(sum(diffs) / len(diffs), 4),
                                  "ci95": [round(lo, 4), round(hi, 4)]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
