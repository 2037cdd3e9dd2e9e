"""Full-text scores per scope, end to end: a token for scope alpha gets, through a real
server, the hits and scores a store of alpha's notes alone gives, and they do not move
while scope beta's notes are edited, deleted and added (so alpha's scores tell nothing of
what beta's notes say, not even how often beta uses alpha's words)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from knotwork import Knotwork

from ..frontends.conftest import (
    child_env,
    free_port,
    knotwork_cmd,
    running,
    wait_served,
    write_vault,
)
from ..store_contract import pg

ALPHA = {"services/Traefik.md": "# Traefik\n\nThe edge proxy routes traffic to [[Grafana]].\n\n"
                                "## Certificates\n\nThe proxy renews its certificates.\n",
         "services/Grafana.md": "# Grafana\n\nDashboards of the proxy traffic.\n",
         "notes/Routing.md": "# Routing\n\nEvery route passes the edge proxy first.\n",
         "notes/Backups.md": "# Backups\n\nNightly backups of the dashboards.\n",
         "notes/Oncall.md": "# Oncall\n\nWho answers the pager, and when.\n",
         "notes/Budget.md": "# Budget\n\nWhat the cluster costs each month.\n",
         **{f"notes/Day{i}.md": f"# Day {i}\n\nA quiet day, number {i}.\n" for i in range(4)}}
BETA = {f"b/n{i}.md": f"# Note {i}\n\n" + "proxy proxy traffic routes certificates " * (i + 1)
        for i in range(5)}
QUERIES = ("proxy", "edge proxy", "traffic certificates", "dashboards routes", "traefik")


def cli(db: str, *args: str) -> None:
    done = subprocess.run(knotwork_cmd("--db", db, *args), capture_output=True, text=True,
                          env=child_env(KNOTWORK_EMBEDDER="none"), timeout=120)
    assert done.returncode == 0, done.stderr


@dataclass
class Served:
    db: str
    alone: str  # a store of alpha's notes alone
    base: str
    token: str
    beta: Path  # beta's vault (ingested by the CLI, not served)


def _url(backend: str, path: Path) -> str:
    return str(path) if backend == "sqlite" else pg.fresh_url()


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    db, alone = _url(request.param, tmp_path / "s.db"), _url(request.param, tmp_path / "a.db")
    alpha, beta = write_vault(tmp_path / "alpha", ALPHA), write_vault(tmp_path / "beta", BETA)
    cli(db, "--scope", "beta", "ingest", str(beta), "-q")  # beta's rows first
    cli(db, "--scope", "alpha", "ingest", str(alpha), "-q")
    cli(alone, "--scope", "alpha", "ingest", str(alpha), "-q")
    done = subprocess.run(knotwork_cmd("--db", db, "token", "create", "--scopes", "alpha",
                                       "--name", "alpha", "--read-only", "--json"),
                          capture_output=True, text=True, env=child_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    port, log = free_port(), tmp_path / "serve.log"
    try:
        with running(knotwork_cmd("--db", db, "--scope", "alpha", "serve", "--vault",
                                  str(alpha), "--port", str(port)), log,
                     env=child_env(KNOTWORK_EMBEDDER="none")) as proc:
            base = f"http://127.0.0.1:{port}"

            wait_served(proc, base, log, timeout=30, locked=True)
            yield Served(db, alone, base, json.loads(done.stdout)["secret"], beta)
    finally:
        for url in (db, alone):
            if url.startswith("postgresql://"):
                pg.drop(url)


def _answers(s: Served) -> dict[str, object]:
    """What alpha's token is told: each query's hits (path, heading, score) and its
    context's entities (label, relevance, score), as the JSON gives them (four decimals)."""
    out: dict[str, object] = {}
    with httpx.Client(base_url=s.base, timeout=30,
                      headers={"Authorization": f"Bearer {s.token}"}) as c:
        for q in QUERIES:
            r = c.get("/search", params={"q": q, "k": 20})
            assert r.status_code == 200, r.text
            out[f"search {q}"] = [(h["path"], h["heading"], round(h["score"], 4))
                                  for h in r.json()["hits"]]
            r = c.post("/context", json={"query": q, "max_tokens": 0})
            assert r.status_code == 200, r.text
            out[f"context {q}"] = [(e["label"], e["relevance"], round(e["score"], 4))
                                   for e in r.json()["entities"]]
    return out


def _alone(s: Served) -> dict[str, object]:
    out: dict[str, object] = {}
    with Knotwork.open(None, db=s.alone, embedder="none") as kw:
        for q in QUERIES:
            out[f"search {q}"] = [(h.path, h.heading, round(h.score, 4))
                                  for h in kw.search(q, k=20, scopes=["alpha"])]
            out[f"context {q}"] = [(e.label, e.relevance, round(e.score, 4)) for e in
                                   kw.context(q, max_tokens=0, scopes=["alpha"]).entities]
    return out


def test_alphas_scores_are_a_store_of_alpha_alone_and_stay_while_beta_changes(
        served: Served) -> None:
    expected = _alone(served)
    assert expected["search proxy"], "the queries must find something"
    assert all(h[2] > 0.1 for h in expected["search edge proxy"])  # type: ignore[attr-defined]
    assert _answers(served) == expected
    # beta edits a note to say alpha's words far more often, deletes one, adds one
    (served.beta / "b/n1.md").write_text("# Edge\n\n" + "edge proxy dashboards " * 50,
                                         encoding="utf-8")
    (served.beta / "b/n2.md").unlink()
    (served.beta / "b/extra.md").write_text("# Traefik\n\ntraefik traffic certificates\n",
                                            encoding="utf-8")
    cli(served.db, "--scope", "beta", "ingest", str(served.beta), "-q")
    assert _answers(served) == expected
