"""SQLite and PostgreSQL side by side: prints one JSON line per backend (never a test).

    python bench/backends.py --notes 10000            # PostgreSQL at $KNOTWORK_TEST_PG_URL
    python bench/backends.py --notes 2000 --pg postgresql://kw@db/knotwork

On the synthetic vault of ``bench/ingest.py`` (``--notes`` notes of ~3 KB with links), for
each backend in a fresh store (PostgreSQL: a schema of its own, dropped after):

- ``ingest_notes_per_s``: the cold ingest (structure and mentions, no vectors);
- ``edit_ms`` / ``delete_ms``: one note edited / deleted and synced, median and p95 of
  ``--edits`` (each a durable commit);
- ``context_ms``: single-client ``context`` latency, p50/p95 of ``--queries`` questions;
- ``rest_8``: ``--clients`` concurrent HTTP clients on ``POST /context`` of one REST server
  (uvicorn on 127.0.0.1): requests/s, p50/p95 and errors;
- ``writers_8``: ``--clients`` concurrent writers, each its own process with its own store
  handle (as the agents' servers, watchers and CLIs of one vault are), each editing and
  syncing ``--edits`` notes of its own (after one more, untimed: a writer's first sync
  loads the parsers): edits/s (the headline), and the CPU an edit took in the writers and
  in the server's processes serving them (``/proc``: a server on this host; else 0);
- ``writers_8_threads``: the same with the writers as threads of this one process (each its
  own handle, all sharing one interpreter lock), on other notes.

``--keep-stores DIR`` keeps the vaults and both stores (PostgreSQL: a schema named after
``--notes`` and ``DIR``) in ``DIR`` and reuses them on the next run with the same ``DIR``,
skipping the cold ingest (``ingest_s`` is then the sync that finds nothing changed);
``--writers-only`` measures the writers alone.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import WORDS, make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _edit(vault: Path, rel: str, rng: random.Random) -> None:
    f = vault / rel
    f.write_text(f.read_text(encoding="utf-8") + f"\nEdited: uses [[{Path(rel).stem}]]"
                 f" {rng.random()}\n", encoding="utf-8")


def _at_once(n: int, work: Any) -> tuple[float, list[Any]]:
    gate = threading.Barrier(n + 1)
    out: list[Any] = [None] * n

    def run(i: int) -> None:
        gate.wait()
        try:
            out[i] = work(i)
        except Exception as exc:  # noqa: BLE001  (counted as an error)
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    gate.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, out


def _rest(kw: Knotwork, queries: list[str], clients: int) -> dict[str, Any]:
    import httpx
    import uvicorn

    from knotwork.server.app import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(kw, sync_vault=False), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c:
            for q in queries[i::clients]:
                t = time.perf_counter()
                r = c.post("/context", json={"query": q})
                ms = (time.perf_counter() - t) * 1000
                with lock:
                    lat.append(ms)
                    errors[0] += r.status_code != 200

    try:
        wall, _ = _at_once(clients, client)
    finally:
        server.should_exit = True
        thread.join(10)
    return {"clients": clients, "requests": len(lat), "per_s": round(len(lat) / wall, 1),
            "p50_ms": _pct(lat, 0.5), "p95_ms": _pct(lat, 0.95), "errors": errors[0]}


def _write_mine(kw: Knotwork, vault: Path, mine: list[str], seed: int) -> int:
    r = random.Random(seed)
    for rel in mine:
        _edit(vault, rel, r)
        got = kw.ingest(only=[rel])
        assert got.updated == 1, got
    return len(mine)


APP = "kw-bench-writer"  # the writers' connections' application_name (their server CPU)


def _server_cpu_ms(base: str, app: str = APP) -> dict[int, float]:
    """CPU time so far of the server processes serving connections named ``app`` (read
    from ``/proc``: the server runs on this host), by process id; {} without a server."""
    if not base:
        return {}
    import psycopg

    with psycopg.connect(base, autocommit=True) as con:
        pids = [int(r[0]) for r in con.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (app,))]
    return {p: _cpu_ms(p) for p in pids}


def _cpu_ms(pid: int) -> float:
    try:  # (``schedstat``: nanoseconds on the CPU, finer than ``stat``'s clock ticks)
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6
    except OSError:
        return 0.0


def _named(db: str) -> str:
    """``db`` with the writers' ``application_name`` (a PostgreSQL URL), else itself."""
    if not db.startswith("postgres"):
        return db
    return f"{db}{'&' if '?' in db else '?'}application_name={APP}"


def _writers(db: str, vault: Path, paths: list[str], clients: int, edits: int, pg: str
             ) -> dict[str, Any]:
    """``clients`` writer threads of this process, each its own handle."""
    mine = _shares(paths, clients, edits)
    handles = [Knotwork.open(vault, db=_named(db), embedder="none") for _ in range(clients)]
    try:
        for i, h in enumerate(handles):  # (a first edit each, untimed: see ``_shares``)
            _write_mine(h, vault, mine[i][:1], -1 - i)
        s0, c0 = _server_cpu_ms(pg), time.process_time()
        wall, out = _at_once(clients, lambda i: _write_mine(handles[i], vault, mine[i][1:], i))
        client = (time.process_time() - c0) * 1000
        server = sum(_server_cpu_ms(pg).get(p, t) - t for p, t in s0.items())
    finally:
        for h in handles:
            h.close()
    return _writers_report(clients, wall, out, client, server)


