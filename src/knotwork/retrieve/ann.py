"""An approximate (HNSW, usearch, int8) index over chunk vectors, and its sidecar file.

``VectorIndex`` owns the truth (an exact float32 mirror of the store's vectors); this
module only holds a graph over the same ids that proposes candidates, which the caller
re-scores exactly. Why int8: a quarter of float32's memory and file size, and usearch's
int8 kernel builds ~5× faster than its float32 one on this AVX2 machine; the recall int8
loses is won back by the exact re-scoring (see ``bench/README.md``).

The sidecar (``<store>.usearch``) lets the next process skip a build that takes a minute at
100k vectors. It is one file, written atomically: a header (format, parameters, the
``vector_log`` position it reflects and the row found there, a SHA-256 of the body) and
usearch's own serialisation as the body. A reader trusts none of it blindly: a wrong magic,
format, parameter, log position or checksum means "rebuild", and ``VectorIndex`` checks the
loaded graph's keys and a sample of its vectors against the store before using it.

Why loaded rather than memory-mapped (usearch's ``view``): a viewed graph is read-only, so
every edit would have to wait in a side list until a full rebuild; loading 50–70 MB takes
~0.2 s at 100k vectors and keeps adds and removes in place.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from usearch.index import Index

FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]

MAGIC = b"KNOTANN\x01"
FORMAT = 1
_INDEX: type[Index] | None = None


def usearch_index() -> type[Index]:
    """usearch's ``Index`` class, imported on first use (not at ``import knotwork``).

    Why the preload: usearch's extension carries a static libstdc++ whose GNU-unique
    symbols (``std::locale`` ids among them) bind process-wide; loaded before the system
    libstdc++, they win, and onnxruntime (the default embedder), imported after it,
    crashes in ``std::locale`` during its own import. With the system libstdc++ loaded
    globally first, both bind to it (tests/retrieve/test_ann.py runs that order).
    """
    global _INDEX
    if _INDEX is None:
        try:
            ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL)
        except OSError:  # no system C++ runtime (not Linux): no clash to prevent
            pass
        from usearch.index import Index

        _INDEX = Index
    return _INDEX


@dataclass(frozen=True, slots=True)
class AnnParams:
    """HNSW shape. ``connectivity`` and ``expansion_add`` are fixed at build time.

    Measured at 100k (bench/README.md): M=32/efC=64 builds as fast as M=16/efC=128 and
    gives a better top 100 (recall@100 0.94 vs 0.85–0.89). After re-scoring, ef=128 gives
    recall@10 0.975 at ~2.4 ms on busy cores; ef=192 0.987 at ~4.5 ms, too close to the
    5 ms target when the cores are shared. A top 100 searches with ef=200 (2k) anyway.
    """

    connectivity: int = 32
    expansion_add: int = 64
    expansion_search: int = 128


@dataclass(frozen=True, slots=True)
class LogMark:
    """A position in ``vector_log`` and the row found there (so a new store is noticed)."""

    seq: int
    chunk_id: int
    added: int


class AnnIndex:
    """A usearch HNSW graph keyed by chunk id; callers hold the lock that guards it."""

    def __init__(self, dim: int, params: AnnParams, index: Index | None = None) -> None:
        self.dim = dim
        self.params = params
        self.index = index if index is not None else usearch_index()(
            ndim=dim, metric="cos", dtype="i8", connectivity=params.connectivity,
            expansion_add=params.expansion_add, expansion_search=params.expansion_search)
        self.removed = 0  # removals since the build: HNSW degrades as they pile up

    def __len__(self) -> int:
        return len(self.index)

    def add(self, ids: IdArray, vecs: FloatMatrix, *, threads: int = 1) -> None:
        if len(ids):
            self.index.add(ids.astype(np.uint64), vecs, threads=threads)

    def remove(self, ids: list[int]) -> None:
        present = [c for c in ids if c in self.index]
        if present:
            self.index.remove(np.asarray(present, dtype=np.uint64))
            self.removed += len(present)

    def candidates(self, query: FloatMatrix, count: int) -> IdArray:
        """About ``count`` ids near ``query`` (approximate: re-score them exactly)."""
        if not len(self.index):
            return np.zeros(0, dtype=np.int64)
        found = self.index.search(query, count)
        return np.asarray(found.keys, dtype=np.int64)

    def keys(self) -> IdArray:
        return np.asarray(self.index.keys, dtype=np.int64)

    def vectors(self, ids: IdArray) -> FloatMatrix:
        """The stored (int8, dequantised) vectors of ``ids``, one row each."""
        got: Any = self.index.get(ids.astype(np.uint64), dtype="f32")  # a tuple of rows
        return np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for v in got])

    # ------------------------------------------------------------ sidecar

    def serialise(self) -> bytes | bytearray:
        """usearch's bytes for this graph (call under the caller's lock; ~0.1 s at 100k)."""
        body = self.index.save()
        assert body is not None  # no path given: usearch returns the bytes
        return body


def sidecar_header(ann: AnnIndex, mark: LogMark, count: int,
                   body: bytes | bytearray, epoch: str | None = None) -> dict[str, object]:
    """What a reader checks before trusting the body: parameters, log position, checksum,
    and the store's vector epoch (a random name the store gives its vectors once)."""
    return {"format": FORMAT, "dim": ann.dim, "metric": "cos", "dtype": "i8",
            "connectivity": ann.params.connectivity, "expansion_add": ann.params.expansion_add,
            "seq": mark.seq, "chunk_id": mark.chunk_id, "added": mark.added,
            "count": count, "epoch": epoch, "sha256": hashlib.sha256(body).hexdigest()}


