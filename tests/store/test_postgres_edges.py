"""A link expansion on PostgreSQL reads the edge indexes alone, never a row of ``facts``:
each index carries every column the expansion reads of a fact (its far end, predicate,
confidence, scope and review state; schema migration 7)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from knotwork import Knotwork
from knotwork.store import open_store

from ..frontends.conftest import write_vault

NOTES = {f"n{i:02d}.md": f"# Note {i}\n\n" + "".join(
    f"- see [[Note {(i + j) % 12}]] and [[Topic {j}]]\n" for j in range(1, 6))
    for i in range(12)}



class _Explained:
    """A reader's connection that keeps the ``EXPLAIN ANALYZE`` (JSON) of each statement
    reading ``facts`` through a ``MEMBERS`` list (an expansion), with the table scans
    turned off, so a plan reads the table only when no index holds what it asks."""

    def __init__(self, con: Any) -> None:
        self.con = con
        self.plans: list[dict[str, Any]] = []

    def execute(self, sql: str, args: Sequence[object] | None = ()) -> Any:
        if "FROM facts f JOIN m" in sql and args:
            self.con.execute("SET LOCAL enable_seqscan = off", None)
            self.con.execute("SET LOCAL enable_bitmapscan = off", None)
            raw: psycopg.Connection[Any] = self.con.pinned
            body = sql.replace("%", "%%").replace("?", "%s")
            with psycopg.ClientCursor(raw) as cur:
                cur.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {body}", args)
                self.plans.append(cur.fetchone()[0][0]["Plan"])  # type: ignore[index]
        return self.con.execute(sql, args)


def _fact_scans(node: dict[str, Any]) -> list[str]:
    own = [node["Node Type"]] if node.get("Relation Name") == "facts" else []
    return own + [t for child in node.get("Plans", []) for t in _fact_scans(child)]


def test_an_expansion_reads_the_edge_indexes_alone(tmp_path: Path, url: str) -> None:
    vault = write_vault(tmp_path / "v", NOTES)
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        kw.ingest()
    with psycopg.connect(url, autocommit=True) as con:  # (as autovacuum would, by now)
        con.execute("VACUUM (ANALYZE) facts")
    store = open_store(url)
    try:
        with psycopg.connect(url) as con:
            ids = [int(r[0]) for r in con.execute(
                "SELECT DISTINCT subject_id FROM facts WHERE object_id IS NOT NULL"
                " AND retracted_at IS NULL ORDER BY 1 LIMIT 4")]
        assert ids
        spy = _Explained(store.reader.con)  # type: ignore[attr-defined]
        reader = type(store.reader)(spy)  # type: ignore[call-arg]
        with store.snapshot():
            edges = reader.edges(ids)
        with store.snapshot():
            plain = store.reader.edges(ids)
    finally:
        store.close()
    assert edges == plain and len(edges) >= len(ids)
    [plan] = spy.plans
    scans = _fact_scans(plan)
    assert scans and set(scans) == {"Index Only Scan"}, scans
