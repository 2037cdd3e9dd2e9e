"""Vector query latency at scale, exact and HNSW: prints one JSON line (never a test).

    python bench/vectors.py                 # 100,000 vectors of 384 dims
    python bench/vectors.py --n 20000
    python bench/vectors.py --ef 128,192,256 --connectivity 16 --expansion-add 128

The vectors go through the real store (``put_vectors`` → ``vector_log``) into the
``VectorIndex`` that ``search --mode vector`` uses; they are synthetic but shaped like text
embeddings (a 48-dim latent space projected to 384 dims, plus noise, unit length), because
uniform random vectors are a pathological case for any index. Queries are stored vectors
plus a little noise. Reports, for exact search: the initial load, top-10 p50/p95 and the
catch-up after one edit; for the HNSW graph (usearch int8, top ``2k`` re-scored exactly):
its build and sidecar save, top-10 and top-100 p50/p95 and recall against exact search per
``expansion_search``, the catch-up after one edit (graph included), and a second process's
start, caught up through the log past a second edit: its first exact search reading the
store's vectors (``store``) against mapping the mirror file (``mirror``, ``<store>.vectors``),
each measured ``--rounds`` times, alternately, medians reported; and the graph's start with
the store read (``second_process_start_s``) or the mirror file (``..._with_mirror_s``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from knotwork.retrieve.ann import AnnParams
from knotwork.retrieve.vectors import VectorIndex
from knotwork.store import Store, open_store
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


def _latency(index: VectorIndex, queries: np.ndarray, k: int, *, exact: bool
             ) -> tuple[list[float], list[list[int]]]:
    lat, found = [], []
    for q in queries:
        t = time.perf_counter()
        hits = index.search(q, k, exact=exact)
        lat.append((time.perf_counter() - t) * 1000)
        found.append([c for c, _ in hits])
    return sorted(lat), found


def _first_search(dim: int, store: Store, query: np.ndarray, *, mirror: Path | None,
                  ann: Path | None = None, params: AnnParams | None = None
                  ) -> tuple[float, VectorIndex]:
    """Seconds from a new index to its first top-10 (exact unless ``ann``)."""
    index = VectorIndex(dim, ann_threshold=1 if ann else 0, ann_path=ann, ann_params=params,
                        background=False, mirror_path=mirror)
    t = time.perf_counter()
    index.refresh(store.reader)
    index.search(query, 10)
    return time.perf_counter() - t, index


def _second_process(dim: int, store: Store, query: np.ndarray, mirror: Path, rounds: int
                    ) -> dict[str, object]:
    """A new process's first exact search, store read vs mirror file, alternately."""
    times: dict[str, list[float]] = {"store": [], "mirror": []}
    loads: list[float] = []
    for _ in range(rounds):
        for name, path in (("store", None), ("mirror", mirror)):
            took, index = _first_search(dim, store, query, mirror=path)
            times[name].append(took)
            if path is not None:
                assert index.mirror_info["state"] == "loaded", index.mirror_info
                loads.append(float(index.mirror_info["load_s"]))  # type: ignore[arg-type]
    return {"second_first_search_store_s": _runs(times["store"]),
            "second_first_search_mirror_s": _runs(times["mirror"]),
            "mirror_load_and_checks_s": round(statistics.median(loads), 3)}


def _runs(values: list[float]) -> dict[str, object]:
    return {"median": round(statistics.median(values), 3),
            "runs": [round(v, 3) for v in values]}


def _p(lat: list[float], share: float) -> float:
    return round(lat[min(len(lat) - 1, int(share * len(lat)))], 2)


def _recall(got: list[list[int]], want: list[list[int]]) -> float:
    pairs = zip(got, want, strict=True)
    return round(float(np.mean([len(set(g) & set(w)) / len(w) for g, w in pairs])), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    shipped = AnnParams()
    ap.add_argument("--connectivity", type=int, default=shipped.connectivity)
    ap.add_argument("--expansion-add", type=int, default=shipped.expansion_add)
    ap.add_argument("--ef", default=str(shipped.expansion_search),
                    help="expansion_search values to measure, comma-separated")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating rounds of each second-process start")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kw-vectors-"))
    try:
        _run(args, folder)
    finally:  # the store and its two sidecar files: hundreds of MB at 100k
        shutil.rmtree(folder, ignore_errors=True)


