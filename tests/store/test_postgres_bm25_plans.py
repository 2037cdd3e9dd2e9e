"""A two-word AND search on PostgreSQL never probes one common word's postings for each
posting of the other, whatever plan the server keeps for the statement: once psycopg
prepares it (its fifth run on a connection) the server may keep a generic plan, which
guesses every word holds a few hundred postings. The postings of a word far rarer than
the other are probed, each once (``text._both``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest

from knotwork.store import Store, TextQuery

from ..store_contract.drafts import doc


class _Generic:
    """A reader's connection that runs each statement of two parameters and more as a
    prepared statement on a generic plan, keeping its ``EXPLAIN ANALYZE`` (JSON)."""

    def __init__(self, store: Store) -> None:
        self.con: Any = store.reader.con  # type: ignore[attr-defined]
        self.plans: list[dict[str, Any]] = []

    def execute(self, sql: str, args: Sequence[object] | None = ()) -> Any:
        if "chunk_postings" in sql and args:
            n = iter(range(1, 1000))
            body = re.sub(r"\?", lambda _: f"${next(n)}", sql.replace("%", "%%"))
            self.con.execute("SET LOCAL plan_cache_mode = force_generic_plan", None)
            self.con.execute(f"PREPARE kw_and AS {body}", None)
            marks = ", ".join(["%s"] * len(args))
            raw: psycopg.Connection[Any] = self.con.pinned
            with psycopg.ClientCursor(raw) as cur:
                cur.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE kw_and({marks})", args)
                self.plans.append(cur.fetchone()[0][0]["Plan"])  # type: ignore[index]
            self.con.execute("DEALLOCATE kw_and", None)
        return self.con.execute(sql, args)


def _probes(node: dict[str, Any]) -> int:
    """How many times the plan under ``node`` looked a chunk's posting up by its id."""
    own = node.get("Actual Loops", 0) if "chunk_id =" in node.get("Index Cond", "") else 0
    return own + sum(_probes(child) for child in node.get("Plans", []))


@pytest.mark.parametrize(("rare", "probed"), [(24, False), (2, True)])
def test_two_common_words_are_joined_whole_and_a_rare_one_probes_the_other(
        store: Store, rare: int, probed: bool) -> None:
    with store.write(actor="test") as w:
        for i in range(48):
            words = (["kestrel"] if i < rare else []) + (["queue"] if i % 2 == 0 else [])
            w.apply("default", doc(f"n{i}.md", [], body=" ".join(words + ["filler"])))
    spy = _Generic(store)
    reader = type(store.reader)(spy)  # type: ignore[call-arg]
    with store.snapshot():
        hits = reader.search_chunks(TextQuery(("kestrel", "queue"), "all"), limit=40)
        [(_, held)] = reader.term_frequencies(["kestrel"])
    assert len(hits) == (12 if rare == 24 else 1)
    [plan] = spy.plans
    # (none at all for two alike words; for the rare word, one probe of each of its rows)
    assert _probes(plan) == (held if probed else 0), plan
