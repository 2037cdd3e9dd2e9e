"""A local stand-in for a hosted model: an HTTP server on 127.0.0.1 speaking the
OpenAI chat-completions protocol, with scripted replies.

Each request takes the next action of ``script`` if there is one, else asks
``responder(body)``. An action is a dict: ``delay`` (seconds to sleep first, to cause a
client time-out), ``status`` and ``text`` (an error reply), ``headers``, ``content``
(the completion's text) and ``usage`` (False: send none). The default responder reads
"A uses B" / "A runs on B" / "A depends on B" / "A replaces B" sentences out of an
extraction passage, and refuses every question.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Action = dict[str, Any]
_NAME = r"[A-Z][\w-]*(?: [A-Z][\w-]*)*"
_SENTENCE = re.compile(rf"(?P<s>{_NAME}) (?P<p>uses|runs on|depends on|replaces) (?P<o>{_NAME})")


def passage(body: dict[str, Any]) -> str:
    user = body["messages"][-1]["content"]
    return user.split("<<<\n", 1)[-1].rsplit("\n>>>", 1)[0]


def is_extraction(body: dict[str, Any]) -> bool:
    return body["messages"][0]["content"].startswith("You extract")


def rule_responder(body: dict[str, Any]) -> Action:
    if not is_extraction(body):
        return {"content": "I cannot answer that from the notes."}
    triples = [{"subject": m["s"], "predicate": m["p"].replace(" ", "_"), "object": m["o"],
                "kind": "entity"} for m in _SENTENCE.finditer(passage(body))]
    return {"content": json.dumps({"triples": triples})}


class ChatServer:
    """``with ChatServer() as s: s.url`` → ``http://127.0.0.1:<port>/v1``."""

    def __init__(self, responder: Callable[[dict[str, Any]], Action] = rule_responder, *,
                 refuse_schema: bool = False) -> None:
        self.responder = responder
        self.refuse_schema = refuse_schema
        self.script: deque[Action] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size))
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    action = server.script.popleft() if server.script else None
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "no such route"}})
                if server.refuse_schema and "response_format" in body:
                    return self._send(400, {"error": {
                        "message": "response_format json_schema is not supported"}})
                action = action if action is not None else server.responder(body)
                if action.get("delay"):
                    time.sleep(action["delay"])
                if "status" in action:
                    return self._send(action["status"], action.get("text", "error"),
                                      action.get("headers", {}))
                content = action["content"]
                reply: dict[str, Any] = {
                    "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}]}
                if action.get("usage", True):
                    prompt = sum(len(m["content"]) for m in body["messages"]) // 4 + 1
                    reply["usage"] = {"prompt_tokens": prompt,
                                      "completion_tokens": len(content) // 4 + 1,
                                      "total_tokens": prompt + len(content) // 4 + 1}
                return self._send(200, reply)

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None
                      ) -> None:
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a time-out): nothing to answer

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    @property
    def extraction_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if is_extraction(r)]

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
