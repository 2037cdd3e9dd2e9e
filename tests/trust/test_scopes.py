"""Scoped tokens through every REST route and every MCP tool: a token for scope alpha can
neither read nor infer scope beta (a real uvicorn and a real MCP client, subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent

from ..frontends.conftest import child_env, free_port, knotwork_cmd, running, wait_for, write_vault

ALPHA = {"services/Traefik.md": "---\ntype: service\nport: 443\n---\n# Traefik\n\n"
                                "The edge proxy; it routes to [[Grafana]].\n",
         "services/Grafana.md": "---\ntype: service\n---\n# Grafana\n\nDashboards.\n"}
# beta names Traefik too, and holds words alpha never says
BETA = {"secret/Zephyr.md": "---\ntype: project\ncodename: zebra-secret-42\n---\n# Zephyr\n\n"
                            "Zephyr replaces [[Traefik]] with quokkaproxy next year.\n",
        "services/Traefik.md": "---\nport: 8443\n---\n# Traefik\n\nquokkaproxy soon.\n"}
LEAKS = ("zephyr", "zebra", "quokka", "8443", "beta")


def cli(db: Path, *args: str) -> str:
    done = subprocess.run(knotwork_cmd("--db", str(db), *args), capture_output=True,
                          text=True, env=child_env(KNOTWORK_EMBEDDER="none"), timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _assert_in_beta(db: Path) -> int:
    """An unreviewed fact of beta's, asserted through the Python API in its own process."""
    code = ("import sys; from knotwork import Knotwork\n"
            "with Knotwork.open(None, db=sys.argv[1], scope='beta', embedder='none') as kw:\n"
            "    print(kw.assert_fact('Zephyr', 'risk', 'zebra-high').id)")
    done = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True,
                          text=True, env=child_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@dataclass
class Setup:
    alone: Path  # a store of alpha's notes alone, for comparison
    db: Path
    base: str
    rw: str
    ro: str
    revoked: str
    beta_fact: int
    alpha_fact: int


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("scopes")
    db = tmp / "s.db"
    cli(db, "--scope", "alpha", "ingest", str(write_vault(tmp / "a", ALPHA)), "-q")
    cli(db, "--scope", "beta", "ingest", str(write_vault(tmp / "b", BETA)), "-q")
    alone = tmp / "alone.db"
    cli(alone, "--scope", "alpha", "ingest", str(tmp / "a"), "-q")
    beta_fact = _assert_in_beta(db)
    tokens = {}
    for name, extra in (("rw", ()), ("ro", ("--read-only",)), ("gone", ())):
        out = json.loads(cli(db, "token", "create", "--scopes", "alpha", "--name", name,
                             *extra, "--json"))
        tokens[name] = out["secret"], out["id"]
    cli(db, "token", "revoke", str(tokens["gone"][1]))
    port = free_port()
    log = tmp / "serve.log"
    with running(knotwork_cmd("--db", str(db), "serve", "--port", str(port)), log,
                 env=child_env(KNOTWORK_EMBEDDER="none")) as proc:
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert proc.poll() is None, log.read_text(encoding="utf-8")
            try:
                return httpx.get(base + "/health").status_code in (200, 401)
            except httpx.TransportError:
                return False

        wait_for(up, timeout=20)
        rw = tokens["rw"][0]
        made = httpx.post(base + "/facts", headers={"Authorization": f"Bearer {rw}"},
                          json={"subject": "Grafana", "predicate": "color", "value": "teal"})
        assert made.status_code == 201, made.text
        assert made.json()["scope"] == "alpha"
        yield Setup(alone, db, base, rw, tokens["ro"][0], tokens["gone"][0], beta_fact,
                    made.json()["id"])


