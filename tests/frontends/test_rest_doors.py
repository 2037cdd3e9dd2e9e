"""The REST door: strict types, the shared size limits, deep JSON, and what it exposes.

A real uvicorn on 127.0.0.1 (a subprocess), as in ``test_rest``. Before the fixes,
``POST /facts {"confidence": false}`` was a 201, ``/context {"explain": 0}`` a 200, and
100,000 nested brackets a bare 400.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knotwork import limits

from .test_rest import TOKEN, Api, _serve


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest-doors"))


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest-doors-token"), "--token", TOKEN)


FACT = {"subject": "Grafana", "predicate": "port", "value": "3000"}


@pytest.mark.parametrize(("route", "body"), [
    ("/facts", {**FACT, "confidence": False}),
    ("/facts", {**FACT, "confidence": "0.5"}),
    ("/facts", {**FACT, "value": 3000}),
    ("/facts", {**FACT, "value_type": True}),
    ("/context", {"query": "traefik", "explain": 0}),
    ("/context", {"query": "traefik", "expand_links": "yes"}),
    ("/context", {"query": "traefik", "max_entities": True}),
    ("/context", {"query": "traefik", "max_entities": "5"}),
    ("/context", {"query": "traefik", "min_confidence": "0.5"}),
    ("/documents", {"doc_id": "d", "raw_content": "x", "entities": [{"name": 5}]}),
    ("/documents", {"doc_id": "d", "raw_content": "x", "min_confidence": True}),
    ("/documents", {"doc_id": "d", "raw_content": "x",
                    "relations": [{"source": "a", "target": "b", "type": "t",
                                   "confidence": "1"}]}),
])
def test_a_value_of_another_json_type_is_a_422(api: Api, route: str, body: dict[str, object]
                                               ) -> None:
    r = api.client.post(route, json=body)
    assert r.status_code == 422, (route, body, r.text)
    assert r.json()["error"] == "ValidationError"


def test_every_string_and_list_is_bounded_by_the_shared_limits(api: Api) -> None:
    post, get = api.client.post, api.client.get
    over = limits.QUERY_CHARS + 1
    assert get("/search", params={"q": "x" * over}).status_code == 422
    assert post("/context", json={"query": "x" * over}).status_code == 422
    assert post("/facts", json={**FACT, "subject": "s" * (limits.SUBJECT_CHARS + 1)}
                ).status_code == 422
    assert post("/facts", json={**FACT, "value": "v" * (limits.VALUE_CHARS + 1)}
                ).status_code == 422
    assert get("/entities", params={"ref": "r" * (limits.REF_CHARS + 1)}).status_code == 422
    many = [{"name": "x"}] * (limits.ENTITIES_MAX + 1)
    assert post("/documents", json={"doc_id": "d", "raw_content": "x", "entities": many}
                ).status_code == 422
    # at the limit, accepted
    assert get("/search", params={"q": "x" * limits.QUERY_CHARS}).status_code == 200


def test_deep_json_is_the_documented_422_with_a_position(api: Api) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    r = api.client.post("/context", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert "malformed JSON at character 64" in r.json()["message"]
    # brackets inside strings are text, not nesting
    r = api.client.post("/context", json={"query": "[" * 1500})
    assert r.status_code in (200, 400), r.text


def test_the_openapi_spec_declares_what_the_routes_check(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    as_of = schemas["ContextRequest"]["properties"]["as_of"]
    assert as_of["format"] == "iso-8601" and as_of["anyOf"][0]["pattern"].startswith("^")
    assert "pattern" in schemas["DocumentRequest"]["properties"]["doc_id"]
    rules = {r["if"]["properties"]["datatype"]["const"] for r in schemas["FactRequest"]["allOf"]}
    assert rules == {"integer", "number", "boolean", "date", "datetime"}
    delete = spec["paths"]["/facts/{fact_id}"]["delete"]
    reason = next(p for p in delete["parameters"] if p["name"] == "reason")
    assert reason["required"] is True
    assert schemas["FactRequest"]["properties"]["subject"]["maxLength"] == limits.SUBJECT_CHARS


def test_a_422_says_which_field_and_why_and_never_echoes_the_input(api: Api) -> None:
    """Before, ``detail`` carried each refused value back whole (a 200,000-character
    subject came back in the error) in the validator's own words."""
    huge = "s" * 200_000
    r = api.client.post("/facts", json={**FACT, "subject": huge, "value": 3000, "frob": 1,
                                        "confidence": 2})
    assert r.status_code == 422, r.text
    assert len(r.content) < 2_000 and "sss" not in r.text
    assert "pydantic" not in r.text and "http" not in r.text and "input" not in r.text
    body = r.json()
    assert body["message"] == ("body.subject: at most 1000 characters; body.value: must be a"
                               " string; body.confidence: must be at most 1; body.frob: not a"
                               " field of this request")
    assert body["detail"][0] == {"loc": ["body", "subject"], "type": "string_too_long",
                                 "msg": "at most 1000 characters"}
    # the error schema the spec declares is the one sent
    spec = api.client.get("/openapi.json").json()["components"]["schemas"]
    declared = set(spec["ErrorDetail"]["properties"])
    assert all(set(d) == declared for d in body["detail"])
    assert set(body) <= set(spec["ErrorOut"]["properties"])
    typo = api.client.get("/search", params={"q": "x", "mdoe": "vector"}).json()
    assert typo["message"] == ("query.mdoe: not a parameter of this route (it takes: k, mode,"
                               " q, scope)")
    # a field of alternatives (0, or 50 and more) is one problem, in words, not one per
    # alternative under the validator's names for them ("max_tokens.constrained-int")
    between = api.client.post("/context", json={"query": "x", "max_tokens": 20}).json()
    assert between["message"] == "body.max_tokens: must be at most 0 or must be at least 50"
    assert between["detail"][0]["loc"] == ["body", "max_tokens"]
    nan = api.client.post("/context", content=b'{"query": "x", "min_confidence": NaN}',
                          headers={"content-type": "application/json"})
    assert nan.status_code == 422 and "body.min_confidence" in nan.json()["message"]


