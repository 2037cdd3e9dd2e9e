"""An entity's facts come in the order that answers the question (``retrieve.factrank``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knotwork import Knotwork

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


@pytest.fixture
def edited(tmp_path: Path) -> Knotwork:
    """The example vault after the README's edit of Traefik's port (443 → 8443)."""
    vault = tmp_path / "v"
    shutil.copytree(VAULT, vault)
    kw = Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none")
    kw.ingest()
    note = vault / "services" / "Traefik.md"
    note.write_text(note.read_text().replace("port: 443", "port: 8443"))
    kw.ingest()
    return kw


def test_an_edited_fact_is_not_the_one_the_cap_cuts(edited: Knotwork) -> None:
    with edited as kw:
        [traefik] = kw.context("traefik port", max_entities=1, max_tokens=0).entities
        assert [f.value for f in traefik.facts if f.predicate == "port"] == ["8443"]
        # it answers the question: it comes first
        assert traefik.facts[0].predicate == "port"
        # a question about something else still sees it (newest first among equals)
        [again] = kw.context("traefik", max_entities=1, max_tokens=0).entities
        assert "port" in [f.predicate for f in again.facts]


def test_a_budget_drops_the_least_relevant_facts_first(edited: Knotwork) -> None:
    with edited as kw:
        ctx = kw.context("traefik port", max_tokens=300)
        traefik = next(e for e in ctx.entities if e.label == "Traefik")
        assert ctx.summary.truncated
        assert "port" in [f.predicate for f in traefik.facts]


def test_the_question_s_words_pick_the_facts(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    keys = "\n".join(f"key_{i}: value {i}" for i in range(40))
    (vault / "Box.md").write_text(f"---\n{keys}\nowner: Ada\nregion: north\n---\n# Box\n")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        [box] = kw.context("box region", max_entities=1, max_tokens=0).entities
        assert box.facts[0].predicate == "region" and len(box.facts) == 20
        [box] = kw.context("who is the owner of box", max_entities=1, max_tokens=0).entities
        assert box.facts[0].predicate == "owner"
        [box] = kw.context("box", max_entities=1, max_tokens=0).entities
        assert [f.predicate for f in box.facts[:2]] == ["key_0", "key_1"]  # the note's order


def test_a_typed_record_s_bookkeeping_comes_after_what_it_decided(tmp_path: Path) -> None:
    """An ADR's ``entity_type``/``source_file``/``parser_*`` facts say what its citation and
    types say already: they come last, even for a question that names "adr", so a budget
    cuts them before the decision's status and consequences."""
    docs = tmp_path / "docs" / "adr"
    docs.mkdir(parents=True)
    (docs / "0001-use-kafka.md").write_text(
        "# 1. Use Kafka\n\nDate: 2024-02-01\n\n## Status\n\nAccepted\n\n## Context\n\n"
        "Queues.\n\n## Decision\n\nWe use Kafka.\n\n## Consequences\n\n- More brokers to run.\n",
        encoding="utf-8")
    with Knotwork.open(db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.add_context(tmp_path / "docs", namespace="app")
        [adr] = kw.context("kafka adr", max_entities=1, max_tokens=0,
                           scopes=["app__project_decisions"]).entities
        order = [f.predicate for f in adr.facts]
        tail = {"entity_type", "source_file", "parser_type", "parser_version"}
        assert tail <= set(order), order
        assert set(order[-len(tail):]) == tail, order
        assert order.index("status") < order.index("entity_type")
