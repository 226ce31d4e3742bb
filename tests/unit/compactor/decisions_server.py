"""A Decisions API on 127.0.0.1 speaking OpenRouter's wire format: ``POST
/api/alpha/decisions`` with a JSON body, answered with ``{"answers": {...}}``."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from services.compactor.decision import QUESTION_ID


def answer(p: Any) -> dict[str, Any]:
    return {
        "model": "inception/mercury-decide",
        "answers": {QUESTION_ID: {"type": "noul", "noul": p}},
        "usage": {"input_tokens": 412, "output_tokens": 0},
    }


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=lambda: answer(0.82))
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class DecisionsServer:
    """A Decisions API on a free port: replies are consumed in order, then ``default``."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.default = Reply()
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server._lock:
                    server.requests.append(
                        Seen(self.path, dict(self.headers), json.loads(raw), time.monotonic())
                    )
                    reply = server.replies.pop(0) if server.replies else server.default
                if self.path != "/api/alpha/decisions":
                    reply = Reply(404, {"error": {"message": "Not Found"}})
                time.sleep(reply.delay)
                payload = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=2)
