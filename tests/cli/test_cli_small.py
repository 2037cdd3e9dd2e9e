"""Small things a user noticed in the CLI: stats summarises, search groups and falls back."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from knotwork.cli.main import app

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
