"""A note extracted under other rules than the running code's is read again by the next
sync, though its file did not change: an upgrade's extraction, another chunk size or
phrases taught to the lexicon reach every note without a rebuild, and the result is what a
fresh ingest of the same files gives."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import knotwork.ingest
from knotwork import Knotwork
from knotwork.ingest import lexicon, mentions
from knotwork.sync import files as sync
from knotwork.sync.files import _PARALLEL_MIN

from .test_no_stale import live

NOTES = {
    "web.md": "# Web\n\nThe web tier is guarded by [[WAF]]. It runs on [[Host A]].\n",
    "waf.md": "---\ntags: [edge]\n---\n# WAF\n\nFilters requests, as the Runbook says.\n",
    "ops/runbook.md": "# Runbook\n\n## Restart\n\nRestart [[Web]] first.\n\n## Logs\n\n"
                      + "Read the logs line by line. " * 100 + "\n",
}


def _vault(root: Path, notes: dict[str, str] = NOTES) -> Path:
    vault = root / "v"
    for name, text in notes.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(text, encoding="utf-8")
    return vault


def _fresh(tmp_path: Path, vault: Path, name: str, **settings: object) -> list[tuple[object, ...]]:
    with Knotwork.open(vault, db=str(tmp_path / name), embedder="none", **settings) as kw:
        kw.ingest()
        return live(kw)


def _web_facts(kw: Knotwork) -> dict[tuple[str, str], tuple[str, str | None]]:
    return {(f.predicate, f.value_label or str(f.value)): (f.recorded_at, f.retracted_at)
            for f in kw.facts("Web", history=True)}


def test_phrases_taught_to_the_lexicon_reach_unchanged_notes(
        tmp_path: Path, taught_relation: None) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        before = _web_facts(kw)
        assert ("links_to", "WAF") in before
        lexicon.register_relation("en", "is guarded by", "guarded_by")
        report = kw.ingest()  # no file changed
        assert (report.reread, report.updated, report.unchanged) == (len(NOTES), 0, 0)
        after = _web_facts(kw)
        assert after[("links_to", "WAF")][1] is not None  # retracted: the rules changed
        [gone] = [f for f in kw.facts("Web", history=True) if f.retracted_at]
        assert gone.retract_reason == "read again under other rules"
        assert after[("guarded_by", "WAF")][1] is None
        assert after[("runs_on", "Host A")] == before[("runs_on", "Host A")]  # kept, as it was
        assert live(kw) == _fresh(tmp_path, vault, "fresh.db")
        doc_id = kw.store.reader.document("default", "web.md").id  # type: ignore[union-attr]
        event = kw.store.reader.events(document_id=doc_id, limit=1)[0]
        assert event.action == "update" and event.detail and event.detail["reread"]
        again = kw.ingest()
        assert (again.reread, again.unchanged) == (0, len(NOTES))


def test_new_rules_reread_every_note_once_and_keep_what_they_still_find(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        facts = kw.store.reader.live_facts()
        stats = kw.stats()
        monkeypatch.setattr(knotwork.ingest, "EXTRACTION_RULES",
                            knotwork.ingest.EXTRACTION_RULES + 1)
        assert kw.stats()["to_reread"] == len(NOTES)
        dry = kw.ingest(dry_run=True)
        assert (dry.reread, dry.updated, dry.unchanged) == (len(NOTES), 0, 0)
        report = kw.ingest()
        assert (report.reread, report.updated, report.facts_added,
                report.facts_retracted) == (len(NOTES), 0, 0, 0)
        # the same facts, the same times: only where they were read is written again
        assert ({f.id: f.recorded_at for f in kw.store.reader.live_facts()}
                == {f.id: f.recorded_at for f in facts})
        # read into the chunks they had: no copy of their text is stored again
        assert ({k: kw.stats()[k] for k in ("versions", "chunks")}
                == {k: stats[k] for k in ("versions", "chunks")})
        assert kw.ingest().unchanged == len(NOTES)
        assert kw.stats()["to_reread"] == 0


def test_another_chunk_size_cuts_unchanged_notes_again(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    db = str(tmp_path / "s.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
        before = kw.stats()
    with Knotwork.open(vault, db=db, embedder="none", chunk_tokens=60) as kw:
        assert kw.ingest().reread == len(NOTES)
        after = kw.stats()
        assert after["chunks"] > before["chunks"]
        # the long note was cut otherwise: a new version of it, which moved its citations
        assert after["versions"] > before["versions"]
        assert live(kw) == _fresh(tmp_path, vault, "fresh.db", chunk_tokens=60)
        assert kw.ingest().reread == 0


def test_a_store_from_before_the_rules_were_recorded_reads_its_vault_again(
        tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    db = tmp_path / "s.db"
    with Knotwork.open(vault, db=str(db), embedder="none") as kw:
        kw.ingest()
    with sqlite3.connect(db) as con:  # as schema 12 leaves every document it finds
        con.execute("UPDATE documents SET extraction = NULL")
    with Knotwork.open(vault, db=str(db), embedder="none") as kw:
        # one note alone, as a watcher applies it: only that one
        one = kw.ingest(vault / "waf.md")
        assert (one.reread, one.unchanged) == (1, 0)
        rest = kw.ingest()
        assert (rest.reread, rest.unchanged) == (len(NOTES) - 1, 1)
        assert live(kw) == _fresh(tmp_path, vault, "fresh.db")


def test_workers_reread_a_large_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n = _PARALLEL_MIN + 10
    notes = {f"n{i}.md": f"# N{i}\n\nN{i} depends on [[n{(i + 1) % n}]].\n" for i in range(n)}
    vault = _vault(tmp_path, notes)
    calls: list[int] = []
    real = sync._write_in_workers
    monkeypatch.setattr(sync, "_write_in_workers",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none", workers=2) as kw:
        kw.ingest()
        monkeypatch.setattr(knotwork.ingest, "EXTRACTION_RULES",
                            knotwork.ingest.EXTRACTION_RULES + 1)
        report = kw.ingest()
        assert (report.reread, report.unchanged, len(calls)) == (n, 0, 2)
        assert live(kw) == _fresh(tmp_path, vault, "fresh.db")
        assert kw.ingest().unchanged == n


def test_new_mention_rules_find_every_notes_mentions_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    db = str(tmp_path / "s.db")
    with monkeypatch.context() as m:  # rules that found no mentions at all
        m.setattr(mentions.MentionFinder, "find", lambda self, *a, **k: [])
        with Knotwork.open(vault, db=db, embedder="none") as kw:
            kw.ingest()
            assert not [f for f in kw.store.reader.live_facts() if f.extractor == "mention"]
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        assert kw.ingest().facts_added == 0  # the same rules number: nothing to find again
        monkeypatch.setattr(knotwork.ingest, "MENTION_RULES", knotwork.ingest.MENTION_RULES + 1)
        assert kw.stats()["mentions_to_find_again"]
        report = kw.ingest()
        assert not kw.stats()["mentions_to_find_again"]
        assert report.unchanged == len(NOTES) and report.facts_added > 0
        assert live(kw) == _fresh(tmp_path, vault, "fresh.db")
        assert kw.ingest().facts_added == 0
