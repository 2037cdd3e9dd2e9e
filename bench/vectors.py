"""Vector query latency at scale: prints one JSON line (never run as a test).

    python bench/vectors.py                 # 100,000 vectors of 384 dims
    python bench/vectors.py --n 20000

The vectors go through the real store (``put_vectors`` → ``vector_log``) into the
in-memory exact index that ``search --mode vector`` uses; they are synthetic but shaped
like text embeddings (a 48-dim latent space projected to 384 dims, plus noise, unit
length), because uniform random vectors are a pathological case for any index. Reports the
initial load time, exact top-10 latency p50/p95, and the cost of catching up after one
edit (the incremental refresh).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from knotwork.retrieve.vectors import VectorIndex
from knotwork.store import open_store
from knotwork.types import ChunkDraft, ParsedDocument, Span


def _vectors(n: int, dim: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 48)).astype(np.float32)
    proj = rng.normal(size=(48, dim)).astype(np.float32)
    x = latent @ proj + 0.3 * rng.normal(size=(n, dim)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _doc(i: int, chunks: int) -> ParsedDocument:
    drafts = tuple(ChunkDraft(j, (), f"chunk {i}-{j}", Span(j + 1, j + 1)) for j in range(chunks))
    return ParsedDocument(path=f"d{i}.md", text="\n".join(c.text for c in drafts),
                          content_hash=hashlib.sha256(str(i).encode()).hexdigest(),
                          title=f"d{i}", doc_type="note", names=(), chunks=drafts, facts=())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    per_doc = 10
    vecs = _vectors(args.n, args.dim)
    store = open_store(str(Path(tempfile.mkdtemp()) / "v.db"), synchronous="NORMAL")
    with store.write(actor="bench") as w:
        for i in range(args.n // per_doc):
            w.apply("default", _doc(i, per_doc))
    con = store._con()  # type: ignore[attr-defined]  # the bench reads hashes directly
    hashes = [r[0] for r in con.execute("SELECT text_hash FROM chunks ORDER BY id")]
    with store.write(actor="bench") as w:
        w.put_vectors([(h, vecs[i].tobytes()) for i, h in enumerate(hashes)])
    index = VectorIndex(args.dim)
    t = time.perf_counter()
    index.refresh(store.reader)
    load_s = time.perf_counter() - t
    rng = np.random.default_rng(9)
    lat = []
    for q in rng.integers(0, len(hashes), args.queries):
        query = vecs[q] + 0.05 * rng.normal(size=args.dim).astype(np.float32)
        t = time.perf_counter()
        hits = index.search(query / np.linalg.norm(query), 10)
        lat.append((time.perf_counter() - t) * 1000)
        assert hits
    with store.write(actor="bench") as w:  # one edit: a document's chunks change
        w.apply("default", _doc(0, per_doc + 1), force=True)
    t = time.perf_counter()
    index.refresh(store.reader)
    refresh_ms = (time.perf_counter() - t) * 1000
    lat.sort()
    print(json.dumps({"vectors": len(index), "dim": args.dim, "load_s": round(load_s, 2),
                      "exact_top10_ms_p50": round(statistics.median(lat), 2),
                      "exact_top10_ms_p95": round(lat[int(0.95 * len(lat))], 2),
                      "refresh_after_edit_ms": round(refresh_ms, 2)}))
    store.close()


if __name__ == "__main__":
    main()
