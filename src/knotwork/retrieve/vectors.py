"""A vector index over the store's live chunk vectors: exact, plus HNSW past a threshold.

Vectors live in the store (one SQLite file); this index mirrors them as one float32
matrix and catches up through the store's ``vector_log`` — only the rows that changed
since the last look are read, so an edit costs O(changed chunks), and several processes
that share a store each see the others' writes. Exact search is a matrix–vector product
and an ``argpartition``: ~11–20 ms at 100k chunks of 384 dims on this class of machine.

Past ``ann_threshold`` live vectors an HNSW graph (``retrieve.ann``, usearch int8) proposes
candidates and the float32 mirror re-scores them exactly, so scores stay true cosines and a
chunk deleted from the store can never come back (only ids the mirror holds are returned).
The graph follows the same ``vector_log`` changes as the mirror (usearch adds and removes in
place). The writer builds it (``prepare``, after embedding) and saves it beside the store,
so a search process loads it and catches up through the log instead of rebuilding; a
search process that finds no usable sidecar builds one in a background thread while exact
search serves. A change too large to apply in place (a re-embedding) or too many removals
drop the graph and build a new one.

The float32 mirror itself is saved the same way (``retrieve.mirror``, ``<store>.vectors``),
because reading every vector BLOB from SQLite is what a new process's first search costs
(4–11 s at 100k): a new index maps that file, checks it against the store (log mark, the
store's vector epoch, the count of live vectors it will hold once caught up, a sample of
rows compared exactly with the store's vectors) and catches up through the log from its
mark; a file that fails any check is ignored and the store is read as before. The writer
leaves it at the end of embedding once it lags the log by more than ``FRESH_LAG`` rows; a
search process that had to read the store, or caught up that far, rewrites it on close.
"""

from __future__ import annotations

import atexit
import math
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..store import StoreReader
from .ann import (
    AnnIndex,
    AnnParams,
    LogMark,
    check_sidecar,
    read_sidecar,
    sidecar_header,
    write_sidecar,
)
from .mirror import MirrorFile, check_header, read_mirror, write_mirror

FloatMatrix = npt.NDArray[np.float32]

BUILD_BATCH = 1024  # vectors per usearch call in a build: how soon a stop request is seen
SAVE_AFTER = 256  # graph changes not yet in the sidecar that make ``close`` rewrite it
FRESH_LAG = 1_000  # log rows a sidecar may lack before ``prepare`` brings it up to date
SAMPLE = 32  # vectors compared between a loaded sidecar and the store
MIRROR_MIN = 1_000  # live vectors below which a mirror file is not worth writing (~40 ms read)
EPOCH_KEY = "vector_epoch"  # the store's random name for its vectors (set by put_vectors)


