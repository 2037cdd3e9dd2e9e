"""The review queue through the facade and the CLI, on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app
from knotwork.errors import Conflict, InvalidQuery, NotFound

NOTE = "---\ntype: service\nport: 443\n---\n# Traefik\n\nThe edge proxy.\n"


@pytest.fixture
def kw(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "Traefik.md").write_text(NOTE, encoding="utf-8")
    with Knotwork.open(tmp_path / "v", db=str(tmp_path / "s.db"), embedder="none") as k:
        k.ingest()
        yield k


def test_asserted_facts_are_queued_and_decided(kw: Knotwork) -> None:
    a = kw.assert_fact("Traefik", "color", "blue", supporting_text="the logo is blue")
    b = kw.assert_fact("Traefik", "port", "8080")
    assert a.review == b.review == "unreviewed"
    page = kw.review_queue()
    assert [f.id for f in page.facts] == [a.id, b.id] and page.total == 2
    assert page.facts[0].source and page.facts[0].source.supporting_text == "the logo is blue"
    done = kw.review("reject", [b.id], reason="we moved off 8080", reviewer="dana")
    assert done.fact_ids == (b.id,) and done.reviewer == "dana"
    # rejected: gone from facts, entity, context; history and --trust rejected keep it
    assert b.id not in {f.id for f in kw.facts("Traefik")}
    assert b.id not in {f.id for f in kw.entity("Traefik").facts}
    ctx = kw.context("traefik", max_tokens=0).as_dict()
    assert "8080" not in json.dumps(ctx)
    assert b.id in {f.id for f in kw.facts("Traefik", trusts=["rejected"])}
    assert b.id in {f.id for f in kw.history("Traefik").facts}
    [ev] = [e for e in kw.history("Traefik").events if e["action"] == "review"]
    assert ev["actor"] == "dana" and ev["reason"] == "we moved off 8080"
    # --trust stated,approved: the note's facts, then the approved one too
    assert {f.trust for f in kw.facts("Traefik", trusts=["stated", "approved"])} == {"stated"}
    kw.review("approve", status=["unreviewed"], predicate="color")
    kept = kw.facts("Traefik", trusts=["stated", "approved"])
    assert a.id in {f.id for f in kept}
    assert kw.review_queue().total == 0


def test_approval_survives_reingest_and_bad_requests_are_refused(kw: Knotwork) -> None:
    [port] = [f for f in kw.facts("Traefik") if f.predicate == "port"]
    kw.review("reject", [port.id], reason="stale")
    kw.ingest(force=True)  # read again: the statement is the same fact
    assert port.id in {f.id for f in kw.facts("Traefik", trusts=["rejected"])}
    with pytest.raises(NotFound):
        kw.review("approve", [999_999])
    with pytest.raises(InvalidQuery):
        kw.review("maybe", [port.id])
    with pytest.raises(InvalidQuery):
        kw.facts("Traefik", trusts=["trusted"])
    f = kw.assert_fact("Traefik", "x", "y")
    kw.retract_fact(f.id, reason="oops")
    with pytest.raises(Conflict):
        kw.review("approve", [f.id])


def test_cli_review_list_approve_reject(kw: Knotwork, tmp_path: Path) -> None:
    a = kw.assert_fact("Traefik", "color", "blue")
    b = kw.assert_fact("Traefik", "tier", "gold")
    runner = CliRunner()
    db = ["--db", str(tmp_path / "s.db")]
    r = runner.invoke(app, [*db, "review"])
    assert r.exit_code == 0 and "color" in r.output and "2 of 2" in r.output
    r = runner.invoke(app, [*db, "review", "approve", str(a.id), "--reason", "seen it"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [*db, "review", "reject"])
    assert r.exit_code == 2  # neither ids nor --all-matching
    r = runner.invoke(app, [*db, "review", "reject", "--all-matching", "--json"])
    assert json.loads(r.output)["fact_ids"] == [b.id]
    r = runner.invoke(app, [*db, "review", "--status", "rejected,approved", "--trust",
                            "asserted", "--json"])
    assert {f["id"]: f["review"] for f in json.loads(r.output)["facts"]} == {
        a.id: "approved", b.id: "rejected"}
    r = runner.invoke(app, [*db, "context", "traefik", "--trust", "asserted", "--json"])
    facts = json.loads(r.output)["entities"][0]["facts"]
    assert [f["id"] for f in facts] == [a.id]
    r = runner.invoke(app, [*db, "history", "Traefik"])
    assert r.exit_code == 0 and "review" in r.output and "tier" in r.output


def test_an_agent_documents_facts_keep_their_review_when_it_is_sent_again(kw: Knotwork
                                                                          ) -> None:
    text = "Heliograph runs on kota. Dana owns Heliograph."
    ents = [{"name": "Heliograph"}, {"name": "kota"}, {"name": "Dana"}]
    rels = [{"source": "Heliograph", "target": "kota", "type": "runs_on", "confidence": 0.9,
             "supporting_text": "Heliograph runs on kota."}]
    kw.ingest_document("chat-1", "Chat", "chat", text, entities=ents, relations=rels)
    [runs] = [f for f in kw.facts("Heliograph") if f.predicate == "runs_on"]
    assert runs.trust == "asserted" and runs.review == "unreviewed"
    kw.review("approve", [runs.id], reason="checked")
    again = kw.ingest_document("chat-1", "Chat", "chat", text, entities=ents, relations=rels)
    assert again.status == "unchanged"
    more = [*rels, {"source": "Dana", "target": "Heliograph", "type": "owns",
                    "confidence": 0.9, "supporting_text": "Dana owns Heliograph."}]
    kw.ingest_document("chat-1", "Chat", "chat", text + " ", entities=ents, relations=more)
    [kept] = [f for f in kw.facts("Heliograph") if f.predicate == "runs_on"]
    assert kept.id == runs.id and kept.review == "approved"