def _shares(paths: list[str], clients: int, edits: int) -> list[list[str]]:
    """Each writer's notes: ``edits`` and one more, edited first and untimed (a writer's
    first sync loads the parsers, as a long-running watcher or server has long done)."""
    return [paths[i * (edits + 1):(i + 1) * (edits + 1)] for i in range(clients)]


def _writers_report(clients: int, wall: float, out: list[Any], client_ms: float,
                    server_ms: float) -> dict[str, Any]:
    """Edits a second, errors, and the CPU an edit took in the writers and the server."""
    errors = sum(1 for o in out if isinstance(o, BaseException | str))
    done = sum(o for o in out if isinstance(o, int))
    return {"writers": clients, "edits": done, "per_s": round(done / wall, 1), "errors": errors,
            "client_cpu_ms_per_edit": round(client_ms / max(done, 1), 2),
            "server_cpu_ms_per_edit": round(server_ms / max(done, 1), 2),
            "first_error": next((repr(o)[:200] for o in out if isinstance(o, BaseException | str)),
                                None)}


def _writer_process(db: str, vault: Path, mine: list[str], seed: int, gates: Any,
                    out: Any) -> None:
    """One writer process: open a handle, wait for the others, write, report (what it
    did and its CPU time), and close its handle once every writer is done."""
    try:
        kw = Knotwork.open(vault, db=_named(db), embedder="none")
    except Exception as exc:  # noqa: BLE001  (counted as an error)
        gates[0].wait()
        out.put((seed, f"open: {exc!r}", 0.0))
        gates[1].wait()
        return
    try:
        _write_mine(kw, vault, mine[:1], -1 - seed)  # (untimed: see ``_shares``)
        gates[0].wait()
        c0 = time.process_time()
        try:
            got: int | str = _write_mine(kw, vault, mine[1:], seed)
        except Exception as exc:  # noqa: BLE001  (counted as an error)
            got = repr(exc)
        out.put((seed, got, (time.process_time() - c0) * 1000))
        gates[1].wait()  # (the server's processes live until the parent has read them)
    finally:
        kw.close()


def _writer_processes(db: str, vault: Path, paths: list[str], clients: int, edits: int,
                      pg: str) -> dict[str, Any]:
    """``clients`` writer processes (spawned: nothing shared with this one), each its own
    handle; timed from when all have opened their handles to when the last is done."""
    ctx = multiprocessing.get_context("spawn")
    gates, out = (ctx.Barrier(clients + 1), ctx.Barrier(clients + 1)), ctx.Queue()
    mine = _shares(paths, clients, edits)
    procs = [ctx.Process(target=_writer_process, args=(db, vault, mine[i], i, gates, out))
             for i in range(clients)]
    for p in procs:
        p.start()
    gates[0].wait()
    t0 = time.perf_counter()
    s0 = _server_cpu_ms(pg)
    got = [out.get() for _ in procs]
    wall = time.perf_counter() - t0
    server = sum(_server_cpu_ms(pg).get(p, t) - t for p, t in s0.items())
    gates[1].wait()
    for p in procs:
        p.join()
    got.sort(key=lambda g: g[0])
    return _writers_report(clients, wall, [g[1] for g in got], sum(g[2] for g in got), server)


def run(backend: str, db: str, vault: Path, paths: list[str], args: argparse.Namespace
        ) -> dict[str, Any]:
    if args.writers_only:
        return _only_writers(backend, db, vault, paths, args)
    rng = random.Random(11)
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        t0 = time.perf_counter()
        report = kw.ingest()
        cold = time.perf_counter() - t0
        edit_ms, delete_ms = [], []
        sample = rng.sample(paths, 2 * args.edits)
        for rel in sample[:args.edits]:
            _edit(vault, rel, rng)
            t = time.perf_counter()
            assert kw.ingest(only=[rel]).updated == 1
            edit_ms.append((time.perf_counter() - t) * 1000)
        for rel in sample[args.edits:]:
            (vault / rel).unlink()
            t = time.perf_counter()
            assert kw.ingest(only=[rel]).deleted == 1
            delete_ms.append((time.perf_counter() - t) * 1000)
        gone = set(sample[args.edits:])
        left = [p for p in paths if p not in gone]
        queries = [" ".join(rng.sample(WORDS, 2)) if rng.random() < 0.5
                   else Path(rng.choice(left)).stem for _ in range(args.queries)]
        kw.context(queries[0])
        ctx_ms = []
        for q in queries:
            t = time.perf_counter()
            kw.context(q)
            ctx_ms.append((time.perf_counter() - t) * 1000)
        rest = _rest(kw, queries, args.clients)
        stats = kw.stats()
    writers = _both_writers(db, vault, [p for p in left if p not in sample], args)
    return {"backend": backend, "notes": len(paths), "errors": len(report.errors),
            "facts": stats.facts, "chunks": stats.chunks,
            "ingest_s": round(cold, 1), "ingest_notes_per_s": round(len(paths) / cold, 1),
            "edit_ms": [round(statistics.median(edit_ms), 2), _pct(edit_ms, 0.95)],
            "delete_ms": [round(statistics.median(delete_ms), 2), _pct(delete_ms, 0.95)],
            "context_ms": [_pct(ctx_ms, 0.5), _pct(ctx_ms, 0.95)],
            "rest_8": rest, **writers}


