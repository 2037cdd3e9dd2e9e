"""Small things a user noticed in the CLI: stats summarises, search groups and falls back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app
from tests.reliability.helpers import make_vault

runner = CliRunner()


def test_stats_summarises_ambiguous_names(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for folder in ("a", "b", "c", "d"):
        (vault / folder).mkdir(parents=True)
        for i in range(15):  # 15 names each claimed by 4 notes
            (vault / folder / f"n{i}.md").write_text(f"Note {i} of {folder}.\n")
    db = str(tmp_path / "s.db")
    assert runner.invoke(app, ["--db", db, "ingest", str(vault), "-q", "--no-embed"]).exit_code == 0
    res = runner.invoke(app, ["--db", db, "stats"])
    lines = [line for line in res.stdout.splitlines() if line.startswith("ambiguous name ")]
    assert len(lines) == 10 and all("(+1 more)" in line for line in lines)
    assert "… and 5 more ambiguous names (--json lists them all)" in res.stdout


def test_hybrid_search_without_vectors_says_it_searched_text(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "q.md").write_text("# Q\n\nThe queue.\n")
    db = str(tmp_path / "s.db")
    assert runner.invoke(app, ["--db", db, "ingest", str(vault), "-q", "--no-embed"]).exit_code == 0
    res = runner.invoke(app, ["--db", db, "search", "queue", "--mode", "hybrid"])
    assert res.exit_code == 0 and "q.md" in res.stdout
    assert "no chunk vectors: searched the full text only" in res.stderr


def test_an_ingest_stopped_while_embedding_says_what_it_kept(tmp_path: Path,
                                                               monkeypatch: Any) -> None:
    # Ctrl-C (or SIGTERM) during a long first index used to end with exit 130 and not a
    # word: whether the notes and the vectors made so far were kept, and how to go on.
    vault = make_vault(tmp_path / "my vault", 40)
    db = str(tmp_path / "s.db")
    environ = {"KNOTWORK_EMBEDDER": "hash"}
    real = Knotwork.embed

    def stopped_after_one_batch(self: Knotwork, *, progress: Any = None, **kw: Any) -> Any:
        def report(done: int, total: int) -> None:
            if progress is not None:
                progress(done, total)
            raise KeyboardInterrupt  # as the signal handler raises it, between batches

        return real(self, progress=report, **kw)

    monkeypatch.setattr(Knotwork, "embed", stopped_after_one_batch)
    res = runner.invoke(app, ["--db", db, "ingest", str(vault)], env=environ)
    assert res.exit_code == 130, res.output
    with sqlite3.connect(db) as con:
        live, embedded = con.execute(
            "SELECT COUNT(*), SUM(embedded) FROM chunks WHERE live = 1").fetchone()
    assert 0 < embedded < live  # one batch written, whole
    said = " ".join(res.stderr.split())
    assert (f"stopped while embedding: the text index is complete and answers now; {embedded:,} of"
            f" {live:,} chunks have vectors, kept. `knotwork ingest '{vault}'` embeds the"
            " rest.") in said, said

    monkeypatch.setattr(Knotwork, "embed", real)
    again = runner.invoke(app, ["--db", db, "ingest", str(vault)], env=environ)
    assert again.exit_code == 0, again.output
    # the notes were all applied before; the chunks left without a vector are embedded now
    assert "· unchanged 45 ·" in again.stdout, again.stdout
    assert f"embedded {live - embedded} chunks with hash in " in again.stdout, again.stdout
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM chunks WHERE live = 1 AND embedded = 0"
                           ).fetchone()[0] == 0
    done = runner.invoke(app, ["--db", db, "ingest", str(vault), "--json"], env=environ)
    assert json.loads(done.stdout)["unchanged"] == 45 and "embedded" not in done.stdout


def test_an_ingest_stopped_before_embedding_says_it_goes_on(tmp_path: Path,
                                                            monkeypatch: Any) -> None:
    vault = make_vault(tmp_path / "v", 10)

    def stopped(self: Knotwork, *args: Any, **kw: Any) -> Any:
        kw["progress"](3, 15)
        raise KeyboardInterrupt

    monkeypatch.setattr(Knotwork, "ingest", stopped)
    res = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "ingest", str(vault)])
    assert res.exit_code == 130
    assert ("stopped: what was written is kept and consistent;"
            f" `knotwork ingest {vault}` goes on from there.") in " ".join(res.stderr.split())
    quiet = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "ingest", str(vault), "-q"])
    assert quiet.exit_code == 130 and quiet.stderr == ""
