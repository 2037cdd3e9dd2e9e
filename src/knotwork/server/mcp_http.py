"""MCP over HTTP at ``/mcp``, behind the same token rule as the REST routes.

Each kind of caller gets its own MCP server, built once and kept: its tools see the
scopes of the caller's token (``build_server(scopes=…)``), and a read-only token's
server has no tool that writes. The servers speak streamable HTTP, stateless (every
request stands alone, so a token can never reach a session another token opened). Their
session managers run in the app's task group (``app.state.tasks``), started on first
use and stopped with the app. A tool call writes as the request's actor
(``server.auth``: the token's name, ``X-Actor``, the client's address), which the tools
read from the request's own state (``mcp.server.actor_of``).
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.abc import TaskGroup

from ..core import Knotwork
from ..mcp.server import build_server
from ..results import Principal
from .auth import FULL

Key = tuple[tuple[str, ...], bool]


class McpOverHttp:
    """The ASGI app mounted at ``/mcp``."""

    def __init__(self, kw: Knotwork, scopes: list[str] | None) -> None:
        self.kw = kw
        self.scopes = scopes  # the server's own --scope, for the unscoped callers
        self.tasks: TaskGroup | None = None
        self._managers: dict[Key, Any] = {}
        self._lock = anyio.Lock()

    async def _manager(self, p: Principal) -> Any:
        key: Key = (p.scopes, p.read_only)
        async with self._lock:
            if key not in self._managers:
                if self.tasks is None:
                    raise RuntimeError("MCP over HTTP runs inside the app's lifespan")
                server = build_server(self.kw, scopes=list(p.scopes) or self.scopes,
                                      read_only=p.read_only)
                server.streamable_http_app(stateless_http=True, json_response=True)
                manager = server.session_manager
                started = anyio.Event()

                async def run() -> None:
                    async with manager.run():
                        started.set()
                        await anyio.sleep_forever()

                self.tasks.start_soon(run)
                await started.wait()
                self._managers[key] = manager
            return self._managers[key]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        principal = scope.get("state", {}).get("principal", FULL)
        manager = await self._manager(principal)
        await manager.handle_request(scope, receive, send)
