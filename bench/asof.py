"""What history costs and what an as-of answer costs: prints one JSON line (never a test).

    python bench/asof.py --notes 2000 --edits 400

Ingests a synthetic vault (``bench/ingest.py``'s), takes a checkpoint, then rewrites a
paragraph of ``--edits`` random notes (one note in ten also gains an alias, one in twenty is
deleted). Reports the store's size before and after the edits, the history rows the edits
left (retired chunks, dropped name declarations, replaced entity texts), and ``context``
latency p50/p95 over ``--queries`` questions asked live and as of the checkpoint (the live
path reads no history: see ``trust.history``).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import WORDS, _pct, _words, make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402
from knotwork.store import record_time  # noqa: E402


def _size(tmp: Path) -> float:
    return round(sum(p.stat().st_size for p in tmp.glob("store.db*")) / 1e6, 1)


def _count(con: sqlite3.Connection, sql: str) -> int | None:
    """A count, or None where the store keeps no such table (a knotwork before history)."""
    try:
        return int(con.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--edits", type=int, default=400)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kw-asof-"))
    vault = tmp / "vault"
    vault.mkdir()
    paths = make_vault(vault, args.notes)
    try:
        print(json.dumps(_run(tmp, vault, paths, args)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(tmp: Path, vault: Path, paths: list[str], args: argparse.Namespace
         ) -> dict[str, object]:
    rng = random.Random(5)
    with Knotwork.open(vault, db=str(tmp / "store.db"), embedder="none") as kw:
        kw.ingest()
        before = _size(tmp)
        time.sleep(0.01)
        checkpoint = record_time(datetime.now(UTC))
        time.sleep(0.01)
        t = time.perf_counter()
        alive = list(paths)
        for i in range(args.edits):
            rel = rng.choice(alive)
            f = vault / rel
            if i % 20 == 19:
                f.unlink()
                alive.remove(rel)
            else:
                lines = f.read_text(encoding="utf-8").split("\n")
                lines[10] = _words(rng, 60)  # the note's first paragraph, rewritten
                if i % 10 == 9:
                    lines.insert(1, f"aliases: [{rng.choice(WORDS).title()} {i}]")
                f.write_text("\n".join(lines), encoding="utf-8")
            kw.ingest(only=[rel])
        edits_s = time.perf_counter() - t
        after = _size(tmp)
        con = sqlite3.connect(tmp / "store.db")
        rows = {k: _count(con, q) for k, q in {
            "live_chunks": "SELECT COUNT(*) FROM chunks WHERE live = 1",
            "retired_chunks": "SELECT COUNT(*) FROM chunks WHERE live = 0",
            "names_past": "SELECT COUNT(*) FROM names_past",
            "entity_past": "SELECT COUNT(*) FROM entity_past",
            "versions": "SELECT COUNT(*) FROM versions"}.items()}
        con.close()
        queries = [" ".join(rng.sample(WORDS, 2)) if rng.random() < 0.5
                   else Path(rng.choice(paths)).stem for _ in range(args.queries)]
        kw.context(queries[0])
        kw.context(queries[0], as_of=checkpoint)
        timings: dict[str, list[float]] = {"live": [], "as_of": []}
        for q in queries:  # the two kinds interleaved: the machine's load hits both alike
            for kind, as_of in (("live", None), ("as_of", checkpoint)):
                t = time.perf_counter()
                kw.context(q, as_of=as_of)
                timings[kind].append((time.perf_counter() - t) * 1000)
    return {
        "notes": args.notes, "edits": args.edits, "edits_s": round(edits_s, 2),
        "store_mb_before_edits": before, "store_mb_after_edits": after, **rows,
        **{f"context_{k}_ms_p50": _pct(v, 0.5) for k, v in timings.items()},
        **{f"context_{k}_ms_p95": _pct(v, 0.95) for k, v in timings.items()},
    }


if __name__ == "__main__":
    main()
