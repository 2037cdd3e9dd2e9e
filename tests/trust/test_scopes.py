"""Scoped tokens through every REST route and every MCP tool: a token for scope alpha can
neither read nor infer scope beta (a real uvicorn and a real MCP client, subprocesses, and
a scripted model on 127.0.0.1 for ``ask`` and ``extract``).

The route and tool tables at the end classify every REST route (read, write, whole-store,
meta, or the MCP mount) and list every MCP tool; a route or tool added later that is not
in them fails the test until its scope rule is decided and exercised."""

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

from ..frontends.conftest import (
    child_env,
    free_port,
    knotwork_cmd,
    running,
    wait_for,
    wait_served,
    write_vault,
)
from ..llm.chatserver import ChatServer

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
    vault: Path  # alpha's vault, which the server (--scope alpha) serves and watches
    other: str  # a token for beta only
    model: ChatServer
    env: dict[str, str]


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
    for name, extra in (("rw", ()), ("ro", ("--read-only",)), ("gone", ()),
                        ("other", ())):
        out = json.loads(cli(db, "token", "create", "--scopes",
                             "beta" if name == "other" else "alpha", "--name", name,
                             *extra, "--json"))
        tokens[name] = out["secret"], out["id"]
    cli(db, "token", "revoke", str(tokens["gone"][1]))
    port = free_port()
    log = tmp / "serve.log"
    model = ChatServer()
    env = child_env(KNOTWORK_EMBEDDER="none", KNOTWORK_LLM_URL=model.url,
                    KNOTWORK_LLM_MODEL="test-model")
    with model, running(knotwork_cmd("--db", str(db), "--scope", "alpha", "serve", "--vault",
                                     str(tmp / "a"), "--port", str(port)), log,
                        env=env) as proc:
        base = f"http://127.0.0.1:{port}"

        wait_served(proc, base, log, locked=True)
        rw = tokens["rw"][0]
        made = httpx.post(base + "/facts", headers={"Authorization": f"Bearer {rw}"},
                          json={"subject": "Grafana", "predicate": "color", "value": "teal"})
        assert made.status_code == 201, made.text
        assert made.json()["scope"] == "alpha"
        yield Setup(alone, db, base, rw, tokens["ro"][0], tokens["gone"][0], beta_fact,
                    made.json()["id"], tmp / "a", tokens["other"][0], model, env)


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


