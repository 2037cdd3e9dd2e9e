"""The MCP front end: knotwork's tools over stdio (``knotwork mcp``)."""

from .server import TOOL_ERRORS, build_server, serve_stdio

__all__ = ["TOOL_ERRORS", "build_server", "serve_stdio"]
