"""A local server speaking OpenAI's Chat Completions wire format, and a record of what leaves
the process.

``serve_openai(responder)`` runs real HTTP on 127.0.0.1 (uvicorn in a thread):
``POST /v1/chat/completions`` answers with a ``chat.completion`` JSON body, or, when the request
asks for ``"stream": true``, with ``data: {...}`` ``chat.completion.chunk`` SSE frames ending in
``data: [DONE]`` (text in small pieces, a tool call's arguments split across frames, a usage
frame when ``stream_options.include_usage`` asks for one). ``responder(body)`` decides the
reply from the request, the way a model would: a text, a text after its reasoning
(:class:`Reasoned`: ``reasoning_content``, the field DeepSeek, vLLM and LiteLLM use, streamed
before the text), or one or more tool calls. Responses say
``Connection: close`` unless ``keep_alive`` is asked for. Every request is recorded with its
headers, the reply it got and the usage reported for it (about a token per four characters of
the request's messages and of the reply, so it differs from call to call and a test can sum
what the server billed); a responder that raises is answered with a 500 and its error
recorded, so the test can report it.

``record_network()`` lists the outgoing connections and host-name look-ups made through Python
sockets while it is open (an audit hook; gRPC's C core is not seen, LiteLLM's HTTP clients are).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import threading
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


@dataclass(frozen=True)
class Reasoned:
    """A reasoning model's reply: its reasoning (``reasoning_content``), then its text."""

    reasoning: str
    text: str


# The settings that say a scripted server stands for a capable model (one that calls tools,
# with a large context): without them the agent probes it for tool calls (its responder does
# not answer the probe's tool) and fits the evidence to a small local window.
CAPABLE_MODEL: dict[str, Any] = {"model_tool_calling": "on", "model_context_window": 131072}

Reply = str | Reasoned | ToolCall | Sequence[ToolCall]
Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class Exchange:
    """One request the server received and what it answered."""

    body: dict[str, Any]
    headers: dict[str, str]
    reply: Reply | None = None
    error: str = ""
    # What the server reported: {"prompt_tokens", "completion_tokens", "total_tokens"}.
    usage: dict[str, int] = field(default_factory=dict)


