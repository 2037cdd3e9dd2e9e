"""Embedding in worker processes (``embed.pool``): the same vectors as one process makes,
on every core, only when a first index is worth it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"

# A fresh process (the pool forks only a process with no other thread), the threshold
# lowered so that the example vault's few dozen chunks are enough.
SCRIPT = """
import json, sys
import knotwork.core as core
from knotwork import Knotwork
core.EMBED_POOL_MIN = int(sys.argv[3])
with Knotwork.open(sys.argv[1], db=sys.argv[2]) as kw:
    kw.ingest(embed=False)
    print(json.dumps(kw.embed().as_dict()))
"""


def _embed(vault: Path, db: Path, *, workers: int, pool_min: int) -> dict[str, object]:
    env = {**os.environ, "KNOTWORK_EMBEDDER": "minilm-q8", "KNOTWORK_WORKERS": str(workers)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(vault), str(db), str(pool_min)],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _vectors(db: Path) -> dict[str, bytes]:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT text_hash, vector FROM embeddings").fetchall())
    finally:
        con.close()


@pytest.mark.slow
def test_workers_make_the_same_vectors_as_one_process(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    alone = _embed(vault, tmp_path / "alone.db", workers=1, pool_min=1)
    pooled = _embed(vault, tmp_path / "pooled.db", workers=2, pool_min=1)
    assert alone["workers"] == 1 and pooled["workers"] == 2
    assert pooled["embedded"] == alone["embedded"] > 20
    assert pooled["tokens"] == alone["tokens"] > 0  # counted in the workers, summed
    mine, theirs = _vectors(tmp_path / "alone.db"), _vectors(tmp_path / "pooled.db")
    assert mine.keys() == theirs.keys() and len(mine) == alone["embedded"]
    assert all(mine[h] == theirs[h] for h in mine)  # byte for byte


def test_a_few_chunks_are_embedded_in_this_process(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    few = _embed(vault, tmp_path / "few.db", workers=2, pool_min=10_000)
    assert few["workers"] == 1 and few["embedded"] > 0


def test_a_broken_pool_hands_its_work_back_to_this_process() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import numpy as np

    from knotwork.embed import open_embedder
    from knotwork.embed.pool import PooledEmbedder

    base = open_embedder("hash")
    texts = [f"note {i} about kestrels and queues" for i in range(9)]
    executor = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
    try:
        pooled = PooledEmbedder(base, "hash", executor, 2)
        assert np.array_equal(pooled.embed(texts), base.embed(texts))
        for proc in list(executor._processes.values()):  # type: ignore[attr-defined]
            proc.kill()  # a worker killed from outside (OOM killer, a user)
            proc.join()
        assert np.array_equal(pooled.embed(texts[::-1]), base.embed(texts[::-1]))
        assert np.array_equal(pooled.embed(texts), base.embed(texts))  # and it stays here
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
