"""Retrieval quality of other embedders on the stores of ``bench/fusion.py``, without
building a store for each: vector and hybrid (``adaptive``) side by side. Prints JSON.

    python bench/embed_quality.py --workdir /tmp/emb-stores --sets scifact,locomo,k8s_keps \\
        --embedders store,minilm-q8 --docs 2000

For each store of a set it reads the live chunks (the text ``embed_pending`` sends: the
heading path, then the text), embeds them with each embedder of ``--embedders`` (each
distinct text once; cached as ``.npy`` under ``WORKDIR/_vectors``) and asks every
question as ``bench/fusion.py`` does: BM25's top 100 from the store, the vectors' top 100
from an exact search of the new matrix with the corpus moments, fused by
``adaptive_sum`` as ``search`` fuses, headings-only chunks listed after the rest.

An embedder is a spec with an optional window: ``minilm`` (the bundled model, 256),
``minilm@128``, ``minilm-q8`` (128), ``minilm-q8@256``; ``store`` takes the vectors the
store holds (its manifest says which model). ``+next`` after one (``store+next``) gives
every headings-only chunk its note's next chunk's vector instead of its own (what not
embedding them alone would do), and reports the tokens that saves.

``--docs N`` keeps the first N documents of a BEIR set (SciFact, HotpotQA) and the
questions whose gold documents are among them: BM25 still scores over the whole store,
its hits outside the subset dropped. Each embedder after the first is also compared with
the first question by question: the mean difference and its 95% bootstrap interval.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fusion  # noqa: E402
from fusion import DEPTH, METRICS, _ordered, _queries, _score  # noqa: E402


def _open(spec: str) -> Any:
    from knotwork.embed import open_embedder

    name, _, window = spec.partition("@")
    return open_embedder(name, **({"max_length": int(window)} if window else {}))


def _chunks(db: Path) -> list[tuple[int, int, int, str, str, str]]:
    """(id, document, ord, text_hash, embedded text, body) of every live chunk, by id."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT id, document_id, ord, text_hash, context, text FROM chunks"
                       " WHERE live = 1 ORDER BY id").fetchall()
    con.close()
    return [(r[0], r[1], r[2], r[3], f"{r[4]}\n{r[5]}", r[5]) for r in rows]


