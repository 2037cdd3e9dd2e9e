"""The as-of property over history: deleted notes, past prose and names as of then.

After any sequence of creates, edits, deletes and alias changes, ``context(q, as_of=t)``
answers what the same store answered at ``t`` (the store stopped at ``t``: it held only
the operations up to ``t``, so it *is* a store built from them, ids included).

What is compared (``_view``): each entity's iri, label, types and relevance, its facts and
incoming facts (predicate, value, value type, trust, review, and the citation: path, line
span, chunk, version, supporting text), and the evidence (chunk, path, heading, line span,
text). What is not: scores and the order they give (BM25's statistics as of ``t`` are
approximated by today's), the ``why`` of each score, the token count, and a fact's
record/retraction times (an as-of answer shows a retraction after ``t`` as not yet
happened, as the store then did; ``_as_of`` in the readers).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork import Knotwork

from ..store_contract import pg
from .test_as_of import replay

NAMES = ("Traefik", "Grafana", "kota")
# front matter: the same number of lines in each, so a kept fact's citation stays put
FRONTS = ("type: service\nruns_on: \"[[kota]]\"\nport: 443\n",
          "type: service\nport: 8443\nteam: edge\n",
          "status: up\nowner: \"[[Dash]]\"\nruns_on: \"[[Grafana]]\"\n")
# prose under its own heading: the link's chunk is the same in every version
PROSE = ("The quokka ledger sits here.", "Zeppelin mooring notes live here.",
         "Nothing of note yet, just plain words.")
ALIASES = ("aliases: []\n", "aliases: [Dash]\n")
QUERIES = ("traefik", "kota", "grafana", "quokka ledger", "zeppelin", "dash", "edge proxy")


def _body(name: str, front: int, prose: int, alias: int) -> str:
    return (f"---\n{FRONTS[front]}{ALIASES[alias]}---\n# {name}\n\n"
            "The edge proxy; it routes to [[Grafana]] and [[Dash]].\n\n"
            f"## Notes\n\n{PROSE[prose]}\n")


edit = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.integers(0, len(FRONTS) - 1),
              st.integers(0, len(PROSE) - 1), st.integers(0, 1)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just(0), st.just(0), st.just(0)),
)


def _apply(kw: Knotwork, vault: Path, op: tuple[str, str, int, int, int]) -> None:
    kind, name, front, prose, alias = op
    path = vault / f"{name}.md"
    if kind == "write":
        path.write_text(_body(name, front, prose, alias), encoding="utf-8")
    elif path.exists():
        path.unlink()
    kw.ingest(only=[f"{name}.md"])


def _fact(f: dict[str, Any]) -> tuple[object, ...]:
    return tuple(sorted((k, repr(v)) for k, v in f.items()
                        if k not in ("recorded_at", "retracted_at", "retract_reason")))


def _view(ctx: dict[str, Any]) -> dict[str, object]:
    return {
        "entities": sorted(
            (e["iri"], e["label"], tuple(e["types"]), e["relevance"],
             tuple(sorted(_fact(f) for f in e["facts"])),
             tuple(sorted(_fact(f) for f in e.get("incoming", ()))))
            for e in ctx["entities"]),
        "evidence": sorted(tuple(sorted((k, repr(v)) for k, v in ev.items() if k != "score"))
                           for ev in ctx["evidence"]),
    }


def _answers(kw: Knotwork, as_of: str | None) -> list[dict[str, object]]:
    return [_view(kw.context(q, max_tokens=0, as_of=as_of).as_dict()) for q in QUERIES]


def _run(ops: list[tuple[str, str, int, int, int]], tmp: str, db: str) -> None:
    vault = Path(tmp) / "v"
    vault.mkdir()
    for name in NAMES:
        (vault / f"{name}.md").write_text(_body(name, 0, 0, 0), encoding="utf-8")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
        replay([lambda op=op: _apply(kw, vault, op) for op in ops],
               lambda t: _answers(kw, t))


OPS = st.lists(edit, min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_context_as_of_equals_the_store_stopped_then(
        ops: list[tuple[str, str, int, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _run(ops, tmp, str(Path(tmp) / "s.db"))


@pytest.fixture(scope="module")
def pg_server() -> str:
    return pg.server_url()


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(OPS)
def test_context_as_of_equals_the_store_stopped_then_postgresql(
        pg_server: str, ops: list[tuple[str, str, int, int, int]]) -> None:
    url = pg.fresh_url()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            _run(ops, tmp, url)
    finally:
        pg.drop(url)
