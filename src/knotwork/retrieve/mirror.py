"""The float32 mirror of the store's vectors, saved beside the store (``<store>.vectors``).

Why: a new process otherwise reads every vector BLOB from SQLite before its first vector
search (4–11 s at 100k chunks of 384 dims), which every CLI call pays. The file holds the
live rows, compacted, and the ``vector_log`` position they reflect; a reader maps it and
catches up through the log from there, as it does for the graph sidecar (``retrieve.ann``).

Layout, little-endian: ``MAGIC``, a u32 length and a JSON header, zero-padded to
``HEADER_SIZE``; then the rows (float32, count × dim), the chunk ids (int64) and, when the
writer had them, the fusion moments Σx (float64, dim) and Σxxᵀ (float64, dim × dim), each
section starting on a 64-byte boundary. The header holds the format, dimension, count, log
mark, the store's vector epoch and a CRC-32 of everything after the header.

A reader trusts none of it blindly: a wrong magic, format, dimension or size (a truncated
file) or checksum (a damaged one) means "read the store instead"; ``VectorIndex`` then checks
the mark and epoch against the store and a sample of rows against the store's vectors.
Why CRC-32 and not SHA-256: it detects damage, which is all it is for (the file is a cache,
not a trust boundary), at ~3 GB/s here against ~0.35 GB/s: 50 ms instead of 0.4 s at 100k.
Why mapped read-only: pages shared with the OS cache and with other processes, no copy up
front; a write to the mapped array raises, and the first add moves the index to new,
writable arrays anyway (``VectorIndex._compact_or_grow``).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .ann import LogMark, replaced_atomically

FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
Moments = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]

MAGIC = b"KNOTVEC\x01"
FORMAT = 1
HEADER_SIZE = 4096  # fixed, so the body can be written before its checksum is known
ALIGN = 64
WRITE_BLOCK = 4096  # rows per write: compacting copies one block at a time, not the matrix

_F32 = np.dtype("<f4")
_I64 = np.dtype("<i8")
_F64 = np.dtype("<f8")


@dataclass(frozen=True, slots=True)
class MirrorFile:
    """A sound mirror file: rows and ids are read-only views of the mapped file."""

    mark: LogMark
    epoch: str | None
    ids: IdArray
    rows: FloatMatrix
    moments: Moments | None


def _pad(n: int) -> int:
    return -n % ALIGN


def _layout(count: int, dim: int, moments: bool) -> tuple[int, int, int]:
    """Offsets of the ids and the moments, and the file's total size."""
    rows_end = HEADER_SIZE + 4 * count * dim
    ids_at = rows_end + _pad(rows_end)
    ids_end = ids_at + 8 * count
    moments_at = ids_end + _pad(ids_end)
    end = moments_at + 8 * dim * (dim + 1) if moments else ids_end
    return ids_at, moments_at, end


def read_header(path: Path, dim: int) -> dict[str, object] | None:
    """The header of ``path`` if it is a mirror file of this format and dimension."""
    try:
        with path.open("rb") as f:
            head = f.read(HEADER_SIZE)
    except OSError:
        return None
    return _parse_header(head, dim)


def _parse_header(head: bytes, dim: int) -> dict[str, object] | None:
    if len(head) < HEADER_SIZE or not head.startswith(MAGIC):
        return None
    (size,) = struct.unpack_from("<I", head, len(MAGIC))
    start = len(MAGIC) + 4
    if start + size > HEADER_SIZE:
        return None
    try:
        header = json.loads(head[start:start + size])
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    expected = {"format": FORMAT, "dim": dim, "dtype": "<f4"}
    if not isinstance(header, dict) or any(header.get(k) != v for k, v in expected.items()):
        return None
    return header


def header_mark(header: dict[str, object]) -> tuple[LogMark, str | None] | None:
    """The log mark and vector epoch a header records, or None if they are malformed."""
    try:
        mark = LogMark(int(header["seq"]), int(header["chunk_id"]),  # type: ignore[call-overload]
                       int(header["added"]))  # type: ignore[call-overload]
    except (KeyError, TypeError, ValueError):
        return None
    epoch = header.get("epoch")
    return (mark, epoch) if epoch is None or isinstance(epoch, str) else None