def _matrix(spec: str, db: Path, chunks: list[Any], cache: Path) -> tuple[np.ndarray, float,
                                                                          int]:
    """(one row a chunk, seconds spent embedding, tokens embedded) for ``spec``."""
    if spec == "store":
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        have = dict(con.execute("SELECT text_hash, vector FROM embeddings").fetchall())
        con.close()
        return np.stack([np.frombuffer(have[c[3]], dtype=np.float32) for c in chunks]), 0.0, 0
    key = hashlib.sha1(f"{db.resolve()}|{spec}|{len(chunks)}".encode()).hexdigest()[:12]
    path = cache / f"{spec.replace('@', '_')}-{key}.npy"
    meta = path.with_suffix(".json")
    texts = list(dict.fromkeys(c[4] for c in chunks))
    if path.is_file() and meta.is_file():
        vecs = np.load(path)
        seconds, tokens = json.loads(meta.read_text())
    else:
        emb = _open(spec)
        emb.embed(texts[:4])
        emb.tokens_embedded = 0
        vecs = np.zeros((len(texts), emb.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # as embed_pending
        t0 = time.perf_counter()
        for i in range(0, len(order), 64):
            rows = order[i:i + 64]
            vecs[rows] = emb.embed([texts[j] for j in rows])
        seconds, tokens = time.perf_counter() - t0, emb.tokens_embedded
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
        meta.write_text(json.dumps([seconds, tokens]))
    at = {t: i for i, t in enumerate(texts)}
    return vecs[[at[c[4]] for c in chunks]], float(seconds), int(tokens)


def _next_for_headings(chunks: list[Any], m: np.ndarray) -> tuple[np.ndarray, int]:
    """Each headings-only chunk takes its note's next chunk's row: (matrix, chunks moved)."""
    from knotwork.retrieve.pipeline import says_something

    pos = {(c[1], c[2]): i for i, c in enumerate(chunks)}
    out, moved = m.copy(), 0
    for i, c in enumerate(chunks):
        if says_something(c[5], 1):
            continue
        later = [pos[(c[1], o)] for o in range(c[2] + 1, c[2] + 50) if (c[1], o) in pos]
        if later:
            out[i] = m[later[0]]
            moved += 1
    return out, moved


def evaluate(name: str, workdir: Path, specs: list[str], docs: int) -> None:
    from knotwork import Knotwork
    from knotwork.retrieve import fulltext
    from knotwork.retrieve.adaptive import adaptive_sum
    from knotwork.retrieve.pipeline import says_something
    from knotwork.retrieve.rank import bm25_moments

    k = 100 if name in ("scifact", "hotpotqa_dev50") else 10
    scores: dict[str, dict[str, list[tuple[float, float]]]] = {
        s: {"vector": [], "hybrid": []} for s in specs}
    cost: dict[str, list[float]] = {s: [0.0, 0.0] for s in specs}
    bm25: list[tuple[float, float]] = []
    for vault, db, questions in _queries(name, workdir):
        if not db.exists():
            print(f"{name}: no store at {db}: skipped", file=sys.stderr)
            return
        chunks = _chunks(db)
        with Knotwork.open(vault, db=str(db), embedder="none") as kw:
            reader = kw._reader()
            paths = reader.chunks([c[0] for c in chunks])
            if docs and name in ("scifact", "hotpotqa_dev50"):
                order = list(dict.fromkeys(paths[c[0]].path for c in chunks))
                keep = set(order[:docs])
                chunks = [c for c in chunks if paths[c[0]].path in keep]
                stems = {Path(p).stem for p in keep}
                questions = [(q, {d: r for d, r in g.items() if d in stems})
                             for q, g in questions if set(g) & stems]
            ids = np.array([c[0] for c in chunks])
            allowed = set(ids.tolist())
            n = len(chunks)
            mats: dict[str, tuple[np.ndarray, Any]] = {}
            for spec in specs:
                base, _, rule = spec.partition("+")
                m, secs, toks = _matrix(base, db, chunks, workdir / "_vectors")
                if rule == "next":
                    m, moved = _next_for_headings(chunks, m)
                    heads = {c[4] for c in chunks if not says_something(c[5], 1)}
                    print(json.dumps({"set": name, "db": str(db), "embedder": spec,
                                      "headings_given_next": moved,
                                      "distinct_heading_texts": len(heads)}), file=sys.stderr)
                cost[spec][0] += secs
                cost[spec][1] += toks
                mats[spec] = (m, None if base == "store" else base)
            queryers = {s: _open(e) for s, (_, e) in mats.items() if e}
            store_emb = None
            for question, gold in questions:
                text = [(h.id, h.score) for h in
                        fulltext.search_chunks(reader, question, limit=3 * DEPTH)
                        if h.id in allowed][:DEPTH]
                bm_stats = bm25_moments([s for _, s in text], n)
                for spec, (m, e) in mats.items():
                    if e is None:
                        if store_emb is None:
                            store_emb = kw_embedder(db)
                        q = store_emb.embed([question])[0]
                    else:
                        q = queryers[spec].embed([question])[0]
                    sims = m @ q
                    top = np.argsort(-sims)[:DEPTH]
                    vec = [(int(ids[i]), float(sims[i])) for i in top]
                    moments = (float(sims.mean()), float(sims.std()))
                    for mode, ranked in (("vector", vec), ("hybrid", _ordered(adaptive_sum(
                            [text, vec], stats=[bm_stats, moments], n=n)))):
                        scores[spec][mode].append(_rank(reader, ranked, k, name, gold))
                bm25.append(_rank(reader, text, k, name, gold))
    first, second = METRICS.get(name, ("mrr", "hit@1"))

    def line(label: str, vals: list[tuple[float, float]], **extra: Any) -> None:
        print(json.dumps({"set": name, "run": label, "queries": len(vals),
                          first: round(statistics.mean(v[0] for v in vals), 4),
                          second: round(statistics.mean(v[1] for v in vals), 4), **extra}),
              flush=True)

    line("bm25", bm25)
    for spec in specs:
        secs, toks = cost[spec]
        extra = {"embed_s": round(secs, 1), "tokens": int(toks),
                 "tokens_per_s": round(toks / secs) if secs else None}
        for mode, vals in scores[spec].items():
            line(f"{spec} {mode}", vals, **(extra if mode == "vector" else {}))
    for spec in specs[1:]:  # paired against the first, question by question
        for mode in ("vector", "hybrid"):
            a = np.array(scores[spec][mode]) - np.array(scores[specs[0]][mode])
            rng = np.random.default_rng(0)
            boot = a[rng.integers(0, len(a), (2000, len(a)))].mean(axis=1)
            lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
            print(json.dumps({"set": name, "paired": f"{spec} - {specs[0]}", "mode": mode,
                              **{f"{m} diff": [round(float(a[:, j].mean()), 4),
                                               round(float(lo[j]), 4), round(float(hi[j]), 4)]
                                 for j, m in enumerate((first, second))}}), flush=True)


def kw_embedder(db: Path) -> Any:
    """The embedder the store's manifest names, for ``store`` runs' questions."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    have = json.loads(con.execute("SELECT value FROM meta WHERE key = 'embedder'")
                      .fetchone()[0])
    con.close()
    window = have["version"].rpartition("max_length=")[2]
    return _open(f"{have['name']}@{window}" if window.isdigit() else have["name"])


def _rank(reader: Any, ranked: list[tuple[int, float]], k: int, name: str,
          gold: Any) -> tuple[float, float]:
    from knotwork.retrieve.pipeline import says_something

    ranked = ranked[:3 * k]
    rows = reader.chunks([c for c, _ in ranked])
    found = [c for c, _ in ranked if c in rows]
    full = [c for c in found if says_something(rows[c].text, 1)]
    top = (full + [c for c in found if c not in set(full)])[:k]
    return _score(name, list(dict.fromkeys(rows[c].path for c in top)), gold)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sets", default="scifact,locomo,k8s_keps")
    ap.add_argument("--embedders", default="store,minilm-q8")
    ap.add_argument("--docs", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=fusion.DATASETS,
                    help="the shared datasets folder (default: beside the checkout)")
    args = ap.parse_args()
    fusion.DATASETS = args.datasets
    specs = [s.strip() for s in args.embedders.split(",") if s.strip()]
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        evaluate(name, args.workdir, specs, args.docs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
