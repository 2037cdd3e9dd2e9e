"""Cited answers through a scripted chat server: refusal, grounding prompt, verification."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import ConfigError
from knotwork.llm import REFUSAL
from knotwork.llm.answer import verify

from .chatserver import ChatServer


def test_empty_context_is_refused_without_a_call(kw: Knotwork, server: ChatServer) -> None:
    kw.ingest()
    answer = kw.ask("zebra xylophone quartz")
    assert answer.refused and answer.answer == REFUSAL and answer.model is None
    assert server.requests == []


def test_the_prompt_holds_only_the_context_and_the_rules(kw: Knotwork,
                                                         server: ChatServer) -> None:
    kw.ingest()
    server.script.append({"content": "Kestrel Queue runs on Kota"
                          " [services/Kestrel Queue.md:10]."})
    answer = kw.ask("where does kestrel queue run?", max_tokens=800)
    [request] = server.requests
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "ONLY the context" in system and REFUSAL in system and "[path:line]" in system
    assert "Kestrel Queue" in user and user.endswith("Question: where does kestrel queue run?")
    assert "response_format" not in request
    assert not answer.refused and answer.flagged == 0 and not answer.uncited
    [c] = answer.citations
    assert (c.path, c.line_start, c.ok) == ("services/Kestrel Queue.md", 10, True)
    assert 0 < answer.context_tokens <= 800 and answer.prompt_tokens > 0


def test_the_models_refusal_is_recognised(kw: Knotwork, server: ChatServer) -> None:
    kw.ingest()
    server.script.append({"content": f" {REFUSAL}\n"})
    answer = kw.ask("what does kestrel queue cost per month?")
    assert answer.refused and answer.citations == () and not answer.uncited


def test_citations_that_do_not_hold_are_flagged(kw: Knotwork, server: ChatServer) -> None:
    kw.ingest()
    server.script.append({"content": (
        'It "runs on Kota" [services/Kestrel Queue.md:10]. It "uses MySQL"'
        ' [services/Kestrel Queue.md:6]. It has a pager [services/Kestrel Queue.md:90].'
        ' Dana wrote it [people/Nobody.md:2]. Traefik terminates TLS'
        ' [services/Traefik.md:6; services/Traefik.md:3-7].')})
    answer = kw.ask("tell me about kestrel queue")
    problems = {c.text: c.problem for c in answer.citations}
    assert problems["services/Kestrel Queue.md:10"] is None
    assert "quoted words 'uses MySQL'" in (problems["services/Kestrel Queue.md:6"] or "")
    assert "past the end" in (problems["services/Kestrel Queue.md:90"] or "")
    assert problems["people/Nobody.md:2"] == "no such document"
    assert problems["services/Traefik.md:6"] is None
    assert problems["services/Traefik.md:3-7"] is None
    assert answer.flagged == 3


def test_an_uncited_answer_is_flagged(kw: Knotwork, server: ChatServer) -> None:
    kw.ingest()
    server.script.append({"content": "Kestrel Queue runs on Kota."})
    answer = kw.ask("where does kestrel queue run?")
    assert answer.uncited and answer.as_dict()["uncited"] is True


def test_ask_without_a_model_is_a_config_error(vault: Path, tmp_path: Path) -> None:
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        assert not kw.llm_configured()
        with pytest.raises(ConfigError, match="KNOTWORK_LLM_URL"):
            kw.ask("anything")
        with pytest.raises(ConfigError):
            kw.extract()


def test_verify_reads_citation_forms() -> None:
    docs = {"a b/c.md": "one\ntwo words here\nthree"}
    found = verify('See [a b/c.md:2] and "two words" [a b/c.md:1-2], not [x.md:1].',
                   lambda paths: {p: docs[p] for p in paths if p in docs})
    assert [(c.path, c.line_start, c.line_end, c.ok) for c in found] == [
        ("a b/c.md", 2, 2, True), ("a b/c.md", 1, 2, True), ("x.md", 1, 1, False)]
    assert found[1].quoted == ("two words",)
