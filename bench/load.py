"""A bounded loopback load test: concurrent clients on POST /context while a writer edits.

Builds a synthetic vault (``--notes``), ingests it, starts a real ``knotwork serve`` on
127.0.0.1 (which watches the vault), then runs ``--clients`` threads asking /context for
``--seconds`` while one writer appends to random notes every ``--edit-every`` seconds.
Prints JSON: requests, throughput, latency percentiles, errors (any non-200 or transport
error), edits made, and the server's resident memory before and after the load.

    python bench/load.py --notes 10000 --clients 8 --seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ["kota", "vega", "lima", "orion", "sirius"]


def _vault(root: Path, n: int) -> None:
    rnd = random.Random(0)
    for i in range(n):
        a, b = rnd.randrange(n), rnd.randrange(n)
        path = root / f"svc/{i // 500:03d}/Service {i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntype: service\nruns_on: \"[[{rnd.choice(HOSTS)}]]\"\n---\n"
                        f"# Service {i}\n\nService {i} depends on [[Service {a}]] and calls"
                        f" Service {b} over HTTP.\n\n## Operations\n\nOwned by team"
                        f" {i % 17}. Pages go to on-call {i % 5}.\n", encoding="utf-8")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env.update(KNOTWORK_EMBEDDER="none", KNOTWORK_DEBOUNCE_MS="200",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", ""))
    return env


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--edit-every", type=float, default=0.2)
    ap.add_argument("--max-tokens", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="knotwork-load-") as tmp:
        vault, db = Path(tmp) / "vault", Path(tmp) / "s.db"
        _vault(vault, args.notes)
        cli = [sys.executable, "-m", "knotwork", "--db", str(db)]
        t0 = time.monotonic()
        subprocess.run([*cli, "ingest", str(vault), "-q"], env=_env(), check=True)
        ingest_s = time.monotonic() - t0
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([*cli, "serve", "--vault", str(vault), "--port", str(port)],
                                  env=_env(), stdout=subprocess.DEVNULL,
                                  stderr=open(Path(tmp) / "serve.log", "w"))  # noqa: SIM115
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
            with httpx.Client(base_url=base, timeout=30) as warm:  # every code path once
                for i in range(20):
                    warm.post("/context", json={"query": f"Service {i}"})
            rss_before = _rss_kb(server.pid)
            stop = threading.Event()
            lat: list[float] = []
            errors: list[str] = []
            lock = threading.Lock()

            def client(k: int) -> None:
                rnd = random.Random(k)
                with httpx.Client(base_url=base, timeout=30) as c:
                    while not stop.is_set():
                        q = rnd.choice([f"Service {rnd.randrange(args.notes)}",
                                        f"team {rnd.randrange(17)}", rnd.choice(HOSTS),
                                        "who owns the HTTP calls"])
                        t = time.perf_counter()
                        try:
                            r = c.post("/context", json={"query": q,
                                                         "max_tokens": args.max_tokens})
                            ok = r.status_code == 200
                            why = f"{r.status_code} {r.text[:100]}"
                        except httpx.HTTPError as exc:
                            ok, why = False, repr(exc)
                        dt = time.perf_counter() - t
                        with lock:
                            lat.append(dt)
                            if not ok:
                                errors.append(why)

            edits = [0]

            def writer() -> None:
                rnd = random.Random(99)
                while not stop.is_set():
                    i = rnd.randrange(args.notes)
                    f = vault / f"svc/{i // 500:03d}/Service {i}.md"
                    with open(f, "a", encoding="utf-8") as fh:
                        fh.write(f"\nEdited at {time.time()}; see"
                                 f" [[Service {rnd.randrange(args.notes)}]].\n")
                    edits[0] += 1
                    time.sleep(args.edit_every)

            threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
            threads.append(threading.Thread(target=writer))
            started = time.monotonic()
            for t in threads:
                t.start()
            rss_samples = []  # every 10 s: growth, or a plateau once caches are warm
            while (left := args.seconds - (time.monotonic() - started)) > 0:
                time.sleep(min(10.0, left))
                rss_samples.append(round(_rss_kb(server.pid) / 1024, 1))
            stop.set()
            for t in threads:
                t.join()
            took = time.monotonic() - started
            time.sleep(2)  # let the watcher apply the last edits
            rss_after = _rss_kb(server.pid)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
        print(json.dumps({
            "notes": args.notes, "clients": args.clients, "seconds": round(took, 1),
            "ingest_s": round(ingest_s, 1), "requests": len(lat),
            "throughput_rps": round(len(lat) / took, 1),
            "p50_ms": round(_pct(lat, 0.50) * 1000, 1),
            "p95_ms": round(_pct(lat, 0.95) * 1000, 1),
            "p99_ms": round(_pct(lat, 0.99) * 1000, 1),
            "errors": len(errors), "first_errors": errors[:3], "edits": edits[0],
            "server_rss_mb_before": round(rss_before / 1024, 1),
            "server_rss_mb_after": round(rss_after / 1024, 1),
            "server_rss_mb_every_10s": rss_samples}, indent=2))


if __name__ == "__main__":
    main()
