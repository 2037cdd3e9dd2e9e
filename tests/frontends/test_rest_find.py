"""``POST /find`` and ``GET /changes`` against a real uvicorn (``knotwork serve``), with
the watcher keeping both answers current as the vault changes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .conftest import wait_for
from .test_rest import Api, _serve


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest-find"))


def _labels(api: Api, body: dict[str, object]) -> list[str]:
    r = api.client.post("/find", json=body)
    assert r.status_code == 200, r.text
    return [e["label"] for e in r.json()["entities"]]


def test_find_answers_the_entities_with_their_cited_facts(api: Api) -> None:
    r = api.client.post("/find", json={"where": ["runs_on=kota"], "type": "service"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [e["label"] for e in body["entities"]] == ["Grafana", "Traefik"]
    assert body["truncated"] is False and body["limit"] == 50
    traefik = body["entities"][1]
    assert traefik["types"] == ["service"] and traefik["iri"].endswith("services/Traefik")
    runs_on = next(f for f in traefik["facts"] if f["predicate"] == "runs_on")
    assert runs_on["value_type"] == "Entity" and runs_on["value_label"] == "kota"
    assert runs_on["source"]["path"] == "services/Traefik.md"
    assert runs_on["source"]["line_start"] == 3
    assert runs_on["source"]["supporting_text"] == 'runs_on: "[[kota]]"'
    assert _labels(api, {"where": ["Port=443"]}) == ["Traefik"]
    assert _labels(api, {"where": ["owns=[[traefik-proxy]]"]}) == ["Alice"]
    assert _labels(api, {"where": ["type"], "limit": 1}) == ["Alice"]
    assert api.client.post("/find", json={"where": ["type"], "limit": 1}).json()["truncated"]


def test_find_refuses_what_its_schema_does_not_take(api: Api) -> None:
    for body in ({"wher": ["type=host"]}, {"where": "type=host"}, {"where": ["type"] * 21},
                 {"where": ["type"], "limit": 501}, {"where": ["type"], "limit": "5"},
                 {"where": ["x" * 10_001]}, {"where": [""]}, {"type": ""}, {"where": []},
                 {"where": ["=x"]}, {"where": ["_=x"]}, {"where": ["a= "]}, {"type": " "}):
        r = api.client.post("/find", json=body)
        assert r.status_code == 422, (body, r.text)
    assert _labels(api, {"type": "host"}) == ["kota"]  # a type alone is a condition
    assert api.client.get("/changes", params={"since": "yesterday"}).status_code == 422
    assert api.client.get("/changes", params={"limit": 0}).status_code == 422
    assert api.client.get("/changes", params={"sinse": "1d"}).status_code == 422


def test_an_edit_reaches_find_and_changes(api: Api) -> None:
    first = api.client.get("/changes", params={"since": "1h"}).json()
    assert {c["path"] for c in first["changes"]} >= {"services/Traefik.md", "hosts/kota.md"}
    assert {c["change"] for c in first["changes"]} == {"created"}
    note = api.vault / "services" / "Loki.md"
    note.write_text("---\ntype: service\nruns_on: \"[[kota]]\"\n---\n# Loki\n", encoding="utf-8")
    body = {"where": ["runs_on=kota"], "type": "service"}
    wait_for(lambda: _labels(api, body) == ["Grafana", "Loki", "Traefik"], timeout=10)
    note.write_text("---\ntype: service\nruns_on: \"[[lima]]\"\n---\n# Loki\n", encoding="utf-8")
    wait_for(lambda: _labels(api, body) == ["Grafana", "Traefik"], timeout=10)
    note.unlink()
    wait_for(lambda: api.client.get("/changes", params={"since": "1h"}).json()["changes"][0]
             ["change"] == "deleted", timeout=10)
    got = api.client.get("/changes", params={"since": "1h", "limit": 3}).json()
    assert [(c["change"], c["path"]) for c in got["changes"]] == [
        ("deleted", "services/Loki.md"), ("edited", "services/Loki.md"),
        ("created", "services/Loki.md")]
    assert got["truncated"] is True and got["changes"][0]["actor"]
