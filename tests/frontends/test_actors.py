"""Who a request writes as: every REST and MCP write records the request's actor.

A real uvicorn on 127.0.0.1 (``knotwork serve``) and ``knotwork mcp`` over stdio; the
audit log is read back as a user does, with ``knotwork audit --json``. Before the rule,
every write any client made through the server was recorded as ``cli:<the server's
user>``, so the audit log could not tell two agents (or two tokens) apart.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation

from knotwork import Knotwork, limits

from .conftest import child_env, knotwork_cmd
from .test_rest import Api, _serve

FACT = {"subject": "Grafana", "predicate": "mood", "value": "calm"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("actors"))


def _audit(db: Path) -> list[dict[str, Any]]:
    """The audit log as ``knotwork audit --json`` prints it."""
    done = subprocess.run(knotwork_cmd("--db", str(db), "audit", "--json"), env=child_env(),
                          capture_output=True, text=True, timeout=60, check=True)
    events: list[dict[str, Any]] = json.loads(done.stdout)
    return events


def _actor_of(events: list[dict[str, Any]], action: str, fact_id: int) -> str:
    found = [e["actor"] for e in events if e["action"] == action and e["fact_id"] == fact_id]
    assert len(found) == 1, (action, fact_id, events[-5:])
    return str(found[0])


def _mcp_http_assert(base: str, secret: str) -> int:
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    got: dict[str, Any] = {}

    async def main() -> None:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"}) \
                as http, streamable_http_client(base + "/mcp/", http_client=http) \
                as streams, ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            result = await s.call_tool("assert_fact", {**FACT, "value": "over mcp"})
            assert not result.is_error, result.content
            got.update(result.structured_content or {})

    anyio.run(main)
    return int(got["id"])


def test_requests_side_by_side_each_keep_their_own_actor(api: Api) -> None:
    """Writes sent at once from two clients: each fact's event names its own sender (the
    actor travels with the request, not through anything the requests share). First in
    the module: the next test locks the server with tokens."""
    from concurrent.futures import ThreadPoolExecutor

    def send(i: int) -> tuple[str, int]:
        who = f"agent:{'ab'[i % 2]}"
        r = api.client.post("/facts", json={**FACT, "value": f"v{i}"}, headers={
            "X-Actor": who})
        assert r.status_code == 201, r.text
        return who, int(r.json()["id"])

    with ThreadPoolExecutor(8) as pool:
        sent = list(pool.map(send, range(24)))
    events = _audit(api.vault.parent / "s.db")
    assert all(_actor_of(events, "assert", fid) == who for who, fid in sent)


def test_each_rest_write_records_the_requests_actor(api: Api) -> None:
    c, db = api.client, api.vault.parent / "s.db"
    # no token in the store yet: the X-Actor header, else the client's address
    said = c.post("/facts", json=FACT, headers={"X-Actor": "agent:planner"})
    assert said.status_code == 201, said.text
    plain = c.post("/facts", json={**FACT, "value": "plain"})
    assert plain.status_code == 201, plain.text
    for bad in ("token:admin", "x" * (limits.ACTOR_CHARS + 1), "tab\there"):
        r = c.post("/facts", json={**FACT, "value": "refused"}, headers={"X-Actor": bad})
        assert r.status_code == 400 and r.json()["error"] == "BadRequest", (bad, r.text)
        assert "X-Actor" in r.json()["message"]

    # two store tokens: each write is recorded under the name of the token that made it
    with Knotwork.open(None, db=str(db), embedder="none") as kw:
        one = kw.create_token("planner", scopes=["default"]).secret
        two = kw.create_token("reviewer", scopes=["default"]).secret
    assert one and two
    by_one = {"Authorization": f"Bearer {one}", "X-Actor": "ignored:a-token-names-itself"}
    by_two = {"Authorization": f"Bearer {two}"}
    first = c.post("/facts", json={**FACT, "value": "first"}, headers=by_one)
    second = c.post("/facts", json={**FACT, "value": "second"}, headers=by_two)
    assert first.status_code == second.status_code == 201, (first.text, second.text)
    gone = c.delete(f"/facts/{first.json()['id']}", params={"reason": "wrong"},
                    headers=by_two)
    assert gone.status_code == 200, gone.text
    approved = c.post("/review/approve", json={"fact_ids": [second.json()["id"]]},
                      headers=by_one)
    assert approved.status_code == 200, approved.text
    doc = c.post("/documents", headers=by_two, json={
        "doc_id": "chat/actors", "title": "Actors", "raw_content": "Grafana and kota.",
        "entities": [{"name": "Grafana"}]})
    assert doc.status_code == 200, doc.text
    page = c.post("/wiki/pages", headers=by_one, json={
        "category": "topic", "title": "Who wrote", "content": "[[Grafana]]"})
    assert page.status_code == 201, page.text
    over_mcp = _mcp_http_assert(str(c.base_url).rstrip("/"), two)

    events = _audit(db)
    assert _actor_of(events, "assert", said.json()["id"]) == "agent:planner"
    assert _actor_of(events, "assert", plain.json()["id"]) == "rest:127.0.0.1"
    assert _actor_of(events, "assert", first.json()["id"]) == "token:planner"
    assert _actor_of(events, "assert", second.json()["id"]) == "token:reviewer"
    assert _actor_of(events, "retract", first.json()["id"]) == "token:reviewer"
    assert _actor_of(events, "review", second.json()["id"]) == "token:planner"
    assert _actor_of(events, "assert", over_mcp) == "token:reviewer"
    by_action = {(e["action"], e["actor"]) for e in events}
    assert ("create", "token:reviewer") in by_action  # the agent's document
    assert ("create", "token:planner") in by_action  # the wiki page
    assert not any(e["actor"].startswith("cli:") for e in events if e["action"] in (
        "assert", "retract", "review"))
    log = (api.vault / "wiki" / "log.md").read_text(encoding="utf-8")
    assert "token:planner" in log  # the wiki's own log names the writer too


def test_mcp_stdio_writes_as_the_clients_name(tmp_path: Path) -> None:
    from .conftest import write_vault

    vault = write_vault(tmp_path / "vault")
    db = tmp_path / "s.db"
    cmd = knotwork_cmd("--db", str(db), "mcp", "--vault", str(vault))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=child_env())
    got: dict[str, Any] = {}

    async def main() -> None:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(
                    read, write, read_timeout_seconds=30,
                    client_info=Implementation(name="claude-code", version="1.0")) as s:
                await s.initialize()
                result = await s.call_tool("assert_fact", FACT)
                assert not result.is_error, result.content
                got.update(result.structured_content or {})

    anyio.run(main)
    assert _actor_of(_audit(db), "assert", int(got["id"])) == "mcp:claude-code"