def test_a_fact_id_past_64_bits_is_unknown_not_a_500(api: Api) -> None:
    r = api.client.post("/review/approve", json={"fact_ids": [2**64]})
    assert r.status_code == 404 and r.json()["error"] == "NotFound", r.text


def test_the_docs_page_works_offline_and_lists_every_route(api: Api) -> None:
    """FastAPI's /docs and /redoc loaded Swagger UI and ReDoc from a CDN: blank offline."""
    import re

    page = api.client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    # nothing fetched from anywhere: no script, stylesheet, image or frame, no URL at all
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", html, re.I), \
        re.findall(r".{40}https?://.{40}", html)[:3]
    assert not re.search(r"<(script|link|img|iframe)\b", html, re.I)
    spec = api.client.get("/openapi.json").json()
    listed = 0
    for path, item in spec["paths"].items():
        for method in item:
            assert f"<code>{method.upper()} {path}</code>" in html, (method, path)
            listed += 1
    assert listed > 20
    # the limits and defaults are on the page, as the spec states them
    assert f"at most {limits.QUERY_CHARS} characters" in html and "default <code>10</code>" in html
    assert api.client.get("/redoc").status_code == 404


def test_no_cors_and_safe_headers_on_html(api: Api) -> None:
    hello = {"Origin": "https://evil.example"}
    r = api.client.get("/health", headers=hello)
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    pre = api.client.options("/context", headers={**hello, "Access-Control-Request-Method":
                                                  "POST"})
    assert "access-control-allow-origin" not in pre.headers
    docs = api.client.get("/docs")
    assert docs.headers["content-type"].startswith("text/html")
    assert docs.headers["x-content-type-options"] == "nosniff"
    assert docs.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in docs.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_the_token_is_never_logged(guarded: Api) -> None:
    c = guarded.client
    assert c.get("/health").status_code == 401
    sent = f"Bearer {TOKEN}".encode()
    assert c.get("/health", headers={"Authorization": sent + b"x"}).status_code == 401
    ok = c.get("/stats", headers={"Authorization": sent})
    assert ok.status_code == 200 and "x-frame-options" in ok.headers
    log = Path(guarded.log).read_text(encoding="utf-8")
    assert TOKEN not in log and "s3cret" not in log
