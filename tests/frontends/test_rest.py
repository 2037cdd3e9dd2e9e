"""``knotwork serve`` through httpx against a real uvicorn on 127.0.0.1 (a subprocess).

One server per module serves the route tests (they write distinct facts, so their order
does not matter); a second one runs with ``--token``.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from .conftest import (
    child_env,
    free_port,
    knotwork_cmd,
    running,
    wait_for,
    wait_served,
    write_vault,
)

TOKEN = "s3cret-t\u00f8ken-0123456789"  # not ASCII: a client sends it as UTF-8


@dataclass
class Api:
    client: httpx.Client
    vault: Path
    log: Path


def _serve(tmp: Path, *extra: str, headers: dict[str, str] | None = None) -> Iterator[Api]:
    vault = write_vault(tmp / "vault")
    port = free_port()
    log = tmp / "serve.log"
    cmd = knotwork_cmd("--db", str(tmp / "s.db"), "serve", "--vault", str(vault),
                       "--port", str(port), *extra)
    with running(cmd, log) as proc, httpx.Client(base_url=f"http://127.0.0.1:{port}",
                                                 headers=headers, timeout=10) as client:
        wait_served(proc, f"http://127.0.0.1:{port}", log, locked=True)
        yield Api(client, vault, log)
    assert proc.returncode == 0, log.read_text(encoding="utf-8")  # Ctrl-C stops it cleanly


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest"))


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest-token"), "--token", TOKEN)


def test_context_accepts_the_seed_request_as_is(api: Api) -> None:
    r = api.client.post("/context", json={"query": "traefik", "max_entities": 10})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    ctx = r.json()
    assert ctx["query"] == "traefik" and 1 <= len(ctx["entities"]) <= 10
    assert ctx["entities"][0]["label"] == "Traefik"
    assert {"total_entities", "total_facts", "direct_hits", "linked_additions"} <= set(
        ctx["summary"])
    one = api.client.post("/context", json={"query": "traefik", "max_entities": 1}).json()
    assert len(one["entities"]) == 1


def test_context_options_and_markdown(api: Api) -> None:
    body = {"query": "traefik", "expand_links": False, "link_depth": 0, "max_tokens": 120,
            "scopes": ["default"], "min_confidence": 0.5, "as_of": None, "valid_at": None}
    ctx = api.client.post("/context", json=body).json()
    assert ctx["summary"]["tokens"] <= 120
    md = api.client.post("/context", json={"query": "traefik", "format": "markdown"})
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert md.text.startswith("# Context: traefik")


def test_search_is_capped_and_cited(api: Api) -> None:
    hits = api.client.get("/search", params={"q": "reverse proxy", "k": 2}).json()["hits"]
    assert 1 <= len(hits) <= 2
    assert hits[0]["path"] == "services/Traefik.md" and hits[0]["line_start"] >= 1
    too_many = api.client.get("/search", params={"q": "proxy", "k": 51})
    assert too_many.status_code == 422 and "query.k" in too_many.json()["message"]
    assert api.client.get("/search").status_code == 422
    # the server embeds its vault (the bundled model) beside the requests, once its text
    # is in: structural sync never waits for embedding
    wait_for(lambda: api.client.get("/stats").json()["embedding_status"] == "complete",
             timeout=60)
    for mode in ("vector", "hybrid"):
        found = api.client.get("/search", params={"q": "reverse proxy", "k": 2, "mode": mode})
        assert found.status_code == 200, found.text
        assert "services/Traefik.md" in [h["path"] for h in found.json()["hits"]]


def test_entity_by_label_iri_or_path(api: Api) -> None:
    traefik = api.client.get("/entities/Traefik").json()
    assert traefik["label"] == "Traefik" and "service" in traefik["types"]
    iri = traefik["iri"]
    assert api.client.get(f"/entities/{quote(iri, safe='')}").json()["iri"] == iri
    assert api.client.get("/entities/services/Traefik.md").json()["iri"] == iri
    kota = api.client.get("/entities/kota").json()
    assert {f["subject_label"] for f in kota["incoming"]} >= {"Traefik", "Grafana"}
    missing = api.client.get(f"/entities/{quote('No Such Thing')}")
    assert missing.status_code == 404
    assert missing.json() == {"error": "NotFound", "message": "no entity named 'No Such Thing'"}
    assert api.client.get("/entities", params={"ref": "Traefik"}).json()["iri"] == iri
    # a note whose path ends in /facts: the path route reads as the facts of "reports"
    sent = api.client.post("/documents", json={"doc_id": "reports/facts", "title": "Facts Log",
                                               "raw_content": "A log of facts."})
    assert sent.status_code == 200
    by_query = api.client.get("/entities", params={"ref": "reports/facts"})
    assert by_query.status_code == 200 and by_query.json()["label"] == "Facts Log"


def test_facts_assert_retract_and_history(api: Api) -> None:
    r = api.client.post("/facts", json={"subject": "Grafana", "predicate": "owner",
                                        "value": "Alice", "value_type": "Entity",
                                        "reason": "said so"})
    assert r.status_code == 201, r.text
    fact = r.json()
    assert fact["trust"] == "asserted" and fact["value_label"] == "Alice"
    assert "datatype" not in fact  # only literals carry one
    live = api.client.get("/entities/Grafana/facts").json()
    assert fact["id"] in {f["id"] for f in live}

    assert api.client.delete(f"/facts/{fact['id']}").status_code == 422  # no reason
    gone = api.client.delete(f"/facts/{fact['id']}", params={"reason": "wrong person"})
    assert gone.status_code == 200 and gone.json()["retracted_at"]
    again = api.client.delete(f"/facts/{fact['id']}", params={"reason": "again"})
    assert again.status_code == 409 and again.json()["error"] == "Conflict"
    assert api.client.delete("/facts/999999", params={"reason": "x"}).status_code == 404

    assert fact["id"] not in {f["id"] for f in api.client.get("/entities/Grafana/facts").json()}
    all_facts = api.client.get("/entities/Grafana/facts", params={"history": True}).json()
    assert fact["id"] in {f["id"] for f in all_facts}
    hist = api.client.get("/history", params={"entity": "Grafana", "limit": 1000}).json()
    assert any(f["id"] == fact["id"] and f["retracted_at"] for f in hist["facts"])
    assert any(e["fact_id"] == fact["id"] for e in hist["events"])
    page = api.client.get("/history", params={"entity": "Grafana", "limit": 1}).json()
    assert len(page["facts"]) == 1 and page["next_offset"] == 1


def test_agent_ingest_reports_what_it_dropped(api: Api) -> None:
    r = api.client.post("/documents", json={
        "doc_id": "chat/backup", "title": "Backups", "source": "chat",
        "raw_content": "Restic backs up kota every night.",
        "entities": [{"name": "Restic", "type": "tool"}],
        "relations": [{"source": "Restic", "target": "kota", "type": "backs_up",
                       "supporting_text": "Restic backs up kota", "confidence": 0.2}]})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "created" and out["facts_added"] > 0
    assert "below the minimum" in out["dropped"][0]["reason"]
    assert api.client.get("/entities/Restic").status_code == 200


def test_bad_input_gets_a_precise_4xx(api: Api) -> None:
    bad_json = api.client.post("/context", content=b'{"query": ',
                               headers={"content-type": "application/json"})
    assert bad_json.status_code == 422 and "malformed JSON" in bad_json.json()["message"]
    typo = api.client.post("/context", json={"query": "x", "max_entites": 3})
    assert typo.status_code == 422 and "max_entites" in typo.json()["message"]
    empty = api.client.post("/facts", json={"subject": "x", "predicate": "p"})
    assert empty.status_code == 422 and "body.value" in empty.json()["message"]
    assert api.client.get("/nowhere").json()["error"] == "NotFound"
    when = api.client.post("/context", json={"query": "traefik", "as_of": "yesterday"})
    # the schema declares an ISO 8601 form, so the refusal names the field
    assert when.status_code == 422 and "body.as_of" in when.json()["message"]
    assert api.client.get("/entities/Traefik/facts", params={"as_of": "soon"}).status_code == 422
    assert api.client.get("/entities/Traefik", params={"as_of": "soon"}).status_code == 422
    feb = api.client.post("/context", json={"query": "traefik", "as_of": "2026-02-30"})
    assert feb.status_code == 422 and "body.as_of" in feb.json()["message"]  # no such day
    form = api.client.post("/context", content=b'{"query": "traefik"}',  # as curl -d sends
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 422 and "Content-Type: application/json" in form.text
    typo = api.client.get("/search", params={"q": "traefik", "mdoe": "vector"})
    assert typo.status_code == 422 and "query.mdoe" in typo.json()["message"]
    assert "mode" in typo.json()["message"]  # it names what the route takes


def test_edge_values_are_client_errors_not_500s(api: Api) -> None:
    post = api.client.post
    for body in (b'{"query":"traefik","min_confidence":NaN}',
                 b'{"query":"x","max_tokens":Infinity}'):
        nan = post("/context", content=body, headers={"content-type": "application/json"})
        assert nan.status_code == 422, nan.text  # the refused input echoed as text
    late = post("/context", json={"query": "traefik", "as_of": "9999-12-31T23:59:59-14:00"})
    assert late.status_code == 400 and "outside the years" in late.json()["message"]
    before = api.client.get("/entities/Traefik", params={"as_of": "2000-01-01"})
    assert before.status_code == 404 and "first recorded" in before.json()["message"]
    huge = api.client.delete("/facts/99999999999999999999", params={"reason": "x"})
    assert huge.status_code == 404
    # 0 is "no limit", as everywhere; a budget that cannot hold the question is refused
    assert post("/context", json={"query": "traefik", "max_tokens": 0}).status_code == 200
    assert post("/context", json={"query": "traefik", "max_tokens": 10}).status_code == 422
    small = post("/context", json={"query": "\u0001" * 900, "max_tokens": 100})
    assert small.status_code == 400 and "cannot hold even an empty answer" in small.text


def test_oversized_bodies_are_refused_with_413(api: Api) -> None:
    big = b'{"query": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    r = api.client.post("/context", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "larger than" in r.json()["message"]

    def chunks() -> Iterator[bytes]:  # no content-length: counted as it streams in
        yield b'{"query": "'
        for _ in range(40):
            yield b"y" * 65536
        yield b'"}'

    r = api.client.post("/context", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413

    # a body declared far over the limit and never sent is refused by its header, at once
    url = httpx.URL(str(api.client.base_url))
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /context HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 99999999999\r\n\r\n{}")
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 413") and time.monotonic() - started < 5


def test_health_stats_and_openapi(api: Api) -> None:
    health = api.client.get("/health").json()
    assert health["status"] == "ok" and health["watching"] is True
    stats = api.client.get("/stats").json()
    assert stats["documents"] >= 4 and stats["facts"] > 0
    spec = api.client.get("/openapi.json").json()
    assert {"/context", "/search", "/facts", "/facts/{fact_id}", "/documents", "/history",
            "/health", "/stats"} <= set(spec["paths"])
    assert api.client.get("/docs").status_code == 200


def test_the_watcher_applies_vault_edits(api: Api) -> None:
    note = api.vault / "hosts" / "lima.md"
    note.write_text("---\ntype: host\n---\n# lima\n\nThe backup box.\n", encoding="utf-8")
    wait_for(lambda: api.client.get("/entities/lima").status_code == 200, timeout=5)
    note.unlink()
    # a deleted note is not found (its history stays)
    wait_for(lambda: api.client.get("/entities/lima/facts").status_code == 404, timeout=5)


def test_a_token_guards_every_request(guarded: Api) -> None:
    c = guarded.client
    assert c.get("/health").status_code == 401
    wrong = c.get("/health", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
    assert c.post("/context", json={"query": "traefik"}).status_code == 401
    ok = {"Authorization": f"Bearer {TOKEN}".encode()}
    assert c.get("/health", headers=ok).json()["status"] == "ok"
    assert c.post("/context", json={"query": "traefik"}, headers=ok).status_code == 200


def test_binding_beyond_loopback_without_a_token_exits_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        knotwork_cmd("--db", str(tmp_path / "s.db"), "serve", "--host", "0.0.0.0",
                     "--port", str(free_port())),
        capture_output=True, text=True, timeout=30, env=child_env(COLUMNS="200"), check=False)
    assert done.returncode != 0
    assert "without a token" in done.stderr and "KNOTWORK_TOKEN" in done.stderr
    assert time.monotonic() - started < 10
    assert not (tmp_path / "s.db").exists()  # refused before opening anything


def test_add_context_reads_only_inside_the_vault(api: Api) -> None:
    adr = api.vault / "decisions"
    adr.mkdir(exist_ok=True)
    (adr / "0002-use-grafana.md").write_text("# 2. Use Grafana\n\n## Status\n\nProposed\n",
                                             encoding="utf-8")
    r = api.client.post("/add-context", json={"path": "decisions", "namespace": "lab",
                                              "dry_run": True})
    assert r.status_code == 200, r.text
    assert r.json()["records_added"] == 1
    r = api.client.post("/add-context", json={"path": "decisions", "namespace": "lab"})
    assert r.status_code == 200 and r.json()["records_added"] == 1, r.text
    facts = api.client.get("/entities/ADR-0002/facts").json()
    assert {"status": "proposed"}.items() <= {f["predicate"]: f["value"] for f in facts}.items()
    r = api.client.post("/add-context", json={"path": "/etc"})
    assert r.status_code == 404 and "outside the served vault" in r.json()["message"]
    r = api.client.post("/add-context", json={"path": "decisions", "nope": 1})
    assert r.status_code == 422