def _both_writers(db: str, vault: Path, paths: list[str], args: argparse.Namespace
                  ) -> dict[str, Any]:
    """Writer processes, then threads, on notes of their own (``paths`` shuffled)."""
    n = args.clients * (args.edits + 1)
    paths = random.Random(len(paths)).sample(paths, 2 * n)
    pg = args.pg if db.startswith("postgres") else ""
    return {"writers_8": _writer_processes(db, vault, paths[:n], args.clients, args.edits, pg),
            "writers_8_threads": _writers(db, vault, paths[n:], args.clients, args.edits, pg)}


def _only_writers(backend: str, db: str, vault: Path, paths: list[str],
                  args: argparse.Namespace) -> dict[str, Any]:
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        t0 = time.perf_counter()
        kw.ingest()
        cold = time.perf_counter() - t0
    return {"backend": backend, "notes": len(paths), "ingest_s": round(cold, 1),
            **_both_writers(db, vault, paths, args)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--pg", default=os.environ.get("KNOTWORK_TEST_PG_URL", ""),
                    help="PostgreSQL server URL (default $KNOTWORK_TEST_PG_URL)")
    ap.add_argument("--only", choices=("sqlite", "postgresql"), default=None)
    ap.add_argument("--keep", action="store_true",
                    help="keep the vaults and the SQLite store (their folder is printed)")
    ap.add_argument("--keep-stores", type=Path, default=None, metavar="DIR",
                    help="keep the vaults and both stores in DIR, and reuse them if there")
    ap.add_argument("--writers-only", action="store_true",
                    help="measure the concurrent writers alone")
    args = ap.parse_args()
    if args.keep_stores is not None:
        args.keep_stores.mkdir(parents=True, exist_ok=True)
        return _both(args.keep_stores, args)
    tmp = Path(tempfile.mkdtemp(prefix="kw-backends-"))
    try:
        return _both(tmp, args)
    finally:
        if args.keep:
            print(f"kept: {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def kept_schema(notes: int, folder: Path) -> str:
    """The schema of the PostgreSQL store kept in ``folder`` (one per folder: two kept
    stores of one size, say an old tree's and a new one's, never share a schema)."""
    import hashlib

    return f"bench_kept_{notes}_{hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:8]}"


def _vault(tmp: Path, backend: str, args: argparse.Namespace) -> tuple[Path, list[str]]:
    vault = tmp / backend / "vault"
    if args.keep_stores is not None and vault.exists():
        return vault, sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    shutil.rmtree(vault, ignore_errors=True)
    vault.mkdir(parents=True)
    return vault, make_vault(vault, args.notes)


def _both(tmp: Path, args: argparse.Namespace) -> int:
    for backend in ("sqlite", "postgresql"):
        if args.only and backend != args.only:
            continue
        if backend == "sqlite":
            if args.keep_stores is None or not (tmp / backend / "vault").exists():
                (tmp / backend / "store.db").unlink(missing_ok=True)
            vault, paths = _vault(tmp, backend, args)
            print(json.dumps(run(backend, str(tmp / backend / "store.db"), vault, paths, args)),
                  flush=True)
            continue
        if not args.pg:
            print("no PostgreSQL: pass --pg URL or set KNOTWORK_TEST_PG_URL", file=sys.stderr)
            return 1
        import psycopg

        kept = args.keep_stores is not None
        schema = kept_schema(args.notes, tmp) if kept else "bench_" + uuid.uuid4().hex[:8]
        with psycopg.connect(args.pg, autocommit=True) as con:
            have = con.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                               (schema,)).fetchone()
            if not (have and (tmp / backend / "vault").exists()):
                con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())
                con.execute(f"CREATE SCHEMA {schema}".encode())
                shutil.rmtree(tmp / backend / "vault", ignore_errors=True)
        vault, paths = _vault(tmp, backend, args)
        sep = "&" if "?" in args.pg else "?"
        url = f"{args.pg}{sep}options={quote(f'-csearch_path={schema},public')}"
        try:
            print(json.dumps(run(backend, url, vault, paths, args)), flush=True)
        finally:
            if not kept:
                with psycopg.connect(args.pg, autocommit=True) as con:
                    con.execute(f"DROP SCHEMA {schema} CASCADE".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
