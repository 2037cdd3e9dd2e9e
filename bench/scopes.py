"""What full-text statistics per scope cost: the same notes in one scope and in several,
asked the same questions: prints one JSON line (never a test).

    python bench/scopes.py --notes 2000 --workdir /tmp/kw-scopes

The synthetic vault of ``bench/ingest.py`` is ingested into a store of one scope, and into
a store where each of its seven top folders is a scope of its own. Each store answers
``--queries`` questions (as ``bench/backends.py`` asks them) with ``context`` and ``search``:
over every scope, and in one scope only. Wall p50/p95 in ms per call. The stores are kept
in ``--workdir`` (a second run asks again without building; run old and new code on
workdirs of their own).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import WORDS, make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402

FOLDERS = ("services", "hosts", "people", "projects", "decisions", "meetings", "teams")


def _timed(calls: list[tuple[str, dict[str, object]]], run: object) -> list[float]:
    out = []
    for q, kw in calls:
        t = time.perf_counter()
        run(q, **kw)  # type: ignore[operator]
        out.append((time.perf_counter() - t) * 1000)
    return out


def _p(xs: list[float]) -> list[float]:
    xs = sorted(xs)
    return [round(statistics.median(xs), 2), round(xs[int(len(xs) * 0.95) - 1], 2)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workdir", default="/tmp/kw-bench-scopes")
    args = ap.parse_args()
    work = Path(args.workdir)
    vault = work / "vault"
    if not vault.exists():
        make_vault(vault, args.notes)
    rng = random.Random(3)
    queries = [" ".join(rng.sample(WORDS, 2)) if rng.random() < 0.5
               else f"note {rng.randrange(args.notes):05d}" for _ in range(args.queries)]
    result: dict[str, object] = {"notes": args.notes, "queries": args.queries}
    for name, split in (("one_scope", False), ("seven_scopes", True)):
        db = str(work / f"{name}.db")
        with Knotwork.open(None, db=db, embedder="none") as kw:
            if not Path(db + ".built").exists():
                t = time.perf_counter()
                if split:
                    for folder in FOLDERS:
                        kw.ingest(vault / folder, scope=folder)
                else:
                    kw.ingest(vault, scope="default")
                result[f"{name}_ingest_s"] = round(time.perf_counter() - t, 1)
                Path(db + ".built").touch()
            one = ["services"] if split else ["default"]
            for q in queries[:5]:
                kw.context(q)
            for what, scopes in (("all", None), ("one", one)):
                result[f"{name}_context_{what}_ms"] = _p(_timed(
                    [(q, {"scopes": scopes, "max_tokens": 0}) for q in queries], kw.context))
                result[f"{name}_search_{what}_ms"] = _p(_timed(
                    [(q, {"scopes": scopes, "k": 10}) for q in queries], kw.search))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
