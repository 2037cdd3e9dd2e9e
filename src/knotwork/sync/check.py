"""``knotwork check``: verify the store's invariants; with ``repair``, rebuild what is derived.

The source of truth is the documents, their versions and chunks, and the facts; the text
indexes, the vectors' bookkeeping and the mention facts are derived from them. ``run``
asks the store to check every invariant (``Store.check_integrity``), embeds a sample of
chunks again and compares the vectors with the stored ones, and, to repair, rebuilds the
derived indexes (``Store.rebuild_indexes``), finds the queued mentions, drops the vector
files beside the store (each process rebuilds them from the store) and lets the caller
embed the chunks left without a vector; then it checks again and reports what is left.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ingest.mentions import ScopedFinder
from ..store import Problem, Store
from .files import refresh_mentions

Embed = Callable[[Sequence[str]], Any]
_SAME = 0.99  # cosine at or above which a re-embedded vector is the one stored
_SIDECARS = (".vectors", ".usearch")


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What ``knotwork check`` found: ``ok`` when no invariant is broken."""

    problems: tuple[Problem, ...]
    vectors_compared: int = 0
    notes: tuple[str, ...] = ()
    repaired: dict[str, int] | None = None
    found_before_repair: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": [{"check": p.check, "detail": p.detail}
                                            for p in self.problems],
                "vectors_compared": self.vectors_compared, "notes": list(self.notes),
                "repaired": self.repaired, "found_before_repair": self.found_before_repair}


def _vectors(store: Store, embed: Embed | None, n: int) -> tuple[list[Problem], int, list[str]]:
    if n <= 0:
        return [], 0, []
    sample = store.vector_sample(n)
    if not sample:
        return [], 0, []
    if embed is None:
        return [], 0, ["stored vectors were not compared: no embedder is configured"]
    fresh = np.asarray(embed([s.text for s in sample]), dtype=np.float32)
    problems = []
    for s, new in zip(sample, fresh, strict=True):
        old = np.frombuffer(s.vector, dtype=np.float32)
        if old.shape != new.shape:
            problems.append(Problem("vector_index", f"a stored vector has {old.size}"
                                    f" dimensions, the embedder {new.size}"))
            continue
        denom = float(np.linalg.norm(old) * np.linalg.norm(new)) or 1.0
        cos = float(old @ new) / denom
        if cos < _SAME:
            problems.append(Problem("vector_index", f"the stored vector of {s.text[:40]!r}"
                                    f" differs from a fresh embedding (cosine {cos:.3f})"))
    return problems, len(sample), []


def verify(store: Store, *, embed: Embed | None, sample: int = 200,
           vectors: int = 32) -> CheckReport:
    problems = list(store.check_integrity(sample=sample))
    more, compared, notes = _vectors(store, embed, vectors)
    return CheckReport(tuple(problems + more), vectors_compared=compared, notes=tuple(notes))


def repair(store: Store, *, actor: str, finder: ScopedFinder,
           embed_pending: Callable[[], object] | None) -> dict[str, int]:
    """Rebuild every derived index from the source of truth; returns what was redone."""
    counts = dict(store.rebuild_indexes(actor=actor))
    added, retracted = refresh_mentions(store, finder, actor=actor, documents=set(),
                                        added=[], removed=[], generations=0)
    counts["mentions_added"], counts["mentions_retracted"] = added, retracted
    for ext in _SIDECARS:
        try:
            os.remove(store.path + ext)
            counts[f"removed{ext.replace('.', '_')}"] = 1
        except OSError:
            pass
    if embed_pending is not None and counts.get("chunks_to_embed"):
        embed_pending()
    return counts


def run(store: Store, *, embed: Embed | None, actor: str, finder: ScopedFinder,
        repair_it: bool = False, embed_pending: Callable[[], object] | None = None,
        sample: int = 200, vectors: int = 32) -> CheckReport:
    """Check; with ``repair_it``, repair and check again (the report is the second check's)."""
    first = verify(store, embed=embed, sample=sample, vectors=vectors)
    if not repair_it:
        return first
    done = repair(store, actor=actor, finder=finder, embed_pending=embed_pending)
    after = verify(store, embed=embed, sample=sample, vectors=vectors)
    return CheckReport(after.problems, vectors_compared=after.vectors_compared,
                       notes=after.notes, repaired=done,
                       found_before_repair=len(first.problems))