class VectorIndex:
    """Cosine search over normalised vectors, kept in step with the store.

    ``ann_threshold`` 0 keeps search exact; ``ann_path`` (optional) is the graph's sidecar
    file, ``mirror_path`` (optional) the float32 mirror's, written from ``mirror_min`` live
    vectors on; ``background`` False builds the graph in the calling thread (tests,
    benchmarks).
    """

    def __init__(self, dim: int, *, ann_threshold: int = 0, ann_path: Path | None = None,
                 ann_params: AnnParams | None = None, background: bool = True,
                 threads: int = 0, mirror_path: Path | None = None,
                 mirror_min: int = MIRROR_MIN) -> None:
        self.dim = dim
        self.ann_threshold = ann_threshold
        self.ann_path = ann_path
        self.mirror_path = mirror_path
        self.mirror_min = mirror_min
        self.ann_params = ann_params or AnnParams()
        self.background = background
        self.threads = threads
        self._lock = threading.Lock()
        self._seq = 0
        self._mark = LogMark(0, 0, 0)
        self._mat: FloatMatrix = np.zeros((0, dim), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)  # -1 marks a free row
        self._row: dict[int, int] = {}
        self._size = 0
        self._moments: tuple[np.ndarray, np.ndarray] | None = None  # Σx, Σxxᵀ (float64)
        self._ann: AnnIndex | None = None
        self._unsaved = 0  # graph changes the sidecar does not reflect
        self._journal: list[int] | None = None  # ids changed while a build runs
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()
        self._sidecar_tried = False
        self._want_moments = False
        self._mirror_tried = False
        self._mirror_seq: int | None = None  # log position of the usable mirror file, if any
        self._epoch: str | None = None  # the store's vector epoch, as last read
        self.ann_info: dict[str, object] = {"state": "off"}
        self.mirror_info: dict[str, object] = {"state": "off"}
        _OPEN.add(self)

    def __len__(self) -> int:
        return len(self._row)

    # ------------------------------------------------------------ catching up

    def refresh(self, reader: StoreReader) -> None:
        """Apply the store's vector changes since the last refresh (to both indexes)."""
        with self._lock:
            if not self._mirror_tried:
                self._open_mirror(reader)
            self._drain(reader)
            build = self._plan_ann(reader)
        if build is not None:
            if self.background:
                build.start()
            else:
                build.run()

    def _drain(self, reader: StoreReader) -> None:
        while True:
            seq, changes = reader.vector_changes(self._seq)
            if not changes:
                return
            self._seq = seq
            self._mark = LogMark(seq, *changes[-1])
            self._epoch = reader.meta(EPOCH_KEY)  # saved with the mark in the mirror file
            live: dict[int, bool] = {}
            for chunk_id, added in changes:
                live[chunk_id] = bool(added)  # the last word on each chunk wins
            # every touched id leaves, and comes back with the vector the store has now
            # (a re-embedding logs a removal and an add for the same chunk)
            touched = list(live)
            self._remove(touched)
            fresh = [c for c, on in live.items() if on]
            if fresh:
                self._add(reader.vectors(fresh))
            self._follow(touched)

    def _follow(self, touched: list[int]) -> None:
        """Carry the mirror's changes to the graph, or note them for the build running."""
        if self._journal is not None:
            self._journal.extend(touched)
        if self._ann is None:
            return
        if len(touched) > max(10_000, len(self._row) // 5) or (
                self._ann.removed > max(1_000, len(self._ann) // 4)):
            self._drop_ann("rebuild: too many changes to apply in place")
            return
        self._ann.remove(touched)
        self._ann_add([c for c in touched if c in self._row])
        self._unsaved += len(touched)

    def _ann_add(self, ids: list[int]) -> None:
        if self._ann is not None and ids:
            rows = [self._row[c] for c in ids]
            # a pool for a handful of vectors costs more than it saves
            threads = self.threads if len(ids) > 256 else 1
            self._ann.add(np.asarray(ids, dtype=np.int64), self._mat[rows], threads=threads)

    def _remove(self, chunk_ids: list[int]) -> None:
        rows = [r for r in (self._row.pop(c, None) for c in chunk_ids) if r is not None]
        if not rows:
            return
        if self._moments is not None:
            vecs = self._mat[rows].astype(np.float64)
            self._moments = (self._moments[0] - vecs.sum(0), self._moments[1] - vecs.T @ vecs)
        # the values stay: a background worker may still read this row as its snapshot
        self._ids[rows] = -1

    def _add(self, rows: list[tuple[int, bytes]]) -> None:
        rows = [(cid, blob) for cid, blob in rows if len(blob) == 4 * self.dim]
        if not rows:
            return
        if self._size + len(rows) > len(self._ids):
            self._compact_or_grow(len(rows))
        vecs = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
        vecs = vecs.reshape(len(rows), self.dim)
        start = self._size
        self._mat[start:start + len(rows)] = vecs
        for i, (cid, _) in enumerate(rows):
            self._ids[start + i] = cid
            self._row[cid] = start + i
        self._size = start + len(rows)
        if self._moments is not None:
            v64 = vecs.astype(np.float64)
            self._moments = (self._moments[0] + v64.sum(0), self._moments[1] + v64.T @ v64)

    def _compact_or_grow(self, extra: int) -> None:
        """Drop freed rows and make room for ``extra`` more (capacity doubles)."""
        keep = self._ids[: self._size] >= 0
        ids, mat = self._ids[: self._size][keep], self._mat[: self._size][keep]
        cap = max(1024, 2 * (len(ids) + extra))
        # a new array, never a resize in place: a running build still reads the old one
        self._mat = np.zeros((cap, self.dim), dtype=np.float32)
        self._ids = np.full(cap, -1, dtype=np.int64)
        self._mat[: len(ids)] = mat
        self._ids[: len(ids)] = ids
        self._size = len(ids)
        self._row = {int(c): i for i, c in enumerate(ids)}

    # ------------------------------------------------------------ search

    def search(self, query: FloatMatrix, k: int, *, exact: bool = False
               ) -> list[tuple[int, float]]:
        """The ``k`` chunks most similar to ``query`` (a unit vector): (chunk id, cosine)."""
        return self._search(query, k, stats=False, exact=exact)[0]

    def search_with_stats(self, query: FloatMatrix, k: int, *, exact: bool = False,
                          among: Sequence[int] | None = None
                          ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
        """Top ``k`` and the (mean, sd) of the cosine over every chunk (for fusion).

        ``among``: only these chunks are ranked and counted (a scoped read's, when other
        scopes hold vectors too), exactly: what another scope holds then neither takes a
        place in the top ``k`` nor moves the moments. The graph is not asked: its
        neighbours are every scope's.
        """
        if among is not None:
            with self._lock:
                return self._among(query.astype(np.float32).reshape(-1), k, among)
        return self._search(query, k, stats=True, exact=exact)

    def _among(self, q: FloatMatrix, k: int, among: Sequence[int]
               ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
        rows = np.fromiter((r for r in map(self._row.get, among) if r is not None),
                           dtype=np.int64)
        if not len(rows):
            return [], None
        scores = self._mat[rows] @ q
        k = min(k, len(rows))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return ([(int(self._ids[rows[i]]), float(scores[i])) for i in top],
                (float(scores.mean()), float(scores.std())))

    @property
    def uses_ann(self) -> bool:
        """Whether a search now goes through the graph (it is built and the index is big)."""
        return self._ann is not None and 0 < self.ann_threshold <= len(self._row)

    def _search(self, query: FloatMatrix, k: int, *, stats: bool, exact: bool
                ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
        q = query.astype(np.float32).reshape(-1)
        with self._lock:
            if not self._row:
                return [], None
            # until the background worker has the moments, fusion statistics need the
            # full product, and then the exact top k comes with it for free
            if stats and self._moments is None and self.uses_ann:
                self._want_moments = True  # the next refresh starts the worker
                return self._exact(q, k, stats)
            if exact or not self.uses_ann:
                return self._exact(q, k, stats)
            return self._approximate(q, k), (self._stats(q) if stats else None)

    def _exact(self, q: FloatMatrix, k: int, stats: bool
               ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
        scores = self._mat[: self._size] @ q
        live = self._ids[: self._size] >= 0
        moments = (float(scores[live].mean()), float(scores[live].std())) if stats else None
        scores[~live] = -np.inf
        k = min(k, len(self._row))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(self._ids[i]), float(scores[i])) for i in top], moments

    def _approximate(self, q: FloatMatrix, k: int) -> list[tuple[int, float]]:
        """The graph's top ``2k`` re-scored exactly against the float32 rows.

        Why: int8 distances misorder close neighbours (recall@10 0.91 at 100k without
        re-scoring, 0.98 with it); taking more than ``2k`` candidates gained nothing, the
        rest of the misses are the graph's (see bench/README.md).
        """
        assert self._ann is not None
        cands = self._ann.candidates(q, 2 * k)
        # only ids the mirror holds: a chunk the store deleted never comes back
        ids = [int(c) for c in cands if int(c) in self._row]
        if not ids:
            return []
        scores = self._mat[[self._row[c] for c in ids]] @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return [(ids[i], float(scores[i])) for i in order]

    def _stats(self, q: FloatMatrix) -> tuple[float, float]:
        """Mean and sd of ``q``'s cosine over every live vector, in O(dim²).

        From Σx and Σxxᵀ over the live rows (computed by the background worker, then kept
        up to date by every add and remove): mean = q·Σx / n, E[s²] = qᵀ(Σxxᵀ)q / n — the
        numbers the exact path gets from its full matrix product, without the product.
        """
        assert self._moments is not None
        n = len(self._row)
        q64 = q.astype(np.float64)
        mean = float(q64 @ self._moments[0]) / n
        second = float(q64 @ self._moments[1] @ q64) / n
        return mean, math.sqrt(max(second - mean * mean, 0.0))

    # ------------------------------------------------------------ the mirror file

    def _open_mirror(self, reader: StoreReader) -> None:
        """Before the first catch-up: start from the mirror file if it checks out."""
        self._mirror_tried = True
        if self.mirror_path is None or self._seq:
            return
        t = time.perf_counter()
        reason = self._load_mirror(reader)
        if reason is None:
            self.mirror_info = {"state": "loaded", "vectors": self._size,
                                "load_s": round(time.perf_counter() - t, 3)}
        else:
            self.mirror_info = {"state": "off", "rejected": reason}

    def _load_mirror(self, reader: StoreReader) -> str | None:
        """Adopt the mirror file's rows at its log mark (``_drain`` catches up); or say why not."""
        assert self.mirror_path is not None
        got = read_mirror(self.mirror_path, self.dim)
        if got is None:
            return "missing, damaged or of another dimension"
        epoch = reader.meta(EPOCH_KEY)
        if got.epoch != epoch or not _mark_holds(reader, got.mark):
            return "written for another store or log"
        row = dict(zip(got.ids.tolist(), range(len(got.ids)), strict=True))
        if len(row) != len(got.ids) or (len(got.ids) and int(got.ids.min()) < 0):
            return "damaged: chunk ids repeated or negative"
        last = _last_words_since(reader, got.mark.seq)
        live = len(row) - sum(c in row for c in last) + sum(last.values())
        if live != reader.live_chunk_count() - reader.vector_status()[1]:
            return "its chunks differ from the store's"  # e.g. one the store deleted
        problem = _check_rows(reader, got, row, last)
        if problem:
            return problem
        # the rows stay mapped read-only: removal marks ids (a copy), the first add grows
        # into new arrays (``_compact_or_grow``), so the file's pages are never written
        self._mat, self._ids, self._row = got.rows, got.ids.copy(), row
        self._size = len(got.ids)
        self._seq, self._mark, self._epoch = got.mark.seq, got.mark, epoch
        self._moments = got.moments
        self._mirror_seq = got.mark.seq
        return None

    def mirror_lag(self, reader: StoreReader) -> int | None:
        """Log rows the mirror file lacks (up to ``FRESH_LAG + 1``), or None if unusable.

        From the header alone (no checksum): a damaged body is found by the next reader,
        which then reads the store and rewrites the file on close.
        """
        if self.mirror_path is None:
            return None
        checked = check_header(self.mirror_path, self.dim)
        if checked is None or checked[1] != reader.meta(EPOCH_KEY):
            return None
        return _lag(reader, checked[0])

    def _mirror_stale(self) -> bool:
        """Whether this index knows more than the mirror file by ``FRESH_LAG`` log rows."""
        if self.mirror_path is None or len(self._row) < max(self.mirror_min, 1):
            return False
        return self._mirror_seq is None or self._seq - self._mirror_seq > FRESH_LAG

    def save_mirror(self) -> bool:
        """Write the mirror's live rows to ``mirror_path`` (atomic), unless nothing is new."""
        if self.mirror_path is None:
            return False
        t = time.perf_counter()
        with self._lock:
            if len(self._row) < max(self.mirror_min, 1) or self._seq == self._mirror_seq:
                return False
            # rows below ``_size`` never change in place, so only the ids are copied here
            mat, ids, mark, epoch = self._mat, self._ids[: self._size].copy(), self._mark, \
                self._epoch
            moments = None if self._moments is None else (self._moments[0].copy(),
                                                          self._moments[1].copy())
        try:
            count = write_mirror(self.mirror_path, dim=self.dim, mark=mark, epoch=epoch,
                                 mat=mat, ids=ids, moments=moments)
        except OSError as exc:  # a read-only folder: the file is only a cache
            self.mirror_info = {**self.mirror_info, "save_error": str(exc)}
            return False
        with self._lock:
            self._mirror_seq = max(mark.seq, self._mirror_seq or 0)
        self.mirror_info = {**self.mirror_info, "saved_vectors": count,
                            "saved_s": round(time.perf_counter() - t, 3)}
        return True

    # ------------------------------------------------------------ the graph

    def _plan_ann(self, reader: StoreReader) -> threading.Thread | None:
        """Past the threshold: load the sidecar, and plan what the worker must compute."""
        if (self.ann_threshold <= 0 or len(self._row) < self.ann_threshold
                or self._worker is not None or self._stop.is_set()):
            return None
        if self._ann is None and self.ann_path is not None and not self._sidecar_tried:
            self._sidecar_tried = True  # once: after a failed load the build overwrites it
            t = time.perf_counter()
            reason = self._load_sidecar(reader)
            if reason is None:
                self.ann_info = {"state": "ready", "source": "sidecar",
                                 "load_s": round(time.perf_counter() - t, 3)}
            else:
                self.ann_info = {"state": "off", "sidecar_rejected": reason}
        graph = self._ann is None
        if not graph and (self._moments is not None or not self._want_moments):
            return None  # moments only once a search asked for them (hybrid, not vector)
        live = np.flatnonzero(self._ids[: self._size] >= 0)
        self._journal = []
        self._worker = threading.Thread(
            target=self._work, args=(graph, self._ids[live].copy(), live, self._mat),
            name="knotwork-ann", daemon=True)
        if graph:
            self.ann_info = {**self.ann_info, "state": "building", "vectors": len(live)}
        return self._worker

    def _work(self, graph: bool, ids: np.ndarray, rows: np.ndarray, mat: FloatMatrix) -> None:
        """Build the graph (if asked) and the moments from a snapshot, then install them.

        The snapshot rows never change under us (removal only marks a row free, growth
        allocates new arrays); what changed meanwhile is in the journal, applied at the end.
        """
        t = time.perf_counter()
        total, gram = np.zeros(self.dim), np.zeros((self.dim, self.dim))
        try:
            ann = AnnIndex(self.dim, self.ann_params) if graph else None
            for i in range(0, len(rows), BUILD_BATCH):
                if self._stop.is_set():
                    return
                block = mat[rows[i:i + BUILD_BATCH]]
                if ann is not None:
                    ann.add(ids[i:i + BUILD_BATCH], block, threads=self.threads)
                total += block.sum(0, dtype=np.float64)
                gram += (block.T @ block).astype(np.float64)
            snapshot = dict(zip(ids.tolist(), rows.tolist(), strict=True))
            with self._lock:
                self._install(ann, (total, gram), snapshot, mat)
                if ann is not None and self._ann is ann:
                    self.ann_info = {**self.ann_info, "state": "ready", "source": "built",
                                     "vectors": len(ann),
                                     "build_s": round(time.perf_counter() - t, 2)}
        except (ImportError, RuntimeError, MemoryError, ValueError) as exc:
            # no usable usearch, or its own errors: the index is an accelerator, not a need
            self.ann_info = {"state": "failed", "error": str(exc)}
            self.ann_threshold = 0  # exact search from now on, rather than retrying forever
            return
        finally:
            with self._lock:
                self._journal = None
                self._worker = None
        self.save()

    def _install(self, ann: AnnIndex | None, moments: tuple[np.ndarray, np.ndarray],
                 snapshot: dict[int, int], mat: FloatMatrix) -> None:
        """Bring the worker's results up to the mirror through the journal; adopt them."""
        changed = list(dict.fromkeys(self._journal or []))
        if len(changed) > max(10_000, len(self._row) // 5):
            self.ann_info = {"state": "off", "dropped": "the store changed too much during"
                             " the build; the next refresh starts again"}
            return
        old = mat[[snapshot[c] for c in changed if c in snapshot]].astype(np.float64)
        now = self._mat[[self._row[c] for c in changed if c in self._row]].astype(np.float64)
        self._moments = (moments[0] - old.sum(0) + now.sum(0),
                         moments[1] - old.T @ old + now.T @ now)
        if ann is not None:
            ann.remove(changed)
            ann.removed = 0
            self._ann = ann
            self._ann_add([c for c in changed if c in self._row])
            self._unsaved = len(ann) or 1

    def _drop_ann(self, why: str) -> None:
        self._ann = None
        self._unsaved = 0
        self.ann_info = {"state": "off", "dropped": why}

    def _load_sidecar(self, reader: StoreReader) -> str | None:
        """Adopt the sidecar after catching it up through the log; or say why not."""
        assert self.ann_path is not None
        got = read_sidecar(self.ann_path, self.dim, self.ann_params, reader.meta(EPOCH_KEY))
        if got is None:
            return "missing, damaged, built with other parameters or for another store"
        mark, ann = got
        if mark.seq > self._seq:
            self._drain(reader)  # written by a process that had read further than us
        if mark.seq > self._seq or not _mark_holds(reader, mark):
            return "written for another store or log"
        touched = _last_words_since(reader, mark.seq, until=self._seq)
        if len(touched) > max(10_000, len(self._row) // 5):
            return "too far behind the store"
        ann.remove(list(touched))
        self._ann = ann
        self._ann_add([c for c in touched if c in self._row])
        problem = self._check_ann(ann)
        if problem:
            self._ann = None
            return problem
        self._unsaved = len(touched)
        return None

    def _check_ann(self, ann: AnnIndex) -> str | None:
        """The graph holds exactly the live ids, and a sample of its vectors are theirs."""
        live = self._ids[: self._size][self._ids[: self._size] >= 0]
        if len(ann) != len(live) or not np.array_equal(np.sort(ann.keys()), np.sort(live)):
            return "its chunks differ from the store's"
        pick = np.random.default_rng(len(live)).choice(live, min(SAMPLE, len(live)),
                                                       replace=False)
        mine = self._mat[[self._row[int(c)] for c in pick]]
        theirs = ann.vectors(pick)
        norms = np.linalg.norm(mine, axis=1) * np.linalg.norm(theirs, axis=1)
        cos = (mine * theirs).sum(1) / np.maximum(norms, 1e-9)
        return None if float(cos.min()) > 0.95 else "its vectors differ from the store's"

    def prepare(self, reader: StoreReader, *, vectors: int) -> None:
        """Leave sidecars that readers can use: the writer's side, after embedding.

        ``vectors`` is the store's count. The mirror file from ``mirror_min`` vectors, the
        graph's past ``ann_threshold``. Each is first checked where it lies (the mirror's
        header and log position, sub-millisecond; the graph's checksum too, ~0.2 s at 100k,
        unless this process holds a graph) and left alone if it lags the log by at most
        ``FRESH_LAG`` rows, so a one-file ingest does not read every vector; otherwise the
        index catches up (from the mirror file if usable), builds the graph if needed, here
        in the foreground, and saves what lags.
        """
        graph = 0 < self.ann_threshold <= vectors
        mirror = self.mirror_path is not None and vectors >= max(self.mirror_min, 1)
        graph_fresh = not graph or (self._ann is None and self._worker is None
                                    and _fresh(self.sidecar_lag(reader)))
        mirror_fresh = not mirror or _fresh(self.mirror_lag(reader))
        if graph_fresh and mirror_fresh:
            return
        self.refresh(reader)
        self.wait()
        if graph and self._unsaved >= SAVE_AFTER:
            self.save()
        if not mirror_fresh:
            self.save_mirror()

    def sidecar_lag(self, reader: StoreReader) -> int | None:
        """Log rows the sidecar lacks (counted up to ``FRESH_LAG + 1``), or None if unusable."""
        if self.ann_path is None:
            return None
        checked = check_sidecar(self.ann_path, self.dim, self.ann_params, reader.meta(EPOCH_KEY))
        return None if checked is None else _lag(reader, checked[0])

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background worker; True when none is running any more."""
        builder = self._worker
        if builder is not None:
            builder.join(timeout)
        return self._worker is None

    def save(self) -> bool:
        """Write the graph to the sidecar if it has changes the file lacks (atomic)."""
        if self.ann_path is None:
            return False
        t = time.perf_counter()
        with self._lock:
            if self._ann is None or not self._unsaved or self._worker is not None:
                return False
            ann, body, mark, count = self._ann, self._ann.serialise(), self._mark, len(self._ann)
            epoch = self._epoch
            self._unsaved = 0
        try:  # hashing and writing ~50 MB (100k vectors) happen outside the lock
            write_sidecar(self.ann_path, sidecar_header(ann, mark, count, body, epoch), body)
        except OSError as exc:  # a read-only folder: the sidecar is only a cache
            self.ann_info = {**self.ann_info, "save_error": str(exc)}
            return False
        self.ann_info = {**self.ann_info, "saved_s": round(time.perf_counter() - t, 3)}
        return True

    def close(self) -> None:
        """Stop a running build and save the sidecars that lag this index noticeably."""
        self._stop.set()
        self.wait()
        if self._unsaved >= SAVE_AFTER:
            self.save()
        if self._mirror_stale():
            self.save_mirror()
        _OPEN.discard(self)


def _mark_holds(reader: StoreReader, mark: LogMark) -> bool:
    """The store's log has the row the sidecar says it was written at (same store)."""
    if mark.seq < 1:
        return False
    seq, rows = reader.vector_changes(mark.seq - 1, limit=1)
    return (seq, rows) == (mark.seq, [(mark.chunk_id, mark.added)])


def _lag(reader: StoreReader, mark: LogMark) -> int | None:
    """Log rows written after ``mark`` (up to ``FRESH_LAG + 1``), None if the mark is not
    this store's."""
    if not _mark_holds(reader, mark):
        return None
    return len(reader.vector_changes(mark.seq, limit=FRESH_LAG + 1)[1])


def _fresh(lag: int | None) -> bool:
    return lag is not None and lag <= FRESH_LAG


def _last_words_since(reader: StoreReader, since: int, *, until: int | None = None
                      ) -> dict[int, bool]:
    """Every chunk id the log names after ``since``: whether it ends up with a vector.

    With ``until``, no further batch is read once ``until`` is reached.
    """
    last: dict[int, bool] = {}
    while until is None or since < until:
        since, changes = reader.vector_changes(since)
        if not changes:
            break
        last.update((c, bool(added)) for c, added in changes)
    return last


def _check_rows(reader: StoreReader, got: MirrorFile, row: dict[int, int],
                touched: dict[int, bool]) -> str | None:
    """A random sample of the rows the log has not touched since the mark equal the store's.

    Exactly (the mirror holds the store's bytes): a chunk the store no longer has, or a
    different vector, means the file is not this store's state at its mark. Random, not
    seeded: a bad file that one process's sample misses is caught by another's.
    """
    order = np.random.default_rng().permutation(len(got.ids))
    pick: list[int] = []
    for i in order:
        if len(pick) == SAMPLE:
            break
        if int(got.ids[i]) not in touched:
            pick.append(int(got.ids[i]))
    theirs = dict(reader.vectors(pick))
    for c in pick:
        blob = theirs.get(c)
        if blob is None or not np.array_equal(np.frombuffer(blob, dtype=np.float32),
                                              got.rows[row[c]]):
            return "its vectors differ from the store's"
    return None


_OPEN: weakref.WeakSet[VectorIndex] = weakref.WeakSet()


@atexit.register
def _stop_builds() -> None:
    """Stop background builds before the interpreter tears down (at most one batch)."""
    for index in list(_OPEN):
        index._stop.set()
        index.wait(30)
