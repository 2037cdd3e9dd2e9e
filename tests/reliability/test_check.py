"""``knotwork check``: a healthy store with history passes; each broken invariant is found,
and ``--repair`` rebuilds what is derived from the source of truth.

Before it, the only check at hand was FTS5's ``integrity-check`` at rank 1, which calls a
healthy store with history malformed (past chunks are in the content table, not indexed).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app


def _store(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "v"
    (vault / "hosts").mkdir(parents=True)
    (vault / "hosts" / "kota.md").write_text("---\ntype: host\n---\n# kota\n\nA small server."
                                             " It runs [[Traefik]].\n", encoding="utf-8")
    (vault / "Traefik.md").write_text("# Traefik\n\nThe proxy; it runs on [[kota]].\n\n"
                                      "## Routing\n\nRoutes to [[Grafana]].\n", encoding="utf-8")
    (vault / "Grafana.md").write_text("# Grafana\n\nDashboards, behind Traefik.\n",
                                      encoding="utf-8")
    db = tmp_path / "s.db"
    with Knotwork.open(vault, db=str(db), embedder="hash") as kw:
        kw.ingest()
        (vault / "Traefik.md").write_text("# Traefik\n\nThe edge proxy; it runs on [[kota]].\n",
                                          encoding="utf-8")
        kw.ingest()  # history: the first version's chunks stay, cited, not indexed
    return vault, db


def _check(vault: Path, db: Path, *, repair: bool = False) -> dict[str, object]:
    with Knotwork.open(vault, db=str(db), embedder="hash") as kw:
        return kw.check(repair=repair).as_dict()


def test_a_healthy_store_with_history_passes_where_fts5_rank_1_fails(tmp_path: Path) -> None:
    vault, db = _store(tmp_path)
    report = _check(vault, db)
    assert report["ok"], report["problems"]
    assert report["vectors_compared"] > 0
    con = sqlite3.connect(db)
    with pytest.raises(sqlite3.DatabaseError):  # the misleading check the issue names
        con.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES('integrity-check', 1)")
    con.close()


def _break(db: Path, *sql: str) -> None:
    con = sqlite3.connect(db)
    with con:
        for s in sql:
            con.execute(s)
    con.close()


@pytest.mark.parametrize(("check", "sql"), [
    ("text_index", ["INSERT INTO chunk_fts(chunk_fts, rowid, context, text) SELECT 'delete',"
                    " id, context, text FROM chunks WHERE live = 1 LIMIT 1"]),
    ("text_index", ["INSERT INTO chunk_fts(rowid, context, text) SELECT id, context, text"
                    " FROM chunks WHERE live = 0 LIMIT 1"]),
    ("vector_index", ["INSERT INTO embeddings(text_hash, vector) VALUES('stray', x'00000000')"]),
    ("vector_index", ["DELETE FROM embeddings WHERE text_hash = (SELECT MIN(text_hash)"
                      " FROM embeddings)"]),
    ("mentions", ["INSERT INTO mention_queue(document_id) SELECT id FROM documents LIMIT 1"]),
])
def test_each_broken_derived_index_is_found_and_repaired(tmp_path: Path, check: str,
                                                          sql: list[str]) -> None:
    vault, db = _store(tmp_path)
    _break(db, *sql)
    found = _check(vault, db)
    assert not found["ok"] and {p["check"] for p in found["problems"]} == {check}, found
    fixed = _check(vault, db, repair=True)
    assert fixed["ok"] and fixed["found_before_repair"] >= 1, fixed["problems"]
    assert _check(vault, db)["ok"]


@pytest.mark.parametrize(("check", "sql"), [
    ("citations", ["UPDATE facts SET line_start = 999, line_end = 999 WHERE id = (SELECT"
                   " MIN(id) FROM facts WHERE retracted_at IS NULL AND line_start IS NOT NULL)"]),
    ("citations", ["UPDATE facts SET supporting_text = 'words no note says' WHERE id ="
                   " (SELECT MIN(id) FROM facts WHERE retracted_at IS NULL AND line_start"
                   " IS NOT NULL)"]),
    ("ownership", ["UPDATE documents SET deleted_at = '2026-01-01T00:00:00.000000Z' WHERE"
                   " path = 'Grafana.md'"]),
])
def test_a_broken_source_invariant_is_found_and_not_papered_over(tmp_path: Path, check: str,
                                                                  sql: list[str]) -> None:
    vault, db = _store(tmp_path)
    _break(db, *sql)
    found = _check(vault, db)
    assert check in {p["check"] for p in found["problems"]}, found


def test_the_cli_exits_1_on_a_problem_and_0_after_repair(tmp_path: Path) -> None:
    vault, db = _store(tmp_path)
    runner = CliRunner()
    env = {"KNOTWORK_EMBEDDER": "hash"}
    assert runner.invoke(app, ["--db", str(db), "check"], env=env).exit_code == 0
    _break(db, "INSERT INTO embeddings(text_hash, vector) VALUES('stray', x'00000000')")
    bad = runner.invoke(app, ["--db", str(db), "check", "--json"], env=env)
    assert bad.exit_code == 1 and json.loads(bad.stdout)["problems"][0]["check"] == "vector_index"
    fixed = runner.invoke(app, ["--db", str(db), "check", "--repair"], env=env)
    assert fixed.exit_code == 0 and "repaired" in fixed.stdout
    assert runner.invoke(app, ["--db", str(tmp_path / "none.db"), "check"]).exit_code == 3