def _client(s: Setup, secret: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    return httpx.Client(base_url=s.base, headers=headers, timeout=10)


def _clean(text: str, query: str = "") -> None:
    """No word of beta's in ``text``, once the echoes of the question itself are gone."""
    for echo in ('"query":"{}"', '"query": "{}"', "# Context: {}", "# Search: {}",
                 "Results for “{}”",
                 'value="{}"'):
        text = text.replace(echo.format(query), "")
    low = text.lower()
    assert not [w for w in LEAKS if w in low], text[:2000]


def test_reads_never_reveal_another_scope(setup: Setup) -> None:
    with _client(setup, setup.rw) as c:
        for q in ("zephyr", "traefik", "quokkaproxy", "zebra-secret-42"):
            r = c.post("/context", json={"query": q, "max_tokens": 0})
            assert r.status_code == 200, r.text
            _clean(r.text, q)
            r = c.post("/context", json={"query": q, "format": "markdown"})
            _clean(r.text, q)
            r = c.get("/search", params={"q": q})
            assert r.status_code == 200
            _clean(r.text, q)
            _clean(c.get("/", params={"q": q}).text, q)
        assert c.post("/context", json={"query": "zephyr"}).json()["summary"][
            "total_entities"] == 0
        for path in ("/entities/Zephyr", "/entities/Zephyr/facts", "/history?entity=Zephyr",
                     "/entities?ref=secret/Zephyr.md"):
            r = c.get(path)
            assert r.status_code == 404, (path, r.text)
        # alpha's own Traefik: alpha's port only, and no beta neighbour
        for path in ("/entities/Traefik", "/entities/Traefik/facts",
                     "/history?entity=Traefik", "/review", "/review?status=rejected"):
            r = c.get(path)
            assert r.status_code == 200, (path, r.text)
            _clean(r.text)
        page = c.get("/", params={"q": "traefik"})
        assert page.status_code == 200
        _clean(page.text)
        entity_page = c.get("/ui/entity", params={"ref": "Traefik"})
        _clean(entity_page.text)
        _clean(c.get("/ui/review").text)
        assert c.get("/ui/entity", params={"ref": "Zephyr"}).status_code == 404


def test_another_scope_asked_for_is_403_and_logged(setup: Setup) -> None:
    with _client(setup, setup.rw) as c:
        assert c.get("/search", params={"q": "x", "scope": "beta"}).status_code == 403
        r = c.post("/context", json={"query": "zephyr", "scopes": ["beta"]})
        assert r.status_code == 403 and r.json()["error"] == "Forbidden"
        assert c.get("/stats").status_code == 403  # its counts span every scope
        assert c.post("/facts", json={"subject": "X", "predicate": "p", "value": "v",
                                      "scope": "beta"}).status_code == 403
        # another scope's fact is as unknown as a missing one
        assert c.delete(f"/facts/{setup.beta_fact}", params={"reason": "x"}).status_code == 404
        r = c.post("/review/approve", json={"fact_ids": [setup.beta_fact]})
        assert r.status_code == 404
        r = c.post("/review/approve", json={"predicate": "mentions", "reason": "bulk"})
        assert r.status_code == 200
    with _client(setup, setup.rw) as c:
        mine = c.get("/audit", params={"since": "1h"}).json()["events"]
    assert mine and all(e["scope"] == "alpha" for e in mine)
    audit = json.loads(cli(setup.db, "audit", "--since", "1h", "--json"))
    denied = [e for e in audit if e["action"] == "denied"]
    assert len(denied) >= 4 and all(e["actor"] == "token:rw" for e in denied)
    assert not any(setup.rw in json.dumps(e) for e in audit)  # never the secret
    # the bulk approval reached alpha's facts only
    beta = json.loads(cli(setup.db, "--scope", "beta", "review", "--json"))
    assert beta["total"] >= 1


def test_read_only_revoked_and_missing_tokens(setup: Setup) -> None:
    with _client(setup, setup.ro) as c:
        assert c.post("/context", json={"query": "traefik"}).status_code == 200
        assert c.post("/facts", json={"subject": "X", "predicate": "p", "value": "v"}
                      ).status_code == 403
        assert c.post("/review/reject", json={"fact_ids": [setup.alpha_fact]}
                      ).status_code == 403
        assert c.delete(f"/facts/{setup.alpha_fact}", params={"reason": "x"}
                        ).status_code == 403
    for secret in (setup.revoked, None, "kw_not-a-token"):
        with _client(setup, secret) as c:
            assert c.post("/context", json={"query": "traefik"}).status_code == 401
            assert c.get("/entities/Traefik").status_code == 401
    # the web page sends a locked-out browser to its sign-in form
    r = httpx.get(setup.base + "/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"


def test_mcp_tools_never_reveal_another_scope(setup: Setup, tmp_path: Path) -> None:
    cmd = knotwork_cmd("--db", str(setup.db), "--scope", "alpha", "mcp")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:],
                                   env=child_env(KNOTWORK_EMBEDDER="none"))

    def text(result: object) -> str:
        block = result.content[0]  # type: ignore[attr-defined]
        assert isinstance(block, TextContent)
        return block.text

    async def main() -> None:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, read_timeout_seconds=30) as s:
                await s.initialize()
                for q in ("zephyr", "traefik", "quokkaproxy"):
                    _clean(text(await s.call_tool("context", {"query": q})), q)
                    _clean(text(await s.call_tool("search", {"query": q})), q)
                for tool, args in (("get_entity", {"ref": "Zephyr"}),
                                   ("history", {"ref": "Zephyr"}),
                                   ("retract_fact", {"fact_id": setup.beta_fact,
                                                     "reason": "x"})):
                    r = await s.call_tool(tool, args)
                    assert r.is_error and "not found" in text(r), (tool, text(r))
                for tool in ("get_entity", "history"):
                    r = await s.call_tool(tool, {"ref": "Traefik"})
                    assert not r.is_error
                    _clean(text(r))
                r = await s.call_tool("stats", {})
                assert r.is_error and "forbidden" in text(r)

    anyio.run(main)