def check_header(path: Path, dim: int) -> tuple[LogMark, str | None] | None:
    """The mark and epoch of ``path`` if its header is sound and its size matches it.

    Cheap (one small read, no checksum): for a writer deciding whether to refresh the file;
    a reader still verifies everything in ``read_mirror``.
    """
    header = read_header(path, dim)
    if header is None:
        return None
    try:
        count, moments = int(header["count"]), bool(header["moments"])  # type: ignore[call-overload]
        size = path.stat().st_size
    except (KeyError, TypeError, ValueError, OSError):
        return None
    return header_mark(header) if size == _layout(count, dim, moments)[2] else None


def read_mirror(path: Path, dim: int) -> MirrorFile | None:
    """The mirror in ``path``, mapped read-only and checksummed, or None if unusable.

    None for a missing, truncated, damaged or foreign file, or one of another dimension.
    What it says about the store (mark, epoch, rows) is the caller's to check.
    """
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < HEADER_SIZE:
                return None
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    header = _parse_header(mapped[:HEADER_SIZE], dim)
    if header is None:
        return None
    marked = header_mark(header)
    try:
        count, has_moments = int(header["count"]), bool(header["moments"])  # type: ignore[call-overload]
        crc = int(header["crc32"])  # type: ignore[call-overload]
    except (KeyError, TypeError, ValueError):
        return None
    if marked is None or count < 0:
        return None
    ids_at, moments_at, end = _layout(count, dim, has_moments)
    if size != end or zlib.crc32(memoryview(mapped)[HEADER_SIZE:]) != crc:
        return None
    rows = np.frombuffer(mapped, dtype=_F32, count=count * dim, offset=HEADER_SIZE)
    ids = np.frombuffer(mapped, dtype=_I64, count=count, offset=ids_at)
    moments = None
    if has_moments:
        total = np.frombuffer(mapped, dtype=_F64, count=dim, offset=moments_at)
        gram = np.frombuffer(mapped, dtype=_F64, count=dim * dim, offset=moments_at + 8 * dim)
        moments = (total.copy(), gram.reshape(dim, dim).copy())  # small; updated as a whole
    return MirrorFile(marked[0], marked[1], ids, rows.reshape(count, dim), moments)


def live_blocks(mat: FloatMatrix, ids: IdArray) -> Iterator[tuple[IdArray, FloatMatrix]]:
    """The live rows of ``mat`` (``ids`` −1 marks a free row), a block at a time."""
    for i in range(0, len(ids), WRITE_BLOCK):
        block_ids = ids[i:i + WRITE_BLOCK]
        keep = block_ids >= 0
        block = mat[i:i + len(block_ids)]
        yield (block_ids, block) if keep.all() else (block_ids[keep], block[keep])


def write_mirror(path: Path, *, dim: int, mark: LogMark, epoch: str | None,
                 mat: FloatMatrix, ids: IdArray, moments: Moments | None) -> int:
    """Write the live rows of ``mat`` to ``path`` atomically; return how many.

    ``mat`` rows below ``len(ids)`` must not change meanwhile (``VectorIndex`` never writes
    a row twice: removal only marks its id free, growth allocates new arrays), so this runs
    outside the index's lock without copying the matrix.
    """
    with replaced_atomically(path) as f:
        f.seek(HEADER_SIZE)
        crc, count, kept = 0, 0, []
        for block_ids, block in live_blocks(mat, ids):
            data = np.ascontiguousarray(block, dtype=_F32).data
            crc = zlib.crc32(data, crc)
            f.write(data)
            kept.append(block_ids)
            count += len(block_ids)
        tail = [np.concatenate(kept).astype(_I64) if kept else np.zeros(0, _I64)]
        if moments is not None:  # one section: Σxxᵀ follows Σx with no gap
            tail.append(np.concatenate([moments[0].astype(_F64).reshape(-1),
                                        moments[1].astype(_F64).reshape(-1)]))
        for part in tail:
            gap = bytes(_pad(f.tell()))
            crc = zlib.crc32(np.ascontiguousarray(part).data, zlib.crc32(gap, crc))
            f.write(gap)
            f.write(np.ascontiguousarray(part).data)
        header = {"format": FORMAT, "dim": dim, "dtype": "<f4", "count": count,
                  "seq": mark.seq, "chunk_id": mark.chunk_id, "added": mark.added,
                  "epoch": epoch, "moments": moments is not None, "crc32": crc}
        head = json.dumps(header, sort_keys=True).encode()
        f.seek(0)
        f.write(MAGIC + struct.pack("<I", len(head)) + head)
    return count
