"""The README's quick start prints what the commands print: its numbers come from a run.

A fresh copy of ``examples/vault``, the commands the README shows (with the bundled
model, as a user runs them), and each printed line compared with the README's: counts,
fact and token totals, and the fact ids of the edit example. Timestamps are left out.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
runner = CliRunner()


def _after(command: str, lines: int = 1) -> list[str]:
    """The ``lines`` the README prints after ``$ <command>``."""
    at = README.index(f"$ {command}\n") + len(f"$ {command}\n")
    return README[at:].splitlines()[:lines]


def _run(db: Path, *args: str) -> list[str]:
    res = runner.invoke(app, ["--db", str(db), *args])
    assert res.exit_code == 0, res.output
    return res.stdout.splitlines()


def _untimed(line: str) -> str:
    line = re.sub(r" in [\d.]+ s$", " in <seconds> s", line)  # how long embedding took
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<time>", line)


def test_the_quick_starts_numbers_are_what_the_commands_print(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNOTWORK_EMBEDDER")  # the README's runs embed with the default model
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # built from the bundled
    vault = shutil.copytree(ROOT / "examples" / "vault", tmp_path / "vault",
                            ignore=shutil.ignore_patterns(".knotwork"))
    db = tmp_path / "s.db"
    # what it synced, then what it embedded (the chunks, the model; not how long)
    assert [_untimed(x) for x in _run(db, "ingest", str(vault))] == [
        _untimed(x) for x in _after("knotwork ingest examples/vault", 2)]
    for question, budget in (("traefik", "700"), ('"who runs the message queue"', "500")):
        printed = _run(db, "context", question.strip('"'), "--max-tokens", budget)
        assert printed[:2] == _after(f"knotwork context {question} --max-tokens {budget}", 2)

    # the edit example: a second vault, one line changed, the port fact's history
    edited = shutil.copytree(vault, tmp_path / "edited",
                             ignore=shutil.ignore_patterns(".knotwork"))
    db2 = tmp_path / "e.db"
    _run(db2, "ingest", str(edited), "-q")
    note = edited / "services" / "Traefik.md"
    note.write_text(note.read_text(encoding="utf-8").replace("port: 443", "port: 8443"),
                    encoding="utf-8")
    assert _run(db2, "ingest", str(edited)) == _after("knotwork ingest /tmp/vault")
    history = [line for line in _run(db2, "facts", "Traefik", "--history") if "port" in line]
    shown = _after("knotwork facts Traefik --history | grep port", 2)
    assert [_untimed(x) for x in history] == [_untimed(x) for x in shown]
