"""``find`` and ``recent_changes`` benchmark: prints one JSON line of numbers (never a test).

    python bench/find.py                   # synthetic vault of 5,000 notes (bench/ingest.py's)
    python bench/find.py --notes 500 --runs 20

Builds the vault of ``bench/ingest.py`` (~30 facts a note: a ``type``, a ``priority`` 1-5,
a link in frontmatter, ``owner::`` links), syncs it (no vectors), then times each query
(median of ``--runs``, milliseconds) twice, in adjacent runs: as shipped (live facts read
on ``facts_predicate_live`` / ``facts_object``) and with the same statements told to use no
index (``NOT INDEXED``: every fact row read), which is what the query costs without the
index. Answers are checked equal.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402
from knotwork.store import FactMatch  # noqa: E402
from knotwork.store.sqlite import find as sqlite_find  # noqa: E402

_INDEXED = sqlite_find._condition


def _unindexed(i: int, m: FactMatch, scopes: Sequence[str] | None) -> tuple[str, list[object]]:
    sql, args = _INDEXED(i, m, scopes)
    for name in ("facts_predicate_live", "facts_object"):
        sql = sql.replace(f"INDEXED BY {name}", "NOT INDEXED")
    return sql, args


def _median_ms(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    out, times = None, []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 2), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=5_000)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        make_vault(vault, args.notes)
        with Knotwork.open(vault, db=str(Path(tmp) / "s.db"), embedder="none") as kw:
            t0 = time.perf_counter()
            kw.ingest(embed=False)
            synced = time.perf_counter() - t0
            hub = kw.find(["owner"], limit=1).entities[0].facts[0].value_label or ""
            queries: dict[str, Callable[[], Any]] = {
                "type+priority": lambda: kw.find(["priority=3"], type="service", limit=50),
                "priority (broad)": lambda: kw.find(["priority=3"], limit=50),
                "owner=[[entity]]": lambda: kw.find([f"owner=[[{hub}]]"], limit=50),
                "recent_changes 100": lambda: kw.recent_changes(since="1h", limit=100),
            }
            result: dict[str, object] = {
                "notes": args.notes, "facts": kw.stats().facts, "sync_s": round(synced, 1)}
            for name, q in queries.items():
                fast, a = _median_ms(q, args.runs)
                row: dict[str, object] = {"indexed_ms": fast, "answers": len(
                    getattr(a, "entities", None) or getattr(a, "changes", ()))}
                if name != "recent_changes 100":
                    sqlite_find._condition = _unindexed  # type: ignore[assignment]
                    try:
                        slow, b = _median_ms(q, args.runs)
                    finally:
                        sqlite_find._condition = _INDEXED
                    assert a.as_dict() == b.as_dict(), name
                    row["no_index_ms"] = slow
                result[name] = row
    print(json.dumps(result))


if __name__ == "__main__":
    main()
