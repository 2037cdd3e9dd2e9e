"""Embedding cost: wall time to a complete vector index, tokens/s, where the tokens go,
and the memory of several stores in one process. Prints JSON lines (never a test).

    python bench/embed.py --notes 1000 --workdir /tmp/kw-embed      # SciFact abstracts
    python bench/embed.py --notes 2000 --embedders minilm,minilm-q8 --rounds 2   # paired
    KNOTWORK_DATASETS=/path/to/datasets python bench/embed.py ...     # elsewhere
    python bench/embed.py --stores 3                                 # LoCoMo stores, RSS

``--notes N``: the first N SciFact passages as notes (``# title`` + abstract), ingested
without vectors, then ``kw.embed()`` timed: wall seconds, chunks and model tokens a
second, and the wall a 10,000-note vault of such notes would take (``embed_s`` scaled by
10,000 / N: embedding cost grows with the chunks, and these notes are alike). With
``--embedders a,b`` each round indexes the same notes once with each, one after the
other (paired: the shared machine's load is alike for both), ``--rounds`` times. Then
the chunks' texts are tokenised again to say where the tokens go: chunks of
headings alone, texts held by more than one chunk (embedded once already), tokens cut by
the 256 window, and the padding the batches add (``embed_pending``'s schedule: windows of
1,024 sorted by length, batches of 16).

``--stores K``: K LoCoMo conversation stores (``bench/locomo.py``'s, under ``--workdir``),
each opened and asked one hybrid question, in a child process; peak RSS with one embedder
for the process (today) and with one a store (before), side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASETS = Path(os.environ.get("KNOTWORK_DATASETS", HERE.parent.parent / "shared" / "datasets"))


def index(notes: int, workdir: Path, spec: str = "minilm") -> dict[str, object]:
    sys.path.insert(0, str(HERE))
    from beir import read_beir, write_vault
    from knotwork import Knotwork
    from knotwork.embed.minilm import MiniLMEmbedder
    from knotwork.retrieve.pipeline import says_something

    corpus, _, _ = read_beir(DATASETS / "scifact", "train")
    some = dict(list(corpus.items())[:notes])
    vault = workdir / f"vault-{notes}"
    db = workdir / f"s-{notes}.db"
    for p in (db, Path(f"{db}.vectors"), Path(f"{db}.usearch")):
        p.unlink(missing_ok=True)
    write_vault(vault, some)
    with Knotwork.open(vault, db=str(db), embedder=spec) as kw:
        t0 = time.perf_counter()
        kw.ingest(embed=False)
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        stats = kw.embed()
        embed_s = time.perf_counter() - t0
    import sqlite3

    con = sqlite3.connect(db)  # what embed_pending sends: the heading path, then the text
    rows = con.execute("SELECT context, text FROM chunks WHERE live = 1").fetchall()
    con.close()
    texts = [f"{context}\n{text}" for context, text in rows]
    bodies = [text for _, text in rows]
    tok = MiniLMEmbedder()._tokenizer()
    tok.no_truncation()
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    distinct: dict[str, int] = {}
    for text, n in zip(texts, lengths, strict=True):
        distinct.setdefault(text, n)
    empty = {f"{c}\n{t}" for c, t in rows if not says_something(t, 1)}
    heads = sum(n for t, n in distinct.items() if t in empty)
    cut = [min(n, 256) for n in distinct.values()]
    padded = 0
    ordered = sorted(distinct, key=len)
    for w in range(0, len(ordered), 1024):
        window = sorted(min(distinct[t], 256) for t in ordered[w:w + 1024])
        for b in range(0, len(window), 16):
            batch = window[b:b + 16]
            padded += max(batch) * len(batch)
    del bodies
    if spec != "minilm":  # where the tokens go: told of the bundled model only
        return {"embedder": spec, "notes": notes, "chunks": len(texts),
                "embed_s": round(embed_s, 2), "tokens_embedded": stats.tokens,
                "tokens_per_s": round(stats.tokens / embed_s, 1) if embed_s else None,
                "chunks_per_s": round(stats.embedded / embed_s, 1) if embed_s else None,
                "wall_10k_notes_s": round(embed_s * 10_000 / notes)}
    return {"embedder": spec, "notes": notes, "chunks": len(texts),
            "wall_10k_notes_s": round(embed_s * 10_000 / notes), "distinct_texts": len(distinct),
            "ingest_s": round(ingest_s, 2), "embed_s": round(embed_s, 2),
            "chunks_per_s": round(stats.embedded / embed_s, 1) if embed_s else None,
            "tokens_per_s": round(stats.tokens / embed_s, 1) if embed_s else None,
            "tokens_embedded": stats.tokens,
            "heading_only_tokens": heads, "heading_only_chunks":
                sum(t in empty for t in distinct), "all_tokens": sum(distinct.values()),
            "duplicate_chunks": len(texts) - len(distinct),
            "tokens_cut_by_window": sum(distinct.values()) - sum(cut),
            "padding_share": round(1 - sum(cut) / padded, 4) if padded else 0.0}


CHILD = """
import resource, sys
from pathlib import Path
import knotwork.core
from knotwork import Knotwork
from knotwork.embed import open_embedder
if sys.argv[1] == "per-store":
    knotwork.core.shared_embedder = open_embedder
work, data, k = Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
open_ = []
for c in range(k):
    kw = Knotwork.open(data / "vault" / f"conv-{c:02d}", db=str(work / f"conv-{c:02d}" / "s.db"))
    kw.search("when did they go to the support group", k=10, mode="hybrid")
    open_.append(kw)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
for kw in open_:
    kw.close()
"""


def stores(k: int, workdir: Path) -> dict[str, object]:
    data = DATASETS / "locomo_dev"
    out: dict[str, object] = {"stores": k}
    for how in ("shared", "per-store"):
        t0 = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", CHILD, how, str(workdir), str(data), str(k)],
                             capture_output=True, text=True, check=True)
        out[f"{how}_peak_rss_mb"] = int(run.stdout.split()[-1])
        out[f"{how}_s"] = round(time.perf_counter() - t0, 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=0)
    ap.add_argument("--stores", type=int, default=0)
    ap.add_argument("--embedders", default="minilm",
                    help="comma-separated specs indexed in turn (paired), e.g. minilm,minilm-q8")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kw-embed")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    for r in range(args.rounds if args.notes else 0):
        for spec in [s.strip() for s in args.embedders.split(",") if s.strip()]:
            out = index(args.notes, args.workdir, spec)
            print(json.dumps({"round": r + 1, **out, "load": round(os.getloadavg()[0], 1)}),
                  flush=True)
    if args.stores:
        print(json.dumps(stores(args.stores, args.workdir)), flush=True)
    if not (args.notes or args.stores):
        raise SystemExit("give --notes N and/or --stores K")
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
