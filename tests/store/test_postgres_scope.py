"""The PostgreSQL schema can be distributed by scope (Citus): every table but the two
reference tables carries ``scope``, and every join of the backend's SQL joins on it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import knotwork.store.postgres as backend

SOURCES = sorted(Path(backend.__file__).parent.glob("*.py"))
# a join of rows that carry no scope: a list given as an array, a row's own lexemes, or
# the vectors (a reference table, on every node), the server's own catalogs, or
# ``terms`` and ``st`` (a query's terms and weights, an array made a table; its one
# row of counts), or ``m`` (an id list made a table: the ids and the entities resolved
# to them, ``reader.MEMBERS``)
UNSCOPED = re.compile(r"^(unnest\(|LATERAL|embeddings\b|pg_|terms\b|st\b|m\b)")
JOIN = re.compile(r"\bJOIN\s+(.+?)(?=\bJOIN\b|\bWHERE\b|\bGROUP\b|\bORDER\b|\bLIMIT\b|\)\s*$|$)",
                  re.S)


def _sql_texts() -> Iterator[tuple[str, str]]:
    """Every string the backend's modules hold (an f-string's holes as ``{}``)."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield path.name, node.value
            elif isinstance(node, ast.JoinedStr):
                yield path.name, "".join(v.value if isinstance(v, ast.Constant) else "{}"
                                         for v in node.values)


def test_every_join_of_the_backend_joins_on_scope() -> None:
    joins = [(name, m.group(1).strip()) for name, sql in _sql_texts()
             for m in JOIN.finditer(sql) if "SELECT" in sql or "UPDATE" in sql
             or sql.lstrip().startswith(("JOIN", " JOIN", "LEFT JOIN"))]
    assert len(joins) > 30  # the reader's, the writer's and the text index's
    bad = [(name, j) for name, j in joins
           if not UNSCOPED.match(j) and "scope" not in j
           and not re.search(r"\bON\b.*\b\w+\.text_hash\b", j)]
    assert not bad, "\n".join(f"{n}: JOIN {j}" for n, j in bad)



def test_every_table_carries_its_scope_but_the_reference_tables(url: str) -> None:
    import psycopg

    from knotwork.store import open_store
    from knotwork.store.postgres.schema import REFERENCE_TABLES, SCOPED_TABLES

    open_store(url).close()  # migrated
    with psycopg.connect(url) as con:
        cols: dict[str, set[str]] = {}
        for table, col in con.execute(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema()"):
            cols.setdefault(table, set()).add(col)
        fks = con.execute("SELECT COUNT(*) FROM information_schema.table_constraints WHERE"
                          " table_schema = current_schema() AND constraint_type = 'FOREIGN KEY'"
                          ).fetchone()
    assert set(cols) == set(SCOPED_TABLES) | set(REFERENCE_TABLES)
    assert [t for t in SCOPED_TABLES if "scope" not in cols[t]] == []
    assert fks == (0,)  # none could cross shards
