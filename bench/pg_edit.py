"""What one PostgreSQL edit costs: statements, round trips, client and server CPU (never a test).

    python bench/pg_edit.py --notes 2000                  # builds a store, keeps it
    python bench/pg_edit.py --notes 2000 --edits 30       # again: reuses the kept store
    python bench/pg_edit.py --notes 2000 --log            # and prints each statement

A store of ``--notes`` synthetic notes (``bench/ingest.py``'s vault) is built once in a
schema of its own and kept, with its vault, under ``--dir`` (default
``/tmp/kw-pg-edit-<notes>``): a second run edits it again without the cold ingest
(``--fresh`` builds it anew; ``--kept DIR`` edits the PostgreSQL store that
``bench/backends.py --keep-stores DIR`` kept). Then ``--edits`` notes are edited one at a
time, each synced as a watcher does (``ingest(only=[path])``: the document's write, then
its mentions), and for each edit it counts:

- ``statements``: what ``Con.execute``/``executemany`` sent (an ``executemany`` of n rows
  counted as n statements, as psycopg sends them), and the round trips among them;
- ``client_cpu_ms``: this process's CPU time;
- ``server_cpu_ms``: the CPU time of the server processes serving this store's pool
  (read from ``/proc``: the server runs on this host), found by ``application_name``;
- ``wall_ms``: p50 and p95;
- ``rows``: per edit, what ``pg_stat_user_tables`` counted on ``facts``, ``chunks`` and
  ``chunk_postings`` (rows inserted, updated, updated HOT, i.e. without touching an index,
  and deleted; the two warm-up edits included).

``--log`` prints each statement's text once with its count and round trips per edit (a
pipeline's trip counted on its first statement) and its share of the time spent waiting on
the server.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import kept_schema  # noqa: E402
from ingest import make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402
from knotwork.store.postgres import connection  # noqa: E402

APP = "kw-pg-edit"


def _cpu_ms(pid: int) -> float:
    """A process's CPU time so far (``schedstat``: nanoseconds, not clock ticks)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6
    except OSError:
        return 0.0


def store_url(base: str, schema: str, app: str = APP) -> str:
    sep = "&" if "?" in base else "?"
    return (f"{base}{sep}application_name={app}"
            f"&options={quote(f'-csearch_path={schema},public')}")


def built(base: str, notes: int, folder: Path, *, fresh: bool) -> tuple[str, Path, str]:
    """(url, vault, schema) of a kept store of ``notes`` notes, built if missing."""
    import psycopg

    schema = kept_schema(notes, folder).replace("bench_kept", "kw_pg_edit", 1)
    vault = folder / "vault"
    with psycopg.connect(base, autocommit=True) as con:
        have = con.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
        if fresh or not have or not vault.exists():
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())
            con.execute(f"CREATE SCHEMA {schema}".encode())
            have = None
    url = store_url(base, schema)
    if not have:
        import shutil

        shutil.rmtree(vault, ignore_errors=True)
        vault.mkdir(parents=True)
        make_vault(vault, notes)
        t0 = time.perf_counter()
        with Knotwork.open(vault, db=url, embedder="none") as kw:
            kw.ingest()
        print(f"built {notes} notes in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return url, vault, schema


class Spy:
    """Counts the statements ``Con`` sends, with the time spent in each."""

    def __init__(self) -> None:
        self.on = False
        self.count: Counter[str] = Counter()
        self.trips: Counter[str] = Counter()
        self.wait: defaultdict[str, float] = defaultdict(float)
        ex, many = connection.Con.execute, connection.Con.executemany
        spy = self

        def execute(con: Any, sql: str, args: Any = ()) -> Any:
            t = time.perf_counter()
            try:
                return ex(con, sql, args)
            finally:
                if spy.on:
                    spy.count[sql] += 1
                    spy.trips[sql] += 1
                    spy.wait[sql] += time.perf_counter() - t

        def executemany(con: Any, sql: str, rows: Any) -> Any:
            t = time.perf_counter()
            try:
                return many(con, sql, rows)
            finally:
                if spy.on and rows:
                    spy.count[sql] += len(rows)
                    spy.trips[sql] += 1  # (psycopg pipelines the rows)
                    spy.wait[sql] += time.perf_counter() - t

        pipe = getattr(connection.Con, "pipeline", None)

        def pipeline(con: Any, statements: Any) -> Any:
            t = time.perf_counter()
            try:
                return pipe(con, statements)  # type: ignore[misc]
            finally:
                if spy.on and len(statements) > 1:  # (one is sent by ``execute``)
                    share = (time.perf_counter() - t) / len(statements)
                    for sql, _ in statements:
                        spy.count[sql] += 1
                        spy.wait[sql] += share
                    spy.trips[statements[0][0]] += 1

        if pipe is not None:  # (an older tree sends every statement alone)
            connection.Con.pipeline = pipeline  # type: ignore[method-assign]
        connection.Con.execute = execute  # type: ignore[method-assign]
        connection.Con.executemany = executemany  # type: ignore[method-assign]


def _server_pids(base: str, app: str) -> list[int]:
    import psycopg

    with psycopg.connect(base, autocommit=True) as con:
        return [int(r[0]) for r in con.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (app,))]


