"""Context assembly over three real tiers: latency p50/p95 and how full the budget is.

    python bench/assemble.py                         # hash vectors in Qdrant (quick)
    python bench/assemble.py --embedder minilm --passages 1000   # the bundled model
    python bench/assemble.py --rounds 3 --max-tokens 4000

The tiers are the issue's: ``ground_truth`` (this store, the ADRs of
``../shared/datasets/adrs`` in scope ``decisions``, pinned, top 8), ``notes`` (this store
again and a second knotwork — the Rust RFCs — served by ``knotwork serve`` in its own
process, over HTTP; top 8) and ``archive`` (SciFact abstracts in an embedded Qdrant folder,
top 5, min_score 0.3). Questions: ``bench/questions/adrs.tsv`` and ``rust_rfcs.tsv``.
Each call is ``Knotwork.assemble(question, config=FILE)`` as a program makes it (the
config is read each time). Prints one JSON object: latency p50/p95/mean (ms), the fill
ratio (total_tokens / max_tokens) p50 and mean, how often the answer was cut, items per
tier, and any source errors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from knotwork import Knotwork
from knotwork.embed import open_embedder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
if not DATA.is_dir():
    DATA = Path("/work/shared/datasets")


def _questions() -> list[str]:
    out = []
    for name in ("adrs.tsv", "rust_rfcs.tsv"):
        for line in (ROOT / "bench" / "questions" / name).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                out.append(line.split("\t")[0])
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _qdrant(folder: Path, embedder: str, passages: int) -> float:
    from qdrant_client import QdrantClient, models

    emb = open_embedder(embedder)
    rows = [json.loads(line) for line in
            (DATA / "scifact" / "corpus.jsonl").read_text().splitlines()[:passages]]
    texts = [f"{r['title']}. {r['text']}" for r in rows]
    start = time.perf_counter()
    vectors = emb.embed(texts)
    took = time.perf_counter() - start
    client = QdrantClient(path=str(folder))
    client.create_collection("archive", vectors_config=models.VectorParams(
        size=emb.dim, distance=models.Distance.COSINE))
    client.upsert("archive", points=[
        models.PointStruct(id=i, vector=[float(x) for x in vectors[i]],
                           payload={"content": t, "source": f"scifact:{rows[i]['_id']}"})
        for i, t in enumerate(texts)])
    client.close()
    return took


def _serve(db: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    env["KNOTWORK_EMBEDDER"] = "none"
    proc = subprocess.Popen([sys.executable, "-m", "knotwork.cli.main", "--db", db, "serve",
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"), env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"knotwork serve did not start: {log.read_text()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2, help="times each question is asked")
    ap.add_argument("--max-tokens", type=int, default=6000)
    ap.add_argument("--embedder", default="hash", help="the Qdrant tier's (hash or minilm)")
    ap.add_argument("--passages", type=int, default=2000, help="SciFact abstracts in Qdrant")
    ap.add_argument("--allow-partial", action="store_true", help="cut items at sentences")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kw-assemble-"))
    try:
        run(tmp, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path, args: argparse.Namespace) -> None:
    local, remote = str(tmp / "local.db"), str(tmp / "remote.db")
    start = time.perf_counter()
    with Knotwork.open(DATA / "adrs", db=local, embedder="none", scope="decisions") as kw:
        kw.ingest()
    with Knotwork.open(DATA / "rust_rfcs" / "text", db=remote, embedder="none") as kw:
        kw.ingest()
    ingest_s = time.perf_counter() - start
    embed_s = _qdrant(tmp / "qdrant-data", args.embedder, args.passages)
    port = _free_port()
    server = _serve(remote, port, tmp / "serve.log")
    cfg = tmp / "knotwork.toml"
    cfg.write_text(f"""\
[budget]
max_tokens = {args.max_tokens}
allow_partial = {str(args.allow_partial).lower()}
[[tiers]]
name = "ground_truth"
priority = 1
sources = ["local:scope=decisions"]
top_k = 8
pin = true
[[tiers]]
name = "notes"
priority = 2
sources = ["local", "http://127.0.0.1:{port}"]
top_k = 8
[[tiers]]
name = "archive"
priority = 3
sources = ["qdrant:./qdrant-data#archive?embedder={args.embedder}"]
top_k = 5
min_score = 0.3
""")
    questions = _questions()
    times: list[float] = []
    fills: list[float] = []
    cut = over = 0
    tiers: dict[str, int] = {}
    errors: dict[str, int] = {}
    try:
        with Knotwork.open(None, db=local, embedder="none") as kw:
            for q in questions[:3]:  # warm: imports, the Qdrant folder, the embedder
                kw.assemble(q, config=cfg)
            for _ in range(args.rounds):
                for q in questions:
                    t0 = time.perf_counter()
                    out = kw.assemble(q, config=cfg)
                    times.append((time.perf_counter() - t0) * 1000)
                    fills.append(out.total_tokens / args.max_tokens)
                    cut += out.truncated
                    over += out.overrun > 0
                    for name, n in out.tier_counts.items():
                        tiers[name] = tiers.get(name, 0) + n
                    for e in out.errors:
                        errors[f"{e.tier}/{e.source}: {e.reason}"] = errors.get(
                            f"{e.tier}/{e.source}: {e.reason}", 0) + 1
        alone = {}
        for spec in ("local:scope=decisions", "local", f"http://127.0.0.1:{port}",
                     f"qdrant:{tmp}/qdrant-data#archive?embedder={args.embedder}"):
            one = {"budget": {"max_tokens": 0},
                   "tiers": [{"name": "t", "sources": [spec], "top_k": 8}]}
            with Knotwork.open(None, db=local, embedder="none") as kw:
                took = []
                for q in questions:
                    t0 = time.perf_counter()
                    kw.assemble(q, config=one)
                    took.append((time.perf_counter() - t0) * 1000)
            alone[spec.split("?")[0].replace(str(tmp), "")] = round(statistics.median(took), 2)
    finally:
        server.terminate()
        server.wait(10)
    n = len(times)
    q95 = statistics.quantiles(times, n=20)[-1]
    print(json.dumps({
        "calls": n, "questions": len(questions), "max_tokens": args.max_tokens,
        "embedder": args.embedder, "passages": args.passages,
        "allow_partial": args.allow_partial,
        "p50_ms": round(statistics.median(times), 2), "p95_ms": round(q95, 2),
        "mean_ms": round(statistics.fmean(times), 2),
        "fill_p50": round(statistics.median(fills), 3),
        "fill_mean": round(statistics.fmean(fills), 3),
        "fill_min": round(min(fills), 3),
        "truncated_share": round(cut / n, 3), "pinned_overrun_share": round(over / n, 3),
        "items_per_call": {k: round(v / n, 2) for k, v in tiers.items()},
        "errors": errors, "one_source_alone_p50_ms": alone,
        "setup": {"ingest_s": round(ingest_s, 1), "embed_s": round(embed_s, 1)},
    }, indent=1))


if __name__ == "__main__":
    main()