def _run(args: argparse.Namespace, folder: Path) -> None:
    per_doc = 10
    vecs = _vectors(args.n, args.dim)
    store = open_store(str(folder / "v.db"), synchronous="NORMAL")
    with store.write(actor="bench") as w:
        for i in range(args.n // per_doc):
            w.apply("default", _doc(i, per_doc))
    con = store._con()  # type: ignore[attr-defined]  # the bench reads hashes directly
    hashes = [r[0] for r in con.execute("SELECT text_hash FROM chunks ORDER BY id")]
    with store.write(actor="bench") as w:
        w.put_vectors([(h, vecs[i].tobytes()) for i, h in enumerate(hashes)])
    efs = [int(e) for e in args.ef.split(",")]
    params = AnnParams(args.connectivity, args.expansion_add, efs[0])
    sidecar = folder / "v.db.usearch"
    index = VectorIndex(args.dim, ann_path=sidecar, ann_params=params, background=False)
    t = time.perf_counter()
    index.refresh(store.reader)
    load_s = time.perf_counter() - t
    rng = np.random.default_rng(9)
    queries = []
    for q in rng.integers(0, len(hashes), args.queries):
        query = vecs[q] + 0.05 * rng.normal(size=args.dim).astype(np.float32)
        queries.append(query / np.linalg.norm(query))
    qs = np.asarray(queries, dtype=np.float32)
    exact10, want10 = _latency(index, qs, 10, exact=True)
    _, want100 = _latency(index, qs, 100, exact=True)
    out: dict[str, object] = {
        "vectors": len(index), "dim": args.dim, "load_s": round(load_s, 2),
        "exact_top10_ms_p50": _p(exact10, 0.5), "exact_top10_ms_p95": _p(exact10, 0.95)}

    index.ann_threshold = 1  # the graph from here on: built now, in this thread, and saved
    index.refresh(store.reader)
    assert index.uses_ann, index.ann_info
    info = index.ann_info
    out.update({"ann": f"usearch i8 M={args.connectivity} efC={args.expansion_add}"
                       f" ef={efs[0]}",
                "ann_build_s": info["build_s"], "ann_save_s": info.get("saved_s"),
                "sidecar_mb": round(sidecar.stat().st_size / 1e6, 1)})
    for ef in efs:
        index._ann.index.expansion_search = ef  # type: ignore[union-attr]  # sweep in place
        lat10, got10 = _latency(index, qs, 10, exact=False)
        lat100, got100 = _latency(index, qs, 100, exact=False)
        tag = "" if ef == efs[0] else f"_ef{ef}"
        out.update({f"ann_top10_ms_p50{tag}": _p(lat10, 0.5),
                    f"ann_top10_ms_p95{tag}": _p(lat10, 0.95),
                    f"ann_recall@10{tag}": _recall(got10, want10),
                    f"ann_top100_ms_p50{tag}": _p(lat100, 0.5),
                    f"ann_recall@100{tag}": _recall(got100, want100)})
    index._ann.index.expansion_search = efs[0]  # type: ignore[union-attr]
    t = time.perf_counter()
    index.search_with_stats(qs[0], 10)
    out["ann_first_stats_ms"] = round((time.perf_counter() - t) * 1000, 1)

    with store.write(actor="bench") as w:  # one edit: a document's chunks change
        w.apply("default", _doc(0, per_doc + 1), force=True)
    t = time.perf_counter()
    index.refresh(store.reader)
    out["refresh_after_edit_ms"] = round((time.perf_counter() - t) * 1000, 2)
    assert index.uses_ann and index.ann_info["source"] == "built"

    mirror = folder / "v.db.vectors"
    index.mirror_path = mirror
    assert index.save_mirror(), index.mirror_info
    out.update({"mirror_save_s": index.mirror_info["saved_s"],
                "mirror_mb": round(mirror.stat().st_size / 1e6, 1)})
    with store.write(actor="bench") as w:  # a second edit, which the files do not hold
        w.apply("default", _doc(1, per_doc + 1), force=True)
    out.update(_second_process(args.dim, store, qs[0], mirror, args.rounds))

    starts: dict[str, list[float]] = {"store": [], "mirror": []}
    for _ in range(args.rounds):  # the graph's start, with the mirror read either way
        for name, path in (("store", None), ("mirror", mirror)):
            took, second = _first_search(args.dim, store, qs[0], mirror=path, ann=sidecar,
                                         params=params)
            assert second.ann_info["source"] == "sidecar", second.ann_info
            starts[name].append(took)
    out["second_process_start_s"] = _runs(starts["store"])
    out["second_process_start_with_mirror_s"] = _runs(starts["mirror"])
    out["sidecar_load_and_catch_up_s"] = second.ann_info["load_s"]
    print(json.dumps(out))
    store.close()


if __name__ == "__main__":
    main()