@contextmanager
def replaced_atomically(path: Path) -> Iterator[BinaryIO]:
    """A file to write that replaces ``path`` only once the block ends without an error.

    A temporary file beside ``path``, then a rename: a reader sees the old file or the new
    one, never half of one, and a failure leaves no temporary file behind.
    """
    fd, name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        os.fchmod(fd, 0o644)  # as a plain open() would leave it (mkstemp makes it 0600)
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_sidecar(path: Path, header: dict[str, object], body: bytes | bytearray
                  ) -> None:
    """Write header and body to ``path`` atomically (a temporary file, then a rename)."""
    head = json.dumps(header, sort_keys=True).encode()
    with replaced_atomically(path) as f:
        f.write(MAGIC + struct.pack("<I", len(head)) + head)
        f.write(body)


def check_sidecar(path: Path, dim: int, params: AnnParams, epoch: str | None = None
                  ) -> tuple[LogMark, int, memoryview] | None:
    """The log position, vector count and body of a sound sidecar, or None.

    None for a missing, truncated, corrupt or foreign file, or one built with other
    parameters. The checksum is verified here, so a damaged body never reaches usearch.
    ``epoch`` is the store's: a sidecar written under another one belongs to a store that
    was deleted and made anew at the same path (one written before epochs existed is
    judged by the caller's other checks).
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < len(MAGIC) + 4 or not data.startswith(MAGIC):
        return None
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        header = json.loads(data[start:start + size])
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    body = memoryview(data)[start + size:]
    expected = {"format": FORMAT, "dim": dim, "metric": "cos", "dtype": "i8",
                "connectivity": params.connectivity, "expansion_add": params.expansion_add}
    if not isinstance(header, dict) or any(header.get(k) != v for k, v in expected.items()):
        return None
    if header.get("epoch") is not None and header.get("epoch") != epoch:
        return None
    if header.get("sha256") != hashlib.sha256(body).hexdigest():
        return None
    try:
        mark = LogMark(int(header["seq"]), int(header["chunk_id"]), int(header["added"]))
        return mark, int(header["count"]), body
    except (KeyError, TypeError, ValueError):
        return None


def read_sidecar(path: Path, dim: int, params: AnnParams, epoch: str | None = None
                 ) -> tuple[LogMark, AnnIndex] | None:
    """The graph in ``path`` and the log position it reflects, or None if unusable."""
    checked = check_sidecar(path, dim, params, epoch)
    if checked is None:
        return None
    mark, count, body = checked
    try:
        index = usearch_index().restore(body)
    except (ImportError, RuntimeError, ValueError):  # the build that follows reports it
        return None
    if index is None or index.ndim != dim or len(index) != count:
        return None
    index.expansion_search = params.expansion_search  # type: ignore[misc]  # has a setter
    return mark, AnnIndex(dim, params, index)
