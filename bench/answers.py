"""Answers on a real folder: does ``context`` put the note that answers a question first?
Prints one JSON line per mode (never a test).

    python bench/answers.py --vault ../shared/datasets/k8s_keps \\
        --questions bench/questions/k8s_keps.tsv
    python bench/answers.py --vault ../shared/datasets/rust_rfcs \\
        --questions bench/questions/rust_rfcs.tsv --mode bm25 --workdir /tmp/kw-rfcs

A question file has one question a line: the question, a tab, and a piece of the answering
note's path (its folder or file stem: ``2232-suspend-jobs``). The questions say what the
note is about in other words than its title's, as a person who has not read it would ask,
so they test what BM25 alone cannot find.

The folder is ingested into a store under ``--workdir`` (kept, so a second run only syncs;
hybrid embeds every chunk the first time: minutes for a few thousand chunks). Each question
runs through ``kw.context(q, max_entities=10, max_tokens=0)``. Per mode: ``hit@1``, ``hit@3``,
``hit@10`` (questions whose answering note is among the first 1, 3 or 10 entities), ``mrr``
(mean of 1 / its rank, 0 when it is not listed), ``evidence@1`` (questions whose first
evidence chunk comes from it) and the latency p50 in ms. ``-v`` lists every question whose
answer was not first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def read_questions(path: Path) -> list[tuple[str, str]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        question, sep, gold = line.partition("\t")
        if not sep or not question.strip() or not gold.strip():
            raise SystemExit(f"{path}:{n}: want 'question<TAB>path piece', got {line!r}")
        out.append((question.strip(), gold.strip()))
    return out


def run(kw: Any, questions: list[tuple[str, str]], mode: str, *, verbose: bool
        ) -> dict[str, object]:
    ranks: list[int | None] = []
    first_evidence = 0
    lat: list[float] = []
    for question, gold in questions:
        t0 = time.perf_counter()
        ctx = kw.context(question, max_entities=10, max_tokens=0)
        lat.append((time.perf_counter() - t0) * 1000)
        paths = [e.iri for e in ctx.entities]
        rank = next((i for i, iri in enumerate(paths, start=1) if gold in iri), None)
        ranks.append(rank)
        first_evidence += bool(ctx.evidence) and gold in ctx.evidence[0].path
        if verbose and rank != 1:
            top = ctx.entities[0].label if ctx.entities else "(nothing)"
            print(f"  {mode} {rank or '-':>2}  {question[:60]:60}  first: {top[:50]}",
                  file=sys.stderr)
    n = len(questions)
    return {"mode": mode, "questions": n,
            "hit@1": sum(r == 1 for r in ranks), "hit@3": sum(r is not None and r <= 3
                                                             for r in ranks),
            "hit@10": sum(r is not None for r in ranks),
            "mrr": round(sum(1 / r for r in ranks if r) / n, 3) if n else 0.0,
            "evidence@1": first_evidence,
            "latency_ms_p50": round(statistics.median(lat), 2) if lat else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--mode", choices=("bm25", "hybrid", "both"), default="both")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the store is kept (default: a folder named after the vault"
                         " in the temporary directory)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    from knotwork import Knotwork

    questions = read_questions(args.questions)
    vault = args.vault.expanduser().resolve()
    work = args.workdir or Path(tempfile.gettempdir()) / f"kw-answers-{vault.name}"
    work.mkdir(parents=True, exist_ok=True)
    modes = ("bm25", "hybrid") if args.mode == "both" else (args.mode,)
    db = str(work / "s.db")
    with Knotwork.open(vault, db=db) as kw:
        t0 = time.perf_counter()
        report = kw.ingest(embed="hybrid" in modes)
        print(f"synced in {time.perf_counter() - t0:.1f}s: added {report.added}, reread"
              f" {report.reread}; {kw.embedding_status()}", file=sys.stderr, flush=True)
    for mode in modes:
        with Knotwork.open(vault, db=db, **({"embedder": "none"} if mode == "bm25" else {})
                           ) as kw:
            line = run(kw, questions, mode, verbose=args.verbose)
            line.update(vault=vault.name, embedding_status=kw.embedding_status())
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