def message_text(message: dict[str, Any]) -> str:
    """The text of a Chat Completions message (``content`` as a string or a list of parts)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        str(part.get("text") or "")
        for part in content
        if isinstance(part, dict) and part.get("type") == "text"
    )


@dataclass
class OpenAIServer:
    responder: Responder
    text_chunk_size: int = 16
    keep_alive: bool = False
    exchanges: list[Exchange] = field(default_factory=list)
    port: int = 0

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def errors(self) -> list[str]:
        return [e.error for e in self.exchanges if e.error]

    async def chat_completions(self, request: Request) -> Response:
        body = await request.json()
        exchange = Exchange(body=body, headers=dict(request.headers))
        self.exchanges.append(exchange)
        try:
            reply = self.responder(body)
        except Exception as exc:
            exchange.error = traceback.format_exc()  # for the test's own failure messages
            # What a real server answers: its words, not a traceback of this file (whose path,
            # longer in one checkout than another, moved where a long message is clipped).
            return JSONResponse(
                {"error": {"message": str(exc), "type": "server_error"}},
                status_code=500,
                headers=self._headers,
            )
        exchange.reply = reply
        model = str(body.get("model") or "")
        tokens = self._usage(body, reply)
        if body.get("stream"):
            wanted = bool((body.get("stream_options") or {}).get("include_usage"))
            exchange.usage = tokens if wanted else {}
            return StreamingResponse(
                self._sse(reply, model, usage=exchange.usage),
                media_type="text/event-stream",
                headers=self._headers,
            )
        exchange.usage = tokens
        return JSONResponse(self._completion(reply, model, tokens), headers=self._headers)

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, int]:
        calls = self._calls(reply)
        if isinstance(reply, Reasoned):
            out = reply.reasoning + reply.text
        else:
            out = json.dumps([[c.name, c.arguments] for c in calls]) if calls else str(reply)
        prompt = 1 + len(json.dumps(body.get("messages") or [])) // 4
        completion = 1 + len(out) // 4
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    @property
    def _headers(self) -> dict[str, str]:
        # Without keep-alive every request opens its own connection, which record_network sees.
        return {} if self.keep_alive else {"connection": "close"}

    @staticmethod
    def _calls(reply: Reply) -> list[ToolCall]:
        if isinstance(reply, str | Reasoned):
            return []
        if isinstance(reply, ToolCall):
            return [reply]
        return list(reply)

    def _completion(self, reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
        calls = self._calls(reply)
        if calls:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in calls
                ],
            }
            finish = "tool_calls"
        elif isinstance(reply, Reasoned):
            message = {
                "role": "assistant",
                "content": reply.text,
                "reasoning_content": reply.reasoning,
            }
            finish = "stop"
        else:
            message, finish = {"role": "assistant", "content": str(reply)}, "stop"
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }

    async def _sse(
        self, reply: Reply, model: str, *, usage: dict[str, int]
    ) -> AsyncIterator[bytes]:
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"

        def frame(choices: list[dict[str, Any]], **extra: Any) -> bytes:
            chunk = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": choices,
                **extra,
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        def delta(value: dict[str, Any], finish: str | None = None) -> bytes:
            return frame([{"index": 0, "delta": value, "finish_reason": finish}])

        calls = self._calls(reply)
        if calls:
            yield delta({"role": "assistant", "content": None})
            for index, call in enumerate(calls):
                head = {"index": index, "id": call.call_id, "type": "function"}
                yield delta({"tool_calls": [{**head, "function": {"name": call.name}}]})
                arguments = json.dumps(call.arguments)
                for start in range(0, len(arguments), 24):  # the arguments in several pieces
                    piece = {"arguments": arguments[start : start + 24]}
                    yield delta({"tool_calls": [{"index": index, "function": piece}]})
            yield delta({}, "tool_calls")
        else:
            text = reply.text if isinstance(reply, Reasoned) else str(reply)
            yield delta({"role": "assistant", "content": ""})
            reasoning = reply.reasoning if isinstance(reply, Reasoned) else ""
            for start in range(0, len(reasoning), self.text_chunk_size):
                yield delta({"reasoning_content": reasoning[start : start + self.text_chunk_size]})
            for start in range(0, len(text), self.text_chunk_size):
                yield delta({"content": text[start : start + self.text_chunk_size]})
                await asyncio.sleep(0.005)
            yield delta({}, "stop")
        if usage:
            yield frame([], usage=usage)
        yield b"data: [DONE]\n\n"


@contextlib.contextmanager
def serve_openai(
    responder: Responder,
    *,
    text_chunk_size: int = 16,
    keep_alive: bool = False,
    routes: Sequence[Route] = (),
) -> Iterator[OpenAIServer]:
    """An :class:`OpenAIServer` listening on a free port of 127.0.0.1 for the block's duration.

    ``routes`` adds routes of a real server's API beside Chat Completions (a model list, llama.cpp's
    ``/props``, Ollama's ``/api/tags``), in that server's wire format.

    ``keep_alive=False`` (the default) answers ``Connection: close``, so each request comes on
    a connection of its own and :func:`record_network` sees every one.
    """
    server = OpenAIServer(
        responder=responder, text_chunk_size=text_chunk_size, keep_alive=keep_alive
    )
    app = Starlette(
        routes=[Route("/v1/chat/completions", server.chat_completions, methods=["POST"]), *routes]
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server.port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the local OpenAI-compatible server did not start")
        time.sleep(0.01)
    try:
        yield server
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()


# --- what leaves the process -----------------------------------------------------------------


@dataclass
class NetworkLog:
    """Connections (``(host, port, ...)``) and host-name look-ups seen while recording."""

    connects: list[tuple[Any, ...]] = field(default_factory=list)
    lookups: list[Any] = field(default_factory=list)


_RECORDING: list[NetworkLog] = []
_HOOKED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _RECORDING:
        return
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple):  # AF_UNIX paths are not network traffic
            for log in _RECORDING:
                log.connects.append(tuple(address))
    elif event == "socket.getaddrinfo":
        for log in _RECORDING:
            log.lookups.append(args[0])


@contextlib.contextmanager
def record_network() -> Iterator[NetworkLog]:
    """Record the process's outgoing connections and look-ups for the block's duration."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # audit hooks cannot be removed; inert unless recording
        _HOOKED = True
    log = NetworkLog()
    _RECORDING.append(log)
    try:
        yield log
    finally:
        _RECORDING.remove(log)