def _table_rows(base: str, schema: str) -> dict[str, dict[str, int]]:
    import psycopg

    with psycopg.connect(base, autocommit=True) as con:
        return {r[0]: {"ins": r[1], "upd": r[2], "hot": r[3], "del": r[4]} for r in con.execute(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del"
            " FROM pg_stat_user_tables WHERE schemaname = %s"
            " AND relname IN ('facts', 'chunks', 'chunk_postings')", (schema,))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--kept", type=Path, default=None, metavar="DIR",
                    help="edit the store ``bench/backends.py --keep-stores DIR`` kept")
    ap.add_argument("--log", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pg", default=os.environ.get("KNOTWORK_TEST_PG_URL", ""))
    args = ap.parse_args()
    if args.kept is not None:  # (a store ``bench/backends.py --keep-stores`` kept)
        schema = kept_schema(args.notes, args.kept)
        url = store_url(args.pg, schema)
        vault = args.kept / "postgresql" / "vault"
    else:
        folder = args.dir or Path(f"/tmp/kw-pg-edit-{args.notes}")
        url, vault, schema = built(args.pg, args.notes, folder, fresh=args.fresh)
    paths = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    rng = random.Random(args.seed)
    spy = Spy()
    wall, client, server = [], [], []
    rows0 = _table_rows(args.pg, schema)
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        kw.context("warm up")
        sample = rng.sample(paths, args.edits + 2)
        for i, rel in enumerate(sample):
            f = vault / rel
            f.write_text(f.read_text(encoding="utf-8") + f"\nEdited: uses [[{Path(rel).stem}]]"
                         f" {rng.random()}\n", encoding="utf-8")
            pids = _server_pids(args.pg, APP)
            s0 = sum(_cpu_ms(p) for p in pids)
            c0, t0 = time.process_time(), time.perf_counter()
            spy.on = i >= 2  # (two edits to warm the pool and the caches)
            assert kw.ingest(only=[rel]).updated == 1
            spy.on = False
            if i >= 2:
                wall.append((time.perf_counter() - t0) * 1000)
                client.append((time.process_time() - c0) * 1000)
                server.append(sum(_cpu_ms(p) for p in pids) - s0)
    n = len(wall)
    time.sleep(1.0)  # (a closed session's counts reach the statistics a moment later)
    rows1 = _table_rows(args.pg, schema)
    out: dict[str, Any] = {"notes": args.notes, "edits": n,
           "statements": round(sum(spy.count.values()) / n, 1),
           "round_trips": round(sum(spy.trips.values()) / n, 1),
           "wall_ms": [round(statistics.median(wall), 2),
                       round(sorted(wall)[min(n - 1, int(0.95 * n))], 2)],
           "client_cpu_ms": round(statistics.mean(client), 2),
           "server_cpu_ms": round(statistics.mean(server), 2),
           "wait_ms": round(sum(spy.wait.values()) * 1000 / n, 2),
           "rows": {t: {k: round((rows1[t][k] - rows0[t][k]) / (n + 2), 1) for k in rows1[t]}
                    for t in rows1}}
    print(json.dumps(out), flush=True)
    if args.log:
        for sql, c in sorted(spy.count.items(), key=lambda kv: -spy.wait[kv[0]]):
            text = " ".join(sql.split())[:150]
            trips, ms = spy.trips[sql] / n, spy.wait[sql] * 1000 / n
            print(f"{c / n:6.1f}x {trips:4.1f}t {ms:6.2f} ms  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
