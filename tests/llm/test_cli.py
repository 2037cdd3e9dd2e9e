"""``knotwork extract`` and ``knotwork ask`` through Typer's runner, with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork.cli.main import app

from .chatserver import ChatServer

runner = CliRunner()


@pytest.fixture
def env(server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_LLM_URL", server.url)
    monkeypatch.setenv("KNOTWORK_LLM_MODEL", "test-model")
    monkeypatch.setenv("KNOTWORK_LLM_API_KEY", "sk-cli-SECRET")


def test_extract_then_ask(env: None, vault: Path, tmp_path: Path, server: ChatServer) -> None:
    db = str(tmp_path / "s.db")
    res = runner.invoke(app, ["--db", db, "extract", str(vault), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["facts_added"] == 5 and report["stopped"] is None
    assert (tmp_path / "s.llm-cache.db").is_file()
    res = runner.invoke(app, ["--db", db, "extract", str(vault)])
    assert res.exit_code == 0 and "0 calls" in res.stdout and "6 cached" in res.stdout
    server.script.append({"content": "Traefik runs on Kota [services/Traefik.md:6]."
                          " It has \"a pager\" [services/Traefik.md:6]."})
    res = runner.invoke(app, ["--db", db, "ask", "where does traefik run?"])
    assert res.exit_code == 0, res.output
    assert "Traefik runs on Kota" in res.stdout
    assert "flagged" in res.stderr and "a pager" in res.stderr
    assert "sk-cli-SECRET" not in res.output


def test_budget_stop_says_how_to_resume(env: None, vault: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "extract", str(vault),
                              "--budget", "1500"])
    assert res.exit_code == 0, res.output
    assert "stopped at the budget of 1500 tokens" in res.stdout and "resume" in res.stdout


def test_without_a_model_both_commands_fail_clearly(vault: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    res = runner.invoke(app, ["--db", db, "extract", str(vault)])
    assert res.exit_code == 2 and "KNOTWORK_LLM_URL" in res.stderr
    runner.invoke(app, ["--db", db, "ingest", str(vault), "-q"])
    res = runner.invoke(app, ["--db", db, "ask", "anything"])
    assert res.exit_code == 2 and "KNOTWORK_LLM_URL" in res.stderr
