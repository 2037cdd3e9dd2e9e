"""Agent-driven ingest: the Mini Context Graph contract, with every drop reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knotwork import InvalidQuery, Knotwork
from knotwork.errors import Conflict

RAW = ("# Incident 42\n\nSystem crashes due to memory leaks.\n\n"
       "Memory leaks occur when objects are not released.\n")
ENTITIES = [
    {"name": "memory leak", "type": "bug", "supporting_text": "memory leaks"},
    {"name": "system crash", "type": "Incident", "supporting_text": "System crashes"},
]


@pytest.fixture
def kw(tmp_path: Path):  # type: ignore[no-untyped-def]
    k = Knotwork.open(db=str(tmp_path / "s.db"), actor="agent:test")
    yield k
    k.close()


def test_facts_link_to_the_line_of_their_supporting_text(kw: Knotwork) -> None:
    out = kw.ingest_document("incident-42", "Incident 42", "reports/42.md", RAW,
                             entities=ENTITIES, relations=[
                                 {"source": "memory leak", "target": "system crash",
                                  "type": "Causes", "confidence": 0.9,
                                  "supporting_text": "system crashes due to memory leaks."}])
    assert out["dropped"] == [] and out["chunk_count"] == 1 and out["edges_added"] == 1
    [causes] = [f for f in kw.facts("memory leak") if f.predicate == "causes"]
    assert causes.value_label == "system crash" and causes.confidence == 0.9
    assert causes.trust == "asserted" and causes.actor == "agent:test"
    assert causes.source is not None and causes.source.line_start == 3  # case-insensitive hit
    assert causes.source.path == "incident-42"
    types = {f.value for f in kw.facts("memory leak") if f.predicate == "type"}
    assert types == {"issue"}  # "bug" normalised through the type table


def test_drops_are_reported_with_reasons(kw: Knotwork) -> None:
    out = kw.ingest_document("d1", "t", "", RAW, entities=ENTITIES, relations=[
        {"source": "memory leak", "target": "system crash", "type": "causes",
         "confidence": 0.4, "supporting_text": "System crashes due to memory leaks."},
        {"source": "memory leak", "target": "garbage collector", "type": "fixed_by",
         "confidence": 0.9, "supporting_text": "objects are not released"},
        {"source": "memory leak", "target": "system crash", "type": "causes",
         "confidence": 0.9, "supporting_text": "a sentence that is not in the text at all"},
    ])
    reasons = [d["reason"] for d in out["dropped"]]
    assert "below the minimum 0.6" in reasons[0]
    assert "unknown endpoint 'garbage collector'" in reasons[1]
    assert "does not occur" in reasons[2]
    assert out["edges_added"] == 0
    assert not [f for f in kw.facts("memory leak") if f.predicate in ("causes", "fixed_by")]


def test_an_endpoint_already_in_the_graph_is_accepted(kw: Knotwork) -> None:
    kw.ingest_document("a", "A", "", RAW, entities=ENTITIES)
    out = kw.ingest_document("b", "B", "", "The system crash was bad.\n", entities=[],
                             relations=[{"source": "system crash", "target": "memory leak",
                                         "type": "caused by", "confidence": 0.8,
                                         "supporting_text": "The system crash was bad."}])
    assert out["dropped"] == []
    assert [f.predicate for f in kw.facts("system crash") if f.value_type == "Entity"] == [
        "caused_by"]


def test_resend_retracts_what_disappeared(kw: Knotwork) -> None:
    rel = {"source": "memory leak", "target": "system crash", "type": "causes",
           "confidence": 0.9, "supporting_text": "System crashes due to memory leaks."}
    kw.ingest_document("d", "t", "", RAW, entities=ENTITIES, relations=[rel])
    same = kw.ingest_document("d", "t", "", RAW, entities=ENTITIES, relations=[rel])
    assert same["status"] == "unchanged"
    new_raw = RAW.replace("System crashes due to memory leaks.", "Crashes stopped.")
    out = kw.ingest_document("d", "t", "", new_raw, entities=[ENTITIES[0]], relations=[])
    assert out["status"] == "updated" and out["facts_retracted"] >= 2
    assert not [f for f in kw.facts("memory leak") if f.predicate == "causes"]
    hist = [f for f in kw.facts("memory leak", history=True) if f.predicate == "causes"]
    assert hist and hist[0].retracted_at is not None


def test_resend_of_the_same_text_with_less_asserted_retracts_it(kw: Knotwork) -> None:
    rel = {"source": "memory leak", "target": "system crash", "type": "causes",
           "confidence": 0.9, "supporting_text": "System crashes due to memory leaks."}
    kw.ingest_document("d", "t", "", RAW, entities=ENTITIES, relations=[rel])
    out = kw.ingest_document("d", "t", "", RAW, entities=ENTITIES, relations=[])
    assert out["status"] == "updated" and out["facts_retracted"] == 1
    assert not [f for f in kw.facts("memory leak") if f.predicate == "causes"]
    renamed = kw.ingest_document("d", "New title", "", RAW, entities=ENTITIES, relations=[])
    assert renamed["status"] == "updated" and kw.entity("d").entity.label == "New title"
    again = kw.ingest_document("d", "New title", "", RAW, entities=ENTITIES, relations=[])
    assert again["status"] == "unchanged"


def test_an_agent_document_cannot_take_over_a_vault_note(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "services").mkdir(parents=True)
    (vault / "services" / "Traefik.md").write_text("# Traefik\n\nruns_on:: [[kota]]\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as k:
        k.ingest()
        for doc_id in ("services/Traefik.md", "services/Traefik"):
            with pytest.raises(Conflict, match="services/Traefik"):
                k.ingest_document(doc_id, "Hijack", "", "Traefik is owned by Mallory.")
        assert k.entity("Traefik").entity.label == "Traefik"
        # (and part_of its folder's name: services/ has no page)
        assert sorted(f.predicate for f in k.facts("Traefik")) == ["part_of", "runs_on"]
        # the other way round: a vault file arriving where an agent's document lives is
        # reported for that file, and the rest of the sync goes on
        k.ingest_document("notes/plan", "Plan", "", "The plan.")
        (vault / "notes").mkdir()
        (vault / "notes" / "plan.md").write_text("# Plan file\n")
        (vault / "other.md").write_text("# Other\n")
        report = k.ingest()
        assert [e.path for e in report.errors] == ["notes/plan.md"]
        assert "agent's document" in report.errors[0].reason
        assert k.entity("Other").entity.label == "Other"
        assert k.entity("notes/plan").entity.label == "Plan"


def test_bad_payloads_are_refused(kw: Knotwork) -> None:
    with pytest.raises(InvalidQuery, match="raw_content is empty"):
        kw.ingest_document("x", "t", "", "   ")
    with pytest.raises(InvalidQuery, match="doc_id"):
        kw.ingest_document("../escape", "t", "", RAW)


def test_ontology_file_extends_the_tables(tmp_path: Path) -> None:
    onto = tmp_path / "onto.json"
    onto.write_text(json.dumps({"types": {"leak": "defect"}, "relations": {"causes": "leads_to"}}),
                    encoding="utf-8")
    with Knotwork.open(db=str(tmp_path / "o.db"), ontology=str(onto)) as k:
        k.ingest_document("d", "t", "", RAW, entities=[{**ENTITIES[0], "type": "Leak"},
                                                       ENTITIES[1]],
                          relations=[{"source": "memory leak", "target": "system crash",
                                      "type": "causes", "confidence": 1.0,
                                      "supporting_text": "System crashes due to memory leaks."}])
        preds = {(f.predicate, f.value_label or f.value) for f in k.facts("memory leak")}
        assert ("type", "defect") in preds and ("leads_to", "system crash") in preds


def test_assert_and_retract_through_the_facade(kw: Knotwork) -> None:
    f = kw.assert_fact("Traefik", "Runs On", "kota", value_type="Entity", confidence=0.9,
                       supporting_text="seen in the dashboard", reason="observed")
    assert f.predicate == "runs_on" and f.trust == "asserted" and f.retracted_at is None
    gone = kw.retract_fact(f.id, reason="moved to vega")
    assert gone.retracted_at is not None
    with pytest.raises(Exception, match="already retracted"):
        kw.retract_fact(f.id, reason="again")


def test_history_pages_carry_every_event_of_their_facts(kw: Knotwork) -> None:
    # 520 events in all: a cap on the whole history's events used to cut off the oldest,
    # so the first page's facts came without their assertion
    ids = [kw.assert_fact("Busy", f"p{i}", "v").id for i in range(260)]
    for fid in ids:
        kw.retract_fact(fid, reason="cleanup")
    page = kw.history("Busy", offset=0, limit=50)
    assert page["total_facts"] == 260 and page["next_offset"] == 50
    facts = page["facts"]
    assert isinstance(facts, list) and len(facts) == 50
    events = page["events"]
    assert isinstance(events, list)
    for f in facts:
        kinds = sorted(str(e["action"]) for e in events if e["fact_id"] == f["id"])
        assert len(kinds) == 2, (f["id"], kinds)
    last = kw.history("Busy", offset=250, limit=50)
    assert last["next_offset"] is None and len(last["facts"]) == 10  # type: ignore[arg-type]


@pytest.mark.parametrize("args,options,message", [
    (("X", "!!!", "v"), {}, "no letter or digit"),
    (("X", "port", "abc"), {"datatype": "integer"}, "not a valid integer"),
    (("X", "born", "soon"), {"datatype": "date"}, "not a valid date"),
    (("X", "p", "v"), {"valid_from": "garbage"}, "valid_from must be an ISO 8601"),
    (("X", "p", "v"), {"valid_from": "2026-02-01", "valid_to": "2026-01-01T00:00:00Z"},
     "is after valid_to"),
])
def test_asserted_facts_are_checked_before_they_are_stored(
        kw: Knotwork, args: tuple[str, str, str], options: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidQuery, match=message):
        kw.assert_fact(*args, **options)  # type: ignore[arg-type]
    assert kw.stats()["facts"] == 0


def test_a_relation_type_with_no_name_is_dropped(kw: Knotwork) -> None:
    out = kw.ingest_document("d", "t", "", RAW, entities=ENTITIES, relations=[
        {"source": "memory leak", "target": "system crash", "type": "!!!",
         "supporting_text": "System crashes due to memory leaks."}])
    assert out["edges_added"] == 0
    assert "no letter or digit" in out["dropped"][0]["reason"]  # type: ignore[index]
