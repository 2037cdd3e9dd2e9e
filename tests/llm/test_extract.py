"""Extraction through a scripted chat server: grounding, caching, budget, edits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knotwork import Knotwork
from knotwork.errors import NotFound
from knotwork.llm.triples import parse_triples

from .chatserver import ChatServer, is_extraction, passage, rule_responder


def extracted(kw: Knotwork, label: str) -> dict[tuple[str, str], Any]:
    return {(f.predicate, f.value_label or f.value): f for f in kw.facts(label)
            if f.trust == "extracted"}


def test_extracted_facts_are_grounded_unreviewed_and_cited(kw: Knotwork, vault: Path,
                                                           server: ChatServer) -> None:
    report = kw.extract(vault)
    assert report.stopped is None and report.documents == report.documents_applied == 3
    assert report.calls == report.sent == report.chunks == len(server.extraction_requests)
    assert report.prompt_tokens > 0 and report.completion_tokens > 0
    facts = extracted(kw, "Kestrel Queue")
    assert set(facts) == {("uses", "Postgres"), ("runs_on", "Kota"), ("replaces", "Heliograph")}
    f = facts[("runs_on", "Kota")]
    assert (f.trust, f.review, f.source.path) == ("extracted", "unreviewed",
                                                  "services/Kestrel Queue.md")
    line = (vault / "services/Kestrel Queue.md").read_text().split("\n")[f.source.line_start - 1]
    assert "runs on Kota" in line and f.source.supporting_text == line.strip()
    # every request asked for JSON by schema, one chunk each
    assert all(r["response_format"]["type"] == "json_schema"
               for r in server.extraction_requests)


def test_triples_not_in_the_chunk_or_off_schema_are_dropped_and_counted(
        vault: Path, tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any]:
        if "Postgres" not in passage(body):
            return {"content": json.dumps({"triples": []})}
        return {"content": json.dumps({"triples": [
            {"subject": "Kestrel Queue", "predicate": "uses", "object": "Postgres",
             "kind": "entity"},
            {"subject": "Kestrel Queue", "predicate": "uses", "object": "MySQL",
             "kind": "entity"},  # not in the text
            {"subject": "RabbitMQ", "predicate": "replaced_by", "object": "Kestrel Queue",
             "kind": "entity"},  # not in the text
            {"subject": "Kestrel Queue", "predicate": "uses"},  # no object: off schema
            "Kestrel Queue uses Postgres",  # not an object at all
            {"subject": "Kestrel Queue", "predicate": "uses", "object": "Postgres",
             "kind": "entity"},  # the same again
        ]})}

    with ChatServer(responder) as server, Knotwork.open(
            vault, db=str(tmp_path / "s.db"), llm_url=server.url, llm_model="m") as kw:
        report = kw.extract(vault)
        assert set(extracted(kw, "Kestrel Queue")) == {("uses", "Postgres")}
    assert report.dropped == {"object not in chunk": 1, "subject not in chunk": 1,
                              "schema": 2, "duplicate": 1}


def test_malformed_replies_are_read_tolerantly_or_asked_again(vault: Path,
                                                              tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any]:
        text = passage(body)
        if "Postgres" in text:  # prose around a fenced block with a trailing comma
            return {"content": 'Sure! Here you go:\n```json\n{"triples": [{"subject": '
                    '"Kestrel Queue", "predicate": "uses", "object": "Postgres",},]}\n```'}
        if "Heliograph" in text:
            return {"content": "I think Kestrel Queue replaces Heliograph."}  # no JSON, ever
        return rule_responder(body)

    with ChatServer(responder) as server, Knotwork.open(
            vault, db=str(tmp_path / "s.db"), llm_url=server.url, llm_model="m") as kw:
        report = kw.extract(vault)
        facts = set(extracted(kw, "Kestrel Queue"))
        asked = [passage(r) for r in server.extraction_requests]
        again = kw.extract(vault)
    assert facts == {("uses", "Postgres"), ("runs_on", "Kota")}
    assert report.dropped == {"unparseable answer": 1}
    assert sum("Heliograph" in p for p in asked) == 2  # asked twice, then cached as empty
    assert report.calls == report.chunks + 1 and again.calls == 0


def test_a_second_run_makes_no_call(kw: Knotwork, vault: Path, server: ChatServer) -> None:
    first = kw.extract(vault)
    n = len(server.requests)
    second = kw.extract(vault)
    assert len(server.requests) == n and second.calls == 0 and second.cached == first.chunks
    assert (second.facts_added, second.facts_retracted) == (0, 0)
    # the cache survives the process: a new facade on the same store pays nothing either
    kw.close()
    with Knotwork.open(vault, db=kw.store.path, llm_url=server.url, llm_model="test-model") as k2:
        assert k2.extract(vault).calls == 0
        other = Knotwork.open(vault, db=kw.store.path, llm_url=server.url, llm_model="other")
        with other:  # another model asks again
            assert other.extract(vault).calls == first.chunks


def test_budget_stops_the_run_and_a_later_run_resumes(kw: Knotwork, vault: Path,
                                                      server: ChatServer) -> None:
    # one call's worst case: the prompt (x1.2) plus the completion cap of 1024 tokens; a
    # call costs ~250 here, so the budget holds a few calls, not all six
    budget = 1024 + 700
    first = kw.extract(vault, budget=budget)
    assert first.stopped == "budget" and 0 < first.sent < first.chunks
    assert first.total_tokens <= budget and first.documents_pending > 0
    assert kw.extract(vault, budget=10).sent == 0  # too small for any call: stops at once
    second = kw.extract(vault)
    assert second.stopped is None and second.cached == first.sent
    assert second.sent == second.chunks - first.sent
    full = len(server.extraction_requests)
    assert full == first.chunks  # no chunk was paid for twice
    assert second.documents_applied == 3 and second.documents_pending == 0


def test_an_edit_retracts_that_chunks_facts_and_resends_only_it(
        kw: Knotwork, vault: Path, server: ChatServer) -> None:
    kw.extract(vault)
    before = extracted(kw, "Kestrel Queue")
    note = vault / "services/Kestrel Queue.md"
    note.write_text(note.read_text().replace("runs on Kota", "runs on Lynx"))
    kw.ingest(vault)  # the sync alone retracts what the edited chunk said
    assert ("runs_on", "Kota") not in extracted(kw, "Kestrel Queue")
    [gone] = [f for f in kw.facts("Kestrel Queue", history=True)
              if f.value_label == "Kota" and f.trust == "extracted"]
    assert gone.retract_reason == "source edited"
    n = len(server.extraction_requests)
    report = kw.extract(vault)
    sent = [passage(r) for r in server.extraction_requests[n:]]
    assert report.calls == 1 and len(sent) == 1 and "Lynx" in sent[0]
    after = extracted(kw, "Kestrel Queue")
    assert set(after) == {("uses", "Postgres"), ("runs_on", "Lynx"), ("replaces", "Heliograph")}
    # the facts of the chunks that did not change are the same rows
    assert after[("uses", "Postgres")].id == before[("uses", "Postgres")].id
    # deleting the note retracts its extracted facts like any other
    note.unlink()
    kw.ingest(vault)
    try:
        left = extracted(kw, "Kestrel Queue")
    except NotFound:
        left = {}
    assert left == {}
    assert all(f.retracted_at for f in kw.store.reader.facts_by_id([gone.id, *(
        f.id for f in after.values())]))


def test_a_server_that_fails_stops_the_run_and_keeps_what_was_answered(
        vault: Path, tmp_path: Path) -> None:
    calls = {"n": 0}

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] > 2 and is_extraction(body):
            return {"status": 500, "text": "overloaded"}
        return rule_responder(body)

    with ChatServer(responder) as server, Knotwork.open(
            vault, db=str(tmp_path / "s.db"), llm_url=server.url, llm_model="m",
            llm_retries=0, llm_concurrency=1) as kw:
        report = kw.extract(vault)
        assert report.stopped == "error" and "HTTP 500" in (report.error or "")
        assert report.sent == 2 and report.documents_pending >= 1
        server.responder = rule_responder
        again = kw.extract(vault)
    assert again.stopped is None and again.cached == 2 and again.sent == again.chunks - 2


def test_parse_triples_accepts_common_shapes() -> None:
    one = {"subject": "a", "predicate": "p", "object": "b"}
    for text in (json.dumps({"triples": [one]}), json.dumps([one]), json.dumps(one),
                 "Here:\n" + json.dumps([one]) + "\nDone.", '{"triples": [{"subject": "a",'
                 ' "predicate": "p", "object": "b",},]}'):
        parsed = parse_triples(text)
        assert parsed is not None and [t.subject for t in parsed[0]] == ["a"], text
    assert parse_triples("no json here") is None
    assert parse_triples('{"triples": "nope"}') is None


def test_a_note_edited_during_a_run_waits_for_the_next(vault: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    note = vault / "services/Kestrel Queue.md"
    edited: list[bool] = []

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        if not edited and "Postgres" in passage(body):  # another process syncs an edit
            edited.append(True)
            note.write_text(note.read_text().replace("Heliograph", "Sparrow"))
            with Knotwork.open(vault, db=db) as other:
                other.ingest(vault)
        return rule_responder(body)

    with ChatServer(responder) as server, Knotwork.open(
            vault, db=db, llm_url=server.url, llm_model="m", llm_concurrency=1) as kw:
        kw.ingest(vault)
        first = kw.extract()  # no path: the store as it is, no sync
        assert (first.documents_applied, first.documents_pending) == (2, 1)
        assert extracted(kw, "Kestrel Queue") == {}
        second = kw.extract()
        assert second.sent == 1 and second.documents_pending == 0
        assert set(extracted(kw, "Kestrel Queue")) == {
            ("uses", "Postgres"), ("runs_on", "Kota"), ("replaces", "Sparrow")}
