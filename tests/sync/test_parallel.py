"""A large sync parses and writes in worker processes; the result must be the same store
content as writing everything in this process, errors included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.store.sqlite import SQLiteStore
from knotwork.sync import files as sync
from knotwork.sync.files import _PARALLEL_MIN

from .test_no_stale import live

N = _PARALLEL_MIN + 40


def _vault(root: Path) -> Path:
    vault = root / "vault"
    for i in range(N):
        folder = vault / ("teams" if i % 3 else "services")
        folder.mkdir(parents=True, exist_ok=True)
        aliases = f"aliases: [Unit {i}]\n" if i % 7 == 0 else ""
        (folder / f"note-{i}.md").write_text(
            f"---\ntitle: Note {i}\nstatus: active\n{aliases}---\n# Note {i}\n\n"
            f"Works with [[note-{(i * 7) % N}]] and depends on [[Note {(i + 1) % N}]].\n\n"
            f"## Details\n\nPlain text naming Unit {(i * 3) % N} and note {i // 2}.\n"
            f"- uses [[note-{(i + 5) % N}]]\n", encoding="utf-8")
    (vault / "broken.md").write_bytes(b"---\ntitle: [unclosed\n---\n# Broken\n\nbody \xff\n")
    return vault


def _pools_used(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the worker-pool paths a sync takes, in order, as it takes them."""
    calls: list[str] = []
    for name in ("_write_in_workers", "_mentions_in_workers"):
        real = getattr(sync, name)
        monkeypatch.setattr(sync, name, lambda *a, _f=real, _n=name, **k: calls.append(_n)
                            or _f(*a, **k))
    return calls


def test_workers_write_the_same_facts_as_one_process(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _pools_used(monkeypatch)
    monkeypatch.setattr(sync, "_WORKER_BATCH", 60)  # four transactions for two workers
    durable = SQLiteStore.make_durable
    monkeypatch.setattr(SQLiteStore, "make_durable",
                        lambda self: calls.append(f"durable {Path(self.path).name}")
                        or durable(self))
    vault = _vault(tmp_path)
    par = Knotwork.open(vault, db=str(tmp_path / "par.db"), synchronous="OFF", workers=2)
    seq = Knotwork.open(vault, db=str(tmp_path / "seq.db"), synchronous="OFF", workers=1)
    try:
        r_par, r_seq = par.ingest(), seq.ingest()
        # the first went through the workers, whose commits are synced once at the end
        # (see Store.opener's bulk); the second did not
        assert calls == ["_write_in_workers", "durable par.db", "_mentions_in_workers",
                         "durable par.db"]
        assert r_par.added == r_seq.added == N  # broken.md is refused: invalid UTF-8
        assert sorted((e.path, e.reason) for e in r_par.errors) == sorted(
            (e.path, e.reason) for e in r_seq.errors)
        assert any(e.path == "broken.md" for e in r_par.errors)
        assert r_par.facts_added == r_seq.facts_added > 0
        mentions = [f for f in par.store.reader.live_facts() if f.predicate == "mentions"]
        assert len(mentions) > N / 2  # "Unit <i>" aliases and "note <i>" in plain text
        assert live(par) == live(seq)
        assert par.stats()["documents"] == seq.stats()["documents"]
        # the search indexes were written by the workers too
        # (equal scores may come in either order: the two stores wrote rows in other orders)
        hits_par, hits_seq = par.search("Note 17", k=3), seq.search("Note 17", k=3)
        assert hits_par[0].path == hits_seq[0].path == "teams/note-17.md"
        assert [round(h.score, 9) for h in hits_par] == [round(h.score, 9) for h in hits_seq]
        assert par.ingest().unchanged == N
    finally:
        par.close()
        seq.close()


def test_a_large_resync_with_renames_edits_and_deletes_matches_a_fresh_ingest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync, "_WORKER_BATCH", 60)
    vault = _vault(tmp_path)
    kw = Knotwork.open(vault, db=str(tmp_path / "inc.db"), synchronous="OFF", workers=2)
    try:
        kw.ingest()
        notes = sorted(p for p in vault.rglob("note-*.md"))
        for i, path in enumerate(notes):
            if i % 8 == 0:
                path.unlink()  # 30 deletes
            elif i % 8 == 1:
                path.rename(path.with_name(f"moved-{path.name}"))  # renames, same content
            else:  # edits: a new link, a new plain mention, one fact fewer
                text = path.read_text(encoding="utf-8").replace("status: active", "status: done")
                path.write_text(text + f"\nAlso see [[note-{(i * 11) % N}]] and Unit {i}.\n",
                                encoding="utf-8")
        report = kw.ingest()
        assert report.deleted == 30 and report.renamed == 30
        assert report.updated == N - 60
        fresh = Knotwork.open(vault, db=str(tmp_path / "fresh.db"), synchronous="OFF",
                              workers=1)
        try:
            fresh.ingest()
            assert live(kw) == live(fresh)
            assert kw.stats()["documents"] == fresh.stats()["documents"]
        finally:
            fresh.close()
    finally:
        kw.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_is_told_of_every_phase(tmp_path: Path, workers: int) -> None:
    """The files applied, then the documents scanned for mentions, each up to its total:
    a bar that stopped at the files left a long mention pass looking hung."""
    vault = _vault(tmp_path)
    files: list[tuple[int, int]] = []
    first: list[tuple[int, int]] = []
    edit: list[tuple[int, int]] = []
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), synchronous="OFF",
                       workers=workers, embedder="none") as kw:
        kw.ingest(progress=lambda d, t: files.append((d, t)),
                  mention_progress=lambda d, t: first.append((d, t)))
        notes = kw.stats()["documents"]
        (vault / "teams" / "note-1.md").write_text("# Note 1\n\nNow about Unit 7.\n",
                                                   encoding="utf-8")
        kw.ingest(mention_progress=lambda d, t: edit.append((d, t)))
    assert files[-1] == (N + 1, N + 1)  # the broken file counts as done too
    assert first[-1] == (notes, notes)  # a first sync scans every document
    # an edit: the note itself and the documents whose text holds a name it lost
    assert edit and edit[-1][0] == edit[-1][1] < notes
    for calls in (files, first, edit):
        assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_a_sync_allowed_one_cpu_runs_in_its_own_process(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker count came from os.cpu_count(), the host's CPUs: in a container or a
    # `taskset` limited to one CPU, a sync forked a worker per host CPU onto it.
    calls = _pools_used(monkeypatch)
    vault = _vault(tmp_path)
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        with Knotwork.open(vault, db=str(tmp_path / "one.db"), synchronous="OFF") as kw:
            assert kw.ingest().added == N
    finally:
        os.sched_setaffinity(0, allowed)
    assert calls == []
    if len(allowed) > 1:  # and with the CPUs back, the same sync uses workers
        with Knotwork.open(vault, db=str(tmp_path / "two.db"), synchronous="OFF") as kw:
            kw.ingest()
        assert calls == ["_write_in_workers", "_mentions_in_workers"]