def test_find_and_changes_answer_the_tokens_scopes_only(setup: Setup) -> None:
    with _client(setup, setup.rw) as c:
        r = c.post("/find", json={"where": ["port"]})
        assert r.status_code == 200, r.text
        [traefik] = r.json()["entities"]
        assert (traefik["label"], traefik["scope"]) == ("Traefik", "alpha")
        assert [f["value"] for f in traefik["facts"]] == ["443"]
        for body in ({"where": ["codename"]}, {"where": ["risk"]}, {"type": "project"},
                     {"where": ["port=8443"]}, {"where": ["codename=zebra-secret-42"]}):
            r = c.post("/find", json=body)
            assert r.status_code == 200 and r.json()["entities"] == [], (body, r.text)
            _clean(_strip(r.text, "8443", "zebra-secret-42"))
        assert c.post("/find", json={"where": ["port"], "scopes": ["beta"]}).status_code == 403
        r = c.get("/changes", params={"since": "1h"})
        mine = r.json()["changes"]
        assert mine and {ch["scope"] for ch in mine} == {"alpha"}
        assert "services/Traefik.md" in {ch["path"] for ch in mine}
        _clean(r.text)
        assert c.get("/changes", params={"since": "1h", "scope": "beta"}).status_code == 403
    with _client(setup, setup.other) as c:  # beta's own token finds beta's
        r = c.post("/find", json={"where": ["codename=ZEBRA-SECRET-42"]})
        assert [e["label"] for e in r.json()["entities"]] == ["Zephyr"]
        assert {ch["scope"] for ch in c.get("/changes", params={"since": "1h"}
                                            ).json()["changes"]} == {"beta"}
    # the store itself holds both: what alpha's token saw is its scope's, not the store's
    both = json.loads(cli(setup.db, "find", "--where", "port", "--json"))["entities"]
    assert sorted(e["scope"] for e in both) == ["alpha", "beta"]


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
                         "read_note", "list_notes", "ask", "find", "recent_changes"}

    async def main() -> None:
        await session(setup.rw, scoped)
        await session(setup.ro, read_only)

    anyio.run(main)
    r = httpx.post(setup.base + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 401


def _shape(ctx: dict) -> object:  # type: ignore[type-arg]
    """What an answer says, without ids and times; with scores, which read only the
    reader's scopes' statistics (README)."""
    return ({k: v for k, v in ctx["summary"].items() if k != "tokens"},
            sorted((e["label"], e["relevance"], round(e["score"], 4),
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


# ---------------------------------------------------------------- every route, every tool
#
# Each REST route's class: "read" (a scoped token sees its own scopes only, a read-only
# token may call it), "write" (a read-only token gets 403; a scoped token's write lands in
# its own scopes or is refused), "whole" (its answer spans every scope: 403 for any scoped
# token), "meta" (no store data), "mcp" (the mount; its tools are checked below). Each
# entry: class, then the request made with alpha's tokens (path, params, JSON body, form),
# and the statuses the read-write token may get.

Call = tuple[str, dict[str, str] | None, dict[str, object] | None, dict[str, str] | None]

ROUTES: dict[tuple[str, str], tuple[str, Call, set[int]]] = {
    ("POST", "/context"): ("read", ("/context", None, {"query": "quokkaproxy"}, None), {200}),
    ("GET", "/search"): ("read", ("/search", {"q": "quokkaproxy"}, None, None), {200}),
    ("GET", "/entities"): ("read", ("/entities", {"ref": "Traefik"}, None, None), {200}),
    ("GET", "/entities/{ref:path}/facts"): ("read", ("/entities/Traefik/facts", None, None,
                                                     None), {200}),
    ("GET", "/entities/{ref:path}"): ("read", ("/entities/Traefik", None, None, None), {200}),
    ("GET", "/history"): ("read", ("/history", {"entity": "Traefik"}, None, None), {200}),
    ("POST", "/documents"): ("write", ("/documents", None, {
        "doc_id": "chat/routes", "title": "Routes", "source": "test",
        "raw_content": "Grafana stays calm."}, None), {200}),
    ("POST", "/facts"): ("write", ("/facts", None, {"subject": "Grafana", "predicate": "mood",
                                                     "value": "calm"}, None), {201}),
    ("DELETE", "/facts/{fact_id}"): ("write", ("/facts/{beta_fact}", {"reason": "x"}, None,
                                               None), {404}),
    ("GET", "/health"): ("meta", ("/health", None, None, None), {200}),
    ("GET", "/stats"): ("whole", ("/stats", None, None, None), {403}),
    ("POST", "/wiki/pages"): ("write", ("/wiki/pages", None, {
        "category": "topic", "title": "Edge", "content": "[[Traefik]] routes to [[Grafana]].",
        "summary": "the edge"}, None), {201}),
    ("GET", "/wiki/pages"): ("read", ("/wiki/pages", None, None, None), {200}),
    ("GET", "/wiki/pages/{category}/{title:path}"): ("read", ("/wiki/pages/topic/Edge", None,
                                                              None, None), {200}),
    ("GET", "/wiki/search"): ("read", ("/wiki/search", {"q": "quokkaproxy"}, None, None),
                              {200}),
    ("GET", "/wiki/log"): ("read", ("/wiki/log", None, None, None), {200}),
    ("GET", "/lint"): ("whole", ("/lint", None, None, None), {403}),
    ("POST", "/assemble"): ("read", ("/assemble", None, {"query": "quokkaproxy"}, None),
                            {200}),
    ("POST", "/ask"): ("read", ("/ask", None, {"question": "traefik"}, None), {200}),
    ("POST", "/extract"): ("write", ("/extract", None, {"budget": 100_000}, None), {202}),
    ("GET", "/extract/{job}"): ("read", ("/extract/1", None, None, None), {200}),
    ("POST", "/add-context"): ("write", ("/add-context", None, {"namespace": "proj"}, None),
                               {403}),  # its records would land in proj__*, not alpha
    ("GET", "/review"): ("read", ("/review", None, None, None), {200}),
    ("POST", "/review/{decision}"): ("write", ("/review/approve", None, {
        "fact_ids": ["{beta_fact}"]}, None), {404}),
    ("GET", "/audit"): ("read", ("/audit", {"since": "1h"}, None, None), {200}),
    ("POST", "/find"): ("read", ("/find", None, {"where": ["type=project"]}, None), {200}),
    ("GET", "/changes"): ("read", ("/changes", {"since": "1h"}, None, None), {200}),
    ("GET", "/"): ("read", ("/", {"q": "quokkaproxy"}, None, None), {200}),
    ("GET", "/ui/entity"): ("read", ("/ui/entity", {"ref": "Traefik"}, None, None), {200}),
    ("GET", "/ui/review"): ("read", ("/ui/review", None, None, None), {200}),
    ("POST", "/ui/review"): ("write", ("/ui/review", None, None, {
        "fact_id": "{beta_fact}", "decision": "approve"}), {404}),
    ("GET", "/ui/login"): ("meta", ("/ui/login", None, None, None), {200}),
    ("POST", "/ui/login"): ("meta", ("/ui/login", None, None, {"token": "{rw}"}), {303}),
    ("GET", "/openapi.json"): ("meta", ("/openapi.json", None, None, None), {200}),
    ("GET", "/docs"): ("meta", ("/docs", None, None, None), {200}),
    ("*", "/mcp"): ("mcp", ("", None, None, None), set()),
}


def _app_routes() -> set[tuple[str, str]]:
    """Every (method, path) the app answers, its included routers walked."""
    from starlette.routing import Mount

    from knotwork import Knotwork
    from knotwork.server.app import create_app

    found: set[tuple[str, str]] = set()

    def walk(routes: list[object]) -> None:
        for r in routes:
            inner = getattr(r, "original_router", None)
            if inner is not None:
                walk(inner.routes)
            elif isinstance(r, Mount):
                found.add(("*", r.path))
            else:
                found.update((m, r.path) for m in r.methods - {"HEAD"})  # type: ignore[attr-defined]

    with Knotwork.open(None, db=":memory:", embedder="none") as kw:
        walk(list(create_app(kw).routes))
    return found


def test_every_route_has_a_scope_rule() -> None:
    found = _app_routes()
    assert found - set(ROUTES) == set(), "a route with no scope rule: classify it in ROUTES"
    assert set(ROUTES) - found == set(), "ROUTES names a route the app no longer has"


def _strip(text: str, *words: str) -> str:
    """``text`` without the words the test itself sent (the question echoed back)."""
    for w in words:
        text = text.replace(w, "").replace(w.capitalize(), "")
    return text


def _send(c: httpx.Client, method: str, call: Call, s: Setup, job: str) -> httpx.Response:
    path, params, body, form = call

    def fill(v: object) -> object:
        if not isinstance(v, str):
            return [fill(x) for x in v] if isinstance(v, list) else v
        v = v.replace("{rw}", s.rw).replace("{job}", job)
        return int(v.replace("{beta_fact}", str(s.beta_fact))) if v == "{beta_fact}" else v

    data = {k: str(fill(v)) for k, v in form.items()} if form else None
    return c.request(method, str(fill(path)).replace("{beta_fact}", str(s.beta_fact)),
                     params=params, json={k: fill(v) for k, v in body.items()} if body else None,
                     data=data, follow_redirects=False)


def test_every_route_keeps_alphas_token_in_alpha(setup: Setup) -> None:
    before = len(setup.model.requests)
    with _client(setup, setup.ro) as ro, _client(setup, setup.rw) as rw:
        # the read-only token first: every write refused, every read answered
        for (method, _), (kind, call, _ok) in ROUTES.items():
            if kind == "mcp":
                continue
            r = _send(ro, method, call, setup, "1")
            if kind in ("write", "whole"):
                assert r.status_code == 403, (method, call[0], r.status_code, r.text)
            else:
                assert r.status_code != 403, (method, call[0], r.text)
                _clean(_strip(r.text, "quokkaproxy"))
        # then the read-write token, writes before reads (the page, the job)
        order = sorted(ROUTES.items(), key=lambda kv: kv[1][0] != "write")
        for (method, _), (kind, call, ok) in order:
            if kind == "mcp":
                continue
            r = _send(rw, method, call, setup, "1")
            assert r.status_code in ok, (method, call[0], r.status_code, r.text)
            _clean(_strip(r.text, "quokkaproxy"))
            if call[0] == "/extract":
                wait_for(lambda: rw.get("/extract/1").json()["status"] != "running",
                         timeout=30)
        # nothing of beta's was sent to the model either
        prompts = json.dumps(setup.model.requests[before:])
        assert setup.model.requests[before:]
        _clean(_strip(prompts, "quokkaproxy"))
        # another scope asked for by name is refused, through the newer routes too
        r = rw.post("/ask", json={"question": "what", "scopes": ["beta"]})
        assert r.status_code == 403, r.text
    with _client(setup, setup.other) as other:
        # the wiki and extraction are the store's scope's (alpha): beta's token is refused
        for method, path in (("GET", "/wiki/pages"), ("GET", "/wiki/pages/topic/Edge"),
                             ("GET", "/wiki/search?q=edge"), ("GET", "/wiki/log"),
                             ("POST", "/extract"), ("GET", "/extract/1"), ("GET", "/lint")):
            r = other.request(method, path, json={} if method == "POST" else None)
            assert r.status_code == 403, (path, r.text)
        r = other.post("/wiki/pages", json={"category": "topic", "title": "Beta page",
                                             "content": "zebra"})
        assert r.status_code == 403, r.text
    assert not (setup.vault / "wiki" / "topic" / "beta-page.md").exists()
    # what rw wrote landed in alpha; no proj__* scope was created by add-context
    audit = json.loads(cli(setup.db, "audit", "--since", "1h", "--json"))
    assert not [e for e in audit if str(e.get("scope") or "").startswith("proj__")
                and e["action"] != "denied"]
    assert any(e["action"] == "denied" and str(e["scope"]).startswith("proj__") for e in audit)
    written = json.loads(cli(setup.db, "facts", "Grafana", "--json"))
    assert {f["scope"] for f in written if f["predicate"] == "mood"} == {"alpha"}


MCP_TOOLS: dict[str, tuple[dict[str, object], str]] = {
    # tool: (arguments, "ok" | "forbidden" | "not found") on a server limited to alpha
    "context": ({"query": "quokkaproxy"}, "ok"),
    "search": ({"query": "quokkaproxy"}, "ok"),
    "get_entity": ({"ref": "Zephyr"}, "not found"),
    "history": ({"ref": "Zephyr"}, "not found"),
    "stats": ({}, "forbidden"),
    "ingest_document": ({"doc_id": "mcp/routes", "title": "MCP", "raw_content":
                         "Grafana is steady."}, "ok"),
    "assert_fact": ({"subject": "Grafana", "predicate": "temper", "value": "even"}, "ok"),
    "retract_fact": ({"fact_id": "{beta_fact}", "reason": "x"}, "not found"),
    "write_page": ({"category": "topic", "title": "Mcp Page",
                    "content": "[[Grafana]] draws."}, "ok"),
    "read_page": ({"category": "topic", "title": "Mcp Page"}, "ok"),
    "list_pages": ({}, "ok"),
    "search_wiki": ({"query": "quokkaproxy"}, "ok"),
    "get_log": ({}, "ok"),
    "lint": ({}, "forbidden"),
    "assemble": ({"query": "quokkaproxy"}, "ok"),
    "ask": ({"question": "traefik"}, "ok"),
    "add_context": ({"namespace": "proj"}, "forbidden"),
    "read_note": ({"ref": "Zephyr"}, "not found"),
    "list_notes": ({}, "ok"),
    "find": ({"where": ["type=project"]}, "ok"),
    "recent_changes": ({"since": "1h"}, "ok"),
}


async def _every_tool(s: ClientSession, setup: Setup) -> None:
    names = {t.name for t in (await s.list_tools()).tools}
    assert names == set(MCP_TOOLS), "a tool with no scope rule: add it to MCP_TOOLS"
    for tool, (args, expect) in MCP_TOOLS.items():
        filled = {k: setup.beta_fact if v == "{beta_fact}" else v for k, v in args.items()}
        r = await s.call_tool(tool, filled)
        block = r.content[0]
        assert isinstance(block, TextContent)
        if expect == "ok":
            assert not r.is_error, (tool, block.text)
        else:
            assert r.is_error and f": {expect}: " in block.text, (tool, block.text)
        # the name asked for comes back in "not found"; the other words must not
        _clean(_strip(block.text, "quokkaproxy", *[v for v in args.values()
                                                   if isinstance(v, str)]))


def _mcp_scopes(setup: Setup, predicate: str) -> set[str]:
    """The scopes of alpha's Grafana's facts with ``predicate``."""
    rows = json.loads(cli(setup.db, "--scope", "alpha", "facts", "Grafana", "--json"))
    return {f["scope"] for f in rows if f["predicate"] == predicate}


def test_every_mcp_tool_over_stdio_keeps_to_alpha(setup: Setup, tmp_path: Path) -> None:
    cmd = knotwork_cmd("--db", str(setup.db), "--scope", "alpha", "mcp", "--vault",
                       str(setup.vault))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=setup.env)
    before = len(setup.model.requests)

    async def main() -> None:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, read_timeout_seconds=30) as s:
                await s.initialize()
                await _every_tool(s, setup)

    anyio.run(main)
    assert setup.model.requests[before:]
    _clean(_strip(json.dumps(setup.model.requests[before:]), "quokkaproxy"))
    assert _mcp_scopes(setup, "temper") == {"alpha"}


def test_every_mcp_tool_over_http_keeps_to_the_tokens_scopes(setup: Setup) -> None:
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    async def session(secret: str, body):  # type: ignore[no-untyped-def]
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"}) \
                as http, streamable_http_client(setup.base + "/mcp/", http_client=http) \
                as streams, ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            await body(s)

    async def beta(s: ClientSession) -> None:
        # the server's own scope is alpha: beta's token keeps out of its wiki, and what it
        # asserts lands in beta, not in the server's scope
        for tool, args in (("list_pages", {}), ("read_page", {"category": "topic",
                                                               "title": "Mcp Page"}),
                           ("write_page", {"category": "topic", "title": "B",
                                           "content": "b"}), ("get_log", {}),
                           ("search_wiki", {"query": "edge"}), ("lint", {})):
            r = await s.call_tool(tool, args)
            assert r.is_error and "forbidden" in r.content[0].text, tool  # type: ignore[union-attr]
        r = await s.call_tool("assert_fact", {"subject": "Grafana", "predicate": "leaning",
                                              "value": "beta-side"})
        assert not r.is_error and r.structured_content["scope"] == "beta", r.content
        r = await s.call_tool("ingest_document", {"doc_id": "mcp/beta", "title": "B",
                                                  "raw_content": "Grafana leans."})
        assert not r.is_error

    async def read_only(s: ClientSession) -> None:
        names = {t.name for t in (await s.list_tools()).tools}
        assert not names & {"ingest_document", "assert_fact", "retract_fact", "write_page",
                            "add_context"}

    async def main() -> None:
        await session(setup.rw, lambda s: _every_tool(s, setup))
        await session(setup.other, beta)
        await session(setup.ro, read_only)

    anyio.run(main)
    assert _mcp_scopes(setup, "leaning") == set()  # beta's write did not land in alpha
