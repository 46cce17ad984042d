"""A local OpenAI-compatible HTTP endpoint for tests: answers are scripted, requests are recorded.

No model is reachable in tests, so this stands in for one over real HTTP (the adapter's code path is
the production one). Script answers with `server.answers.append(...)`: a dict is returned as the JSON
content, a str verbatim (to test malformed answers), an int as an HTTP error status."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeLlmServer:
    url: str = ""
    answers: list[dict[str, Any] | str | int] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    default: dict[str, Any] | str | int = 500


@contextmanager
def fake_llm() -> Iterator[FakeLlmServer]:
    state = FakeLlmServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            state.requests.append(body)
            answer = state.answers.pop(0) if state.answers else state.default
            if isinstance(answer, int):
                self.send_response(answer)
                self.end_headers()
                self.wfile.write(b'{"error": "scripted failure"}')
                return
            content = answer if isinstance(answer, str) else json.dumps(answer)
            reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
