"""An in-memory exact vector index over the store's live chunk vectors.

Vectors live in the store (one SQLite file); this index mirrors them as one float32
matrix and catches up through the store's ``vector_log`` — only the rows that changed
since the last look are read, so an edit costs O(changed chunks), and several processes
that share a store each see the others' writes. Search is a matrix–vector product and an
``argpartition``: exact, ~20 ms at 100k chunks of 384 dims on this class of machine.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from ..store import StoreReader

FloatMatrix = npt.NDArray[np.float32]


class VectorIndex:
    """Exact cosine search over normalised vectors, kept in step with the store."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._lock = threading.Lock()
        self._seq = 0
        self._mat: FloatMatrix = np.zeros((0, dim), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)  # -1 marks a free row
        self._row: dict[int, int] = {}
        self._size = 0

    def __len__(self) -> int:
        return len(self._row)

    def refresh(self, reader: StoreReader) -> None:
        """Apply the store's vector changes since the last refresh."""
        with self._lock:
            while True:
                seq, changes = reader.vector_changes(self._seq)
                if not changes:
                    return
                self._seq = seq
                live: dict[int, bool] = {}
                for chunk_id, added in changes:
                    live[chunk_id] = bool(added)  # the last word on each chunk wins
                gone = [c for c, on in live.items() if not on]
                for c in gone:
                    self._remove(c)
                fresh = [c for c, on in live.items() if on and c not in self._row]
                if fresh:
                    self._add(reader.vectors(fresh))

    def _remove(self, chunk_id: int) -> None:
        row = self._row.pop(chunk_id, None)
        if row is not None:
            self._ids[row] = -1
            self._mat[row] = 0.0

    def _add(self, rows: list[tuple[int, bytes]]) -> None:
        rows = [(cid, blob) for cid, blob in rows if len(blob) == 4 * self.dim]
        if not rows:
            return
        if self._size + len(rows) > len(self._ids):
            self._compact_or_grow(len(rows))
        vecs = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
        start = self._size
        self._mat[start:start + len(rows)] = vecs.reshape(len(rows), self.dim)
        for i, (cid, _) in enumerate(rows):
            self._ids[start + i] = cid
            self._row[cid] = start + i
        self._size = start + len(rows)

    def _compact_or_grow(self, extra: int) -> None:
        """Drop freed rows and make room for ``extra`` more (capacity doubles)."""
        keep = self._ids[: self._size] >= 0
        ids, mat = self._ids[: self._size][keep], self._mat[: self._size][keep]
        cap = max(1024, 2 * (len(ids) + extra))
        self._mat = np.zeros((cap, self.dim), dtype=np.float32)
        self._ids = np.full(cap, -1, dtype=np.int64)
        self._mat[: len(ids)] = mat
        self._ids[: len(ids)] = ids
        self._size = len(ids)
        self._row = {int(c): i for i, c in enumerate(ids)}

    def search(self, query: FloatMatrix, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks most similar to ``query`` (a unit vector): (chunk id, cosine)."""
        return self.search_with_stats(query, k)[0]

    def search_with_stats(self, query: FloatMatrix, k: int
                          ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
        """Top ``k`` and the (mean, sd) of the cosine over every chunk (for fusion)."""
        with self._lock:
            if not self._row:
                return [], None
            scores = self._mat[: self._size] @ query.astype(np.float32).reshape(-1)
            live = self._ids[: self._size] >= 0
            stats = (float(scores[live].mean()), float(scores[live].std()))
            scores[~live] = -np.inf
            k = min(k, len(self._row))
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top])]
            return [(int(self._ids[i]), float(scores[i])) for i in top], stats
