"""Ingest and query benchmark: prints one JSON line of numbers (never run as a test).

    python bench/ingest.py                       # synthetic vault of 10,000 notes
    python bench/ingest.py --notes 1000
    python bench/ingest.py --vault ../shared/datasets/rust_rfcs/text

Measures cold structural ingest (seconds, notes/s, and the CPU milliseconds it spent a
note across all its processes: steadier than wall time on a shared VM, and what the two
cores bound: 1,000 notes/s on two cores leaves 2 ms a note), peak RSS (this process plus its
parser workers), store size, single-note edit and delete latency through the watcher's
path (median of 20, each one a durable commit), a full sync again with nothing changed
(``resync_s``: the catch-up a watcher or server runs at start), and ``context`` latency
p50/p95 over 200 queries: half two domain words, half a note's title, also reported apart
(run it at ``--notes 3000`` and ``--notes 30000`` to see which kind grows with the vault).
``mention_pass_s`` is the part of the cold ingest spent finding plain-text mentions of
notes' names (``sync.refresh_mentions``, timed here by wrapping it), after the files' own
structure is written; ``structure_notes_per_s`` is the rate of the rest.

``--vectors`` also gives every chunk a 384-dimensional vector before the queries, so
``context`` runs hybrid (full text + vectors + links) at full scale
(``--notes 11000`` is about 100,000 chunks). The vectors come from the hashing test
embedder at MiniLM's dimension, because embedding 100k chunks with the real model takes
hours here; the search cost does not depend on what the vectors mean. So that each
``context`` still pays what the real model costs per query, every query is also encoded
by MiniLM (its vector unused); that cost alone is reported as ``minilm_query_ms_p50``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from knotwork import Knotwork
from knotwork.embed import MiniLMEmbedder
from knotwork.embed.hashing import HashEmbedder
from knotwork.sync import files as sync

WORDS = ("queue proxy cluster deploy metrics alert latency storage backup replica schema "
         "index cache token budget router gateway service host network volume snapshot "
         "release rollout canary feature flag incident review decision context graph entity "
         "fact chunk vector search ranking budget agent prompt pipeline worker scheduler "
         "kernel memory disk thread process socket tls certificate dns zone record policy "
         "role team owner status priority milestone sprint roadmap customer contract invoice "
         "ledger audit compliance privacy retention encryption key rotation secret vault").split()
TYPES = ("service", "host", "person", "project", "decision", "meeting", "team")
RELS = ("depends_on", "runs_on", "uses", "part_of", "owns")


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    syll = ["ka", "lo", "mi", "ren", "ta", "vo", "sel", "dor", "pra", "qu", "ist", "en", "ar",
            "tel", "gon", "ux", "be", "ra", "mon", "fi"]
    words = {"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


_VOCAB: list[str] = []


def _words(rng: random.Random, n: int) -> str:
    """Prose with a Zipfian vocabulary of a few thousand words, domain terms sprinkled in."""
    if not _VOCAB:
        _VOCAB.extend(_vocabulary(random.Random(3)))
    out = []
    for _ in range(n):
        if rng.random() < 0.08:
            out.append(rng.choice(WORDS))
        else:
            out.append(_VOCAB[min(int(rng.paretovariate(1.1)) - 1, len(_VOCAB) - 1)])
    return " ".join(out)


def make_vault(root: Path, n: int, seed: int = 7) -> list[str]:
    """Write ``n`` notes of ~2–4 KB with frontmatter, headings, links (hubs included)."""
    rng = random.Random(seed)
    names = [f"Note {i:05d} {rng.choice(WORDS).title()}" for i in range(n)]
    folders = ["services", "hosts", "people", "projects", "decisions", "meetings", "teams"]
    paths = []
    for i, name in enumerate(names):
        folder = folders[i % len(folders)]
        rel = f"{folder}/{i // 1000:02d}/{name}.md"
        paths.append(rel)

        def target() -> str:
            # preferential attachment: a few notes are linked from everywhere
            return names[min(int(rng.paretovariate(0.8)) - 1, n - 1)] if rng.random() < 0.3 \
                else names[rng.randrange(n)]

        lines = ["---", f"title: {name}", f"type: {TYPES[i % len(TYPES)]}",
                 f"tags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]",
                 f'{rng.choice(RELS)}: "[[{target()}]]"', f"priority: {rng.randint(1, 5)}",
                 "---", "", f"# {name}", "", _words(rng, 60) + f" See [[{target()}]].", ""]
        for s in range(rng.randint(3, 5)):
            lines += [f"## {_words(rng, 3).title()} {s}", "",
                      _words(rng, 50) + f" It depends on [[{target()}]] and uses [[{target()}]].",
                      "", f"- {rng.choice(RELS)} [[{target()}]]",
                      f"- [{rng.choice(WORDS)}] {_words(rng, 8)} #{rng.choice(WORDS)}",
                      f"owner:: [[{target()}]]", "", _words(rng, 70), ""]
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("\n".join(lines), encoding="utf-8")
    return paths


class _HashWithModelCost:
    """Hashing vectors at MiniLM's dimension; a lone text (a query) also runs through MiniLM,
    so a query pays the real model's encoding time while the stored vectors stay cheap."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(dim=384)
        self.model = MiniLMEmbedder()
        self.name, self.version = self.inner.name, self.inner.version
        self.dim, self.normalized = self.inner.dim, self.inner.normalized

    def embed(self, texts: list[str]) -> object:
        if len(texts) == 1:
            self.model.embed(texts)
        return self.inner.embed(texts)


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and of its finished children (the
    ingest's worker processes, once their pool is shut down)."""
    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def _timed(module: object, name: str) -> Iterator[list[float]]:
    """Sum the seconds spent in ``module.name`` while the block runs (in this process)."""
    real = getattr(module, name)
    spent = [0.0]

    def timed(*args: object, **kwargs: object) -> object:
        t = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t

    setattr(module, name, timed)
    try:
        yield spent
    finally:
        setattr(module, name, real)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--vault", help="benchmark a real folder instead (copied, never modified)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--vectors", action="store_true",
                    help="embed every chunk (hashing, 384 dims) so context runs hybrid")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="kw-bench-"))
    vault = tmp / "vault"
    if args.vault:
        shutil.copytree(args.vault, vault)
        paths = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    else:
        vault.mkdir()
        paths = make_vault(vault, args.notes)
    db = tmp / "store.db"
    # structural ingest: embedding is measured by bench/beir.py
    kw = Knotwork.open(vault, db=str(db), workers=args.workers, embedder="none")
    try:
        cpu0 = _cpu_s()
        t0 = time.perf_counter()
        with _timed(sync, "refresh_mentions") as mentions:
            report = kw.ingest()
        cold = time.perf_counter() - t0
        cold_cpu = _cpu_s() - cpu0
        rng = random.Random(11)

        edit_ms = []
        for rel in rng.sample(paths, min(args.edits, len(paths))):
            f = vault / rel
            f.write_text(f.read_text(encoding="utf-8") + f"\nEdited: uses [[{Path(rel).stem}]] "
                         f"{rng.random()}\n", encoding="utf-8")
            t = time.perf_counter()
            r = kw.ingest(only=[rel])
            edit_ms.append((time.perf_counter() - t) * 1000)
            assert r.updated == 1, r
        delete_ms = []
        for rel in rng.sample(paths, min(args.edits, len(paths))):
            (vault / rel).unlink()
            t = time.perf_counter()
            r = kw.ingest(only=[rel])
            delete_ms.append((time.perf_counter() - t) * 1000)
            assert r.deleted == 1, r

        time.sleep(3.1)  # past the 3 s a file needs before its size and time may be trusted
        t = time.perf_counter()
        again = kw.ingest()
        resync = time.perf_counter() - t
        assert (again.added, again.updated, again.deleted) == (0, 0, 0), again
        queries, kinds = [], []
        for _ in range(args.queries):
            words = rng.random() < 0.5
            queries.append(" ".join(rng.sample(WORDS, 2)) if words
                           else Path(rng.choice(paths)).stem)
            kinds.append("words" if words else "title")
        extra: dict[str, object] = {}
        if args.vectors:
            kw.settings = replace(kw.settings, embedder="hash")
            kw._embedder = _HashWithModelCost()  # see the module docstring
            t = time.perf_counter()
            done = kw.embed()
            extra["vectors"] = done.embedded
            extra["embed_s"] = round(time.perf_counter() - t, 1)
            minilm = MiniLMEmbedder()
            minilm.embed(queries[:1])  # load the model once
            enc_ms = []
            for q in queries:
                t = time.perf_counter()
                minilm.embed([q])
                enc_ms.append((time.perf_counter() - t) * 1000)
            extra["minilm_query_ms_p50"] = _pct(enc_ms, 0.5)
        kw.context(queries[0])  # load the token tables (and the vector index) once
        ctx_ms = []
        for q in queries:
            t = time.perf_counter()
            kw.context(q)
            ctx_ms.append((time.perf_counter() - t) * 1000)
        size = sum(p.stat().st_size for p in tmp.glob("store.db*"))
        print(json.dumps({
            "notes": len(paths), "cold_ingest_s": round(cold, 2),
            "notes_per_s": round(len(paths) / cold, 1),
            "mention_pass_s": round(mentions[0], 2),
            "structure_notes_per_s": round(len(paths) / max(1e-9, cold - mentions[0]), 1),
            "cpu_ms_per_note": round(cold_cpu * 1000 / max(1, len(paths)), 2),
            "errors": len(report.errors),
            "facts": kw.stats().facts, "peak_rss_mb": _peak_rss_mb(),
            "store_mb": round(size / 1e6, 1),
            "edit_ms_median": round(statistics.median(edit_ms), 2),
            "delete_ms_median": round(statistics.median(delete_ms), 2),
            "resync_s": round(resync, 3),
            "context_ms_p50": _pct(ctx_ms, 0.5), "context_ms_p95": _pct(ctx_ms, 0.95),
            **{f"context_{kind}_ms_p{q}": _pct([ms for ms, k in zip(ctx_ms, kinds, strict=True)
                                                if k == kind], q / 100)
               for kind in ("words", "title") for q in (50, 95) if kind in kinds},
            "embedding_status": kw.embedding_status(), **extra,
        }))
    finally:
        kw.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
