"""Where a PostgreSQL ``context`` spends its time: prints one JSON line (never a test).

    python bench/pg_context.py --notes 2000                  # builds the store, then asks
    python bench/pg_context.py --notes 10000 --schema kw10k  # kept: a second run reuses it

On the synthetic vault of ``bench/ingest.py``, in a schema of its own of the server at
``--pg`` (default ``$KNOTWORK_TEST_PG_URL``), ``--queries`` questions as ``bench/backends.py``
asks them, after five to warm up. Reports, a question: wall p50/p95, the statements sent
(each counted by wrapping the backend's one execute function and its pipeline) and the
round trips they took (a pipeline's statements, one; the snapshot's own two not counted),
the client's CPU time, and the CPU time of the server processes serving this run's
connections (read from ``/proc/<pid>/stat``: only when the server runs on this machine,
else null). CPU time is steadier than wall time on a shared machine, so runs of two
versions alternated (``PYTHONPATH=old/src``, then new, then old again) compare better by
it. ``--top N`` adds the N statement texts that took longest (a long one shown by its
start and end).

``--sqlite`` also asks every question of a SQLite store of the same vault (built once
next to the vault), right after PostgreSQL answers it: the two backends' latencies are
then measured within the same moments of a shared machine's load, and ``ratio_p50``
(PostgreSQL's median over SQLite's) holds better than two runs apart would.

Without ``--schema`` the store is built in a fresh schema and dropped after; with it the
schema (and the vault, in the temporary folder) is built if missing and kept (drop it
yourself: ``DROP SCHEMA name CASCADE``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import WORDS, make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402
from knotwork.store.postgres import connection  # noqa: E402

APP = "knotwork-bench-" + uuid.uuid4().hex[:8]


def _server_cpu(base: str) -> float | None:
    """Seconds of CPU the server's processes for this run's connections have used."""
    import psycopg

    with psycopg.connect(base, autocommit=True) as con:
        pids = [r[0] for r in con.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (APP,))]
    total = 0
    try:
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    except OSError:
        return None  # (a server on another machine)
    return total / os.sysconf("SC_CLK_TCK")


def _sqlite(vault: Path, work: Path) -> Knotwork:
    """A SQLite store of ``vault`` in ``work`` (built by the first run that asks for it)."""
    kw = Knotwork.open(vault, db=str(work / "sqlite.db"), embedder="none")
    if kw.stats().documents == 0:
        kw.ingest()
    return kw


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--pg", default=os.environ.get("KNOTWORK_TEST_PG_URL", ""))
    ap.add_argument("--schema", default="", help="keep the store in this schema (reused)")
    ap.add_argument("--top", type=int, default=0, help="also list the N costliest statements")
    ap.add_argument("--sqlite", action="store_true",
                    help="ask each question of a SQLite store of the same vault too")
    args = ap.parse_args()
    if not args.pg:
        print("no PostgreSQL: pass --pg URL or set KNOTWORK_TEST_PG_URL", file=sys.stderr)
        return 1
    import psycopg

    schema = args.schema or "bench_" + uuid.uuid4().hex[:8]
    work = (Path(tempfile.gettempdir()) / f"kw-pg-context-{schema}-{args.notes}"
            if args.schema else Path(tempfile.mkdtemp(prefix="kw-pg-context-")))
    vault = work / "vault"
    with psycopg.connect(args.pg, autocommit=True) as con:
        exists = con.execute("SELECT EXISTS(SELECT 1 FROM pg_namespace WHERE nspname = %s)",
                             (schema,)).fetchone()
        built = bool(exists and exists[0]) and vault.is_dir()
        if not built:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())
            con.execute(f"CREATE SCHEMA {schema}".encode())
    if not vault.is_dir():
        vault.mkdir(parents=True)
        make_vault(vault, args.notes)
    sep = "&" if "?" in args.pg else "?"
    url = (f"{args.pg}{sep}application_name={APP}"
           f"&options={quote(f'-csearch_path={schema},public')}")
    took: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    sent = [0]
    trips = [0]  # round trips: a pipeline's statements go in one
    run = connection._run

    def counted(con: Any, sql: str, params: Any) -> Any:
        t = time.perf_counter()
        try:
            return run(con, sql, params)
        finally:
            text = " ".join(sql.split())
            entry = took[text if len(text) <= 130 else f"{text[:80]} … {text[-45:]}"]
            entry[0] += 1
            entry[1] += time.perf_counter() - t
            sent[0] += 1
            trips[0] += 1

    pipeline = connection.Con.pipeline

    def piped(con: Any, statements: Any) -> Any:
        """A pipeline's statements, each counted, in one round trip (timed as one)."""
        t = time.perf_counter()
        try:
            return pipeline(con, statements)
        finally:
            if con.pinned is not None and len(statements) > 1:
                text = " + ".join(" ".join(sql.split())[:60] for sql, _ in statements)
                entry = took["pipeline: " + text]
                entry[0] += 1
                entry[1] += time.perf_counter() - t
                sent[0] += len(statements)
                trips[0] += 1

    connection._run = counted  # type: ignore[assignment]
    connection.Con.pipeline = piped  # type: ignore[method-assign]
    try:
        with Knotwork.open(vault, db=url, embedder="none") as kw:
            ingest_s = None
            if not built:
                t0 = time.perf_counter()
                kw.ingest()
                ingest_s = round(time.perf_counter() - t0, 1)
            rng = random.Random(11)
            paths = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
            queries = [" ".join(rng.sample(WORDS, 2)) if rng.random() < 0.5
                       else Path(rng.choice(paths)).stem for _ in range(args.queries)]
            lite = _sqlite(vault, work) if args.sqlite else None
            for q in queries[:5]:
                kw.context(q)
                if lite is not None:
                    lite.context(q)
            took.clear()
            sent[0] = trips[0] = 0
            ms: list[float] = []
            lite_ms: list[float] = []
            client = 0.0
            server0 = _server_cpu(args.pg)
            for q in queries:
                c, t = time.process_time(), time.perf_counter()
                kw.context(q)
                ms.append((time.perf_counter() - t) * 1000)
                client += time.process_time() - c
                if lite is not None:
                    t = time.perf_counter()
                    lite.context(q)
                    lite_ms.append((time.perf_counter() - t) * 1000)
            server1 = _server_cpu(args.pg)
            if lite is not None:
                lite.close()
    finally:
        connection._run = run  # type: ignore[assignment]
        connection.Con.pipeline = pipeline  # type: ignore[method-assign]
        if not args.schema:
            with psycopg.connect(args.pg, autocommit=True) as con:
                con.execute(f"DROP SCHEMA {schema} CASCADE".encode())
            shutil.rmtree(work, ignore_errors=True)
    n = len(queries)
    ms.sort()
    out: dict[str, Any] = {
        "notes": args.notes, "queries": n, "ingest_s": ingest_s,
        "context_ms": [round(statistics.median(ms), 2), round(ms[int(0.95 * (n - 1))], 2)],
        "statements": round(sent[0] / n, 2), "round_trips": round(trips[0] / n, 2),
        "client_cpu_ms": round(client * 1000 / n, 2),
        "server_cpu_ms": (round((server1 - server0) * 1000 / n, 2)
                          if server0 is not None and server1 is not None else None)}
    if lite_ms:
        lite_ms.sort()
        out["sqlite_context_ms"] = [round(statistics.median(lite_ms), 2),
                                    round(lite_ms[int(0.95 * (n - 1))], 2)]
        out["ratio_p50"] = round(statistics.median(ms) / statistics.median(lite_ms), 2)
    if args.top:
        out["top"] = [{"sql": k, "per_query": round(c / n, 2), "ms": round(t * 1000 / n, 2)}
                      for k, (c, t) in sorted(took.items(), key=lambda kv: -kv[1][1])
                      [:args.top]]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
