"""Vector search per scope: a reader of scope alpha gets the vector and hybrid hits (and
the cosine moments hybrid fusion weighs them by) that a store of alpha's notes alone
gives, whatever beta holds. Before, the nearest chunks were taken over every scope and
beta's kept out after, so beta's notes took alpha's places (a count of what beta holds
near the question) and moved the moments."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork

from ..frontends.conftest import write_vault

ALPHA = {"Traefik.md": "# Traefik\n\nThe edge proxy routes traffic to the dashboards.\n",
         "Grafana.md": "# Grafana\n\nDashboards of the proxy traffic and its latency.\n",
         "Routing.md": "# Routing\n\nEvery route passes the edge proxy first.\n",
         "Backups.md": "# Backups\n\nNightly backups of the dashboards, kept a month.\n",
         "Oncall.md": "# Oncall\n\nWho answers the pager, and when.\n"}
BETA = {f"b{i}.md": f"# Edge {i}\n\n" + "edge proxy routes traffic dashboards " * (i + 1)
        for i in range(12)}
QUERIES = ("edge proxy traffic", "dashboards", "who answers the pager")


def _view(kw: Knotwork, scopes: list[str] | None) -> dict[str, object]:
    out: dict[str, object] = {}
    for q in QUERIES:
        for mode in ("vector", "hybrid"):
            out[f"{mode}:{q}"] = [(h.path, round(h.score, 9))
                                  for h in kw.search(q, k=5, mode=mode, scopes=scopes)]
        ctx = kw.context(q, max_tokens=0, scopes=scopes).as_dict()
        out[f"context:{q}"] = [(e["label"], e["relevance"], round(e["score"], 9))
                               for e in ctx["entities"]]
    return out


@pytest.mark.parametrize("fusion", ["adaptive", "zscore"])
def test_a_scope_ranks_by_its_own_vectors(tmp_path: Path, fusion: str) -> None:
    alpha, beta = write_vault(tmp_path / "alpha", ALPHA), write_vault(tmp_path / "beta", BETA)
    opts = {"embedder": "hash", "fusion": fusion}
    with Knotwork.open(beta, db=str(tmp_path / "s.db"), scope="beta", **opts) as kw:
        kw.ingest()
    with Knotwork.open(alpha, db=str(tmp_path / "a.db"), scope="alpha", **opts) as alone:
        alone.ingest()
        expected = _view(alone, ["alpha"])
    assert all(expected[f"vector:{q}"] for q in QUERIES)
    with Knotwork.open(alpha, db=str(tmp_path / "s.db"), scope="alpha", **opts) as kw:
        kw.ingest()
        assert _view(kw, ["alpha"]) == expected
        # beta's notes grow: alpha's answers stay
        # (titles alpha's text never names: a title another scope declares must not
        # decide a mention here, which is another matter than vectors)
        write_vault(beta, {f"c{i}.md": f"# Rota {i}\n\n" + "Who answers the pager and when. " * 3
                           for i in range(6)})
    with Knotwork.open(beta, db=str(tmp_path / "s.db"), scope="beta", **opts) as kw:
        kw.ingest()
    with Knotwork.open(alpha, db=str(tmp_path / "s.db"), scope="alpha", **opts) as kw:
        assert _view(kw, ["alpha"]) == expected
        # unscoped, beta's chunks are ranked too (they are found)
        assert any(h.path.startswith(("b", "c")) for h in
                   kw.search("edge proxy traffic", k=5, mode="vector"))