def test_mcp_over_http_takes_the_tokens_rights(setup: Setup) -> None:
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    async def session(secret: str, body):  # type: ignore[no-untyped-def]
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"}) \
                as http, streamable_http_client(setup.base + "/mcp/", http_client=http) \
                as streams, ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            await body(s)

    def text(result: object) -> str:
        block = result.content[0]  # type: ignore[attr-defined]
        assert isinstance(block, TextContent)
        return block.text

    async def scoped(s: ClientSession) -> None:
        for q in ("zephyr", "traefik"):
            _clean(text(await s.call_tool("context", {"query": q})), q)
        r = await s.call_tool("get_entity", {"ref": "Zephyr"})
        assert r.is_error and "not found" in text(r)
        _clean(text(await s.call_tool("get_entity", {"ref": "Traefik"})))

    async def read_only(s: ClientSession) -> None:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == {"context", "search", "get_entity", "history", "stats", "read_page",
                         "list_pages", "search_wiki", "get_log", "lint", "assemble",
                         "read_note", "list_notes"}

    async def main() -> None:
        await session(setup.rw, scoped)
        await session(setup.ro, read_only)

    anyio.run(main)
    r = httpx.post(setup.base + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 401


def _shape(ctx: dict) -> object:  # type: ignore[type-arg]
    """What an answer says, without ids, times and scores (full-text scores are computed
    over the whole store: README)."""
    return ({k: v for k, v in ctx["summary"].items() if k != "tokens"},
            sorted((e["label"], e["relevance"],
                    sorted((f["predicate"], str(f.get("value_label") or f["value"]))
                           for f in e["facts"]),
                    sorted((f["subject_label"], f["predicate"]) for f in e.get("incoming", [])))
                   for e in ctx["entities"]))


def test_a_scoped_answer_is_the_answer_of_a_store_without_the_other_scope(setup: Setup
                                                                          ) -> None:
    from knotwork import Knotwork

    with Knotwork.open(None, db=str(setup.alone), embedder="none") as alone, \
            _client(setup, setup.rw) as c:
        alone.assert_fact("Grafana", "color", "teal", scope="alpha")  # as the setup did
        for q in ("traefik", "grafana", "zephyr", "the edge proxy"):
            mine = c.post("/context", json={"query": q, "max_tokens": 0}).json()
            ref = alone.context(q, max_tokens=0, scopes=["alpha"]).as_dict()
            assert _shape(mine) == _shape(ref), q


def test_the_web_sign_in_keeps_the_token_in_a_strict_cookie(setup: Setup) -> None:
    with httpx.Client(base_url=setup.base, timeout=10) as browser:
        assert browser.get("/ui/login").status_code == 200
        r = browser.post("/ui/login", data={"token": setup.ro}, follow_redirects=False)
        assert r.status_code == 303
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        page = browser.get("/", params={"q": "traefik"})
        assert page.status_code == 200 and "Traefik" in page.text
        _clean(page.text, "traefik")
        # read-only: the review form is refused
        r = browser.post("/ui/review", data={"fact_id": str(setup.alpha_fact),
                                             "decision": "reject"})
        assert r.status_code == 403
