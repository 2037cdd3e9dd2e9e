"""The wiki's REST routes against a real uvicorn: write, read, list, search, log, lint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_rest import Api, _serve


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest-wiki"))


def test_pages_log_search_and_lint(api: Api) -> None:
    c = api.client
    r = c.post("/wiki/pages", json={"category": "summary", "title": "Outage 7",
                                    "content": "# Outage 7\n\n[[Traefik]] lost its certs.\n",
                                    "summary": "Certificates expired"})
    assert r.status_code == 201, r.text
    assert r.json()["path"] == "wiki/summary/outage-7.md"
    assert Path(api.vault / "wiki/summary/outage-7.md").is_file()
    page = c.get("/wiki/pages/summary/Outage 7").json()
    assert page["summary"] == "Certificates expired" and "lost its certs" in page["content"]
    assert [p["title"] for p in c.get("/wiki/pages").json()["pages"]] == ["Outage 7"]
    c.post("/wiki/pages", json={"category": "topic", "title": "TLS / certs", "content": "x"})
    assert c.get("/wiki/pages/topic/TLS%20%2F%20certs").json()["path"] == (
        "wiki/topic/tls-certs.md")
    [hit] = c.get("/wiki/search", params={"q": "lost"}).json()["hits"]
    assert (hit["path"], hit["slug"]) == ("wiki/summary/outage-7.md", "outage-7")
    assert [e["action"] for e in c.get("/wiki/log").json()["entries"]] == ["create", "create"]
    found = c.get("/lint").json()["findings"]
    assert {"kind", "severity", "path", "line", "message", "subject", "facts", "fix"} <= set(
        found[0])
    assert "wiki/summary/outage-7.md" in {f["path"] for f in found}  # nothing links to it
    only = c.get("/lint", params={"kind": "isolated_page"}).json()["findings"]
    assert {f["kind"] for f in only} <= {"isolated_page"}


def test_bad_wiki_input_gets_a_precise_4xx(api: Api) -> None:
    c = api.client
    # the schema names the categories and a title's rule, so these are 422s naming the field
    r = c.post("/wiki/pages", json={"category": "../../etc", "title": "x", "content": "y"})
    assert r.status_code == 422 and "body.category" in r.json()["message"], r.text
    assert "'summary', 'entity' or 'topic'" in r.json()["message"], r.text
    r = c.post("/wiki/pages", json={"category": "topic", "title": "../../x", "content": "y"})
    assert r.status_code == 422 and "body.title" in r.json()["message"], r.text
    assert c.get("/wiki/pages/nope/x").status_code == 422
    r = c.get("/wiki/pages/topic/%2E%2E%2Fx")  # no page can have it: none found
    assert r.status_code == 404 and "out of the wiki folder" in r.json()["message"], r.text
    r = c.post("/wiki/pages", json={"category": "topic", "title": "x", "content": "y",
                                    "extra": 1})
    assert r.status_code == 422
    assert c.get("/wiki/pages/topic/Nothing").status_code == 404
    assert c.get("/lint", params={"kind": "typo"}).status_code == 422
