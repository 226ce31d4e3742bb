"""Models through LiteLLM, end to end against a local server speaking OpenAI's wire format.

The server is real HTTP on 127.0.0.1 (uvicorn in a thread): ``POST /v1/chat/completions``,
answering with a JSON body or, for ``"stream": true``, with ``data: {...}`` SSE chunks ending
in ``data: [DONE]``. A real ADK ``Runner`` drives an ``LlmAgent`` whose model comes from
``resolve_model``; an audit hook records every outgoing connection and DNS look-up so the tests
can prove LiteLLM talks to nothing but that server.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import pytest
import uvicorn
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from google.adk.models.registry import LLMRegistry
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from services.common.errors import InvalidArgument
from services.common.models import (
    LITELLM_PROVIDERS,
    OFFLINE_MODEL,
    describe_model,
    resolve_model,
)
from tests.support.processes import fresh_python_report
from tests.support.scripted_llm import ScriptedLlm

pytestmark = [
    pytest.mark.timeout(60),
    # LiteLLM's own TypedDicts, when pydantic first builds their schema.
    pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"),
]

APP = "zocrates-test"
USER = "u1"
API_KEY = "sk-test-4f2a"
TOOL_ARGS = {"topic": "mixed models optimizer", "year": 2019}
PAPER = "Fitting Linear Mixed-Effects Models Using lme4"
FINAL_TEXT = "lme4 fits with nloptwrap (BOBYQA) by default [Bates 2015]."
# One model call may wait this long at most (LiteLLM's own default is 6,000 s).
CALL_TIMEOUT_MS = 10_000


# --- what leaves the process ---------------------------------------------------------------


@dataclass
class NetworkLog:
    """Connections and DNS look-ups seen by the audit hook while ``recording`` is set."""

    recording: bool = False
    connects: list[Any] = field(default_factory=list)
    lookups: list[Any] = field(default_factory=list)


_NETWORK = NetworkLog()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _NETWORK.recording:
        return
    if event == "socket.connect":
        _NETWORK.connects.append(args[1])
    elif event == "socket.getaddrinfo":
        _NETWORK.lookups.append(args[0])


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one is inert unless recording


@pytest.fixture
def network() -> Iterator[NetworkLog]:
    _NETWORK.connects.clear()
    _NETWORK.lookups.clear()
    _NETWORK.recording = True
    try:
        yield _NETWORK
    finally:
        _NETWORK.recording = False


def _only_to(log: NetworkLog, port: int) -> None:
    """Every recorded connection went to the fake server, and no host name was looked up."""
    assert log.connects, "the model call made no connection at all"
    assert all(tuple(address[:2]) == ("127.0.0.1", port) for address in log.connects), log.connects
    assert all(host in ("127.0.0.1", b"127.0.0.1") for host in log.lookups), log.lookups


# --- the fake provider ---------------------------------------------------------------------


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = "call_find_1"


@dataclass
class FakeOpenAI:
    """Answers the n-th request with the n-th scripted reply (a text or a tool call)."""

    replies: list[str | ToolCall] = field(default_factory=list)
    text_chunk_size: int = 12
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    port: int = 0

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def chat_completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        index = len(self.requests) - 1
        if index >= len(self.replies):
            return JSONResponse({"error": {"message": "no scripted reply left"}}, 500)
        reply = self.replies[index]
        if body.get("stream"):
            return StreamingResponse(
                self._sse(reply, body["model"]), media_type="text/event-stream"
            )
        return JSONResponse(self._completion(reply, body["model"]))

    def _completion(self, reply: str | ToolCall, model: str) -> dict[str, Any]:
        if isinstance(reply, ToolCall):
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": reply.call_id,
                        "type": "function",
                        "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
                    }
                ],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": reply}, "stop"
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
        }

    async def _sse(self, reply: str | ToolCall, model: str) -> AsyncIterator[bytes]:
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:8]}"

        def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        if isinstance(reply, ToolCall):
            arguments = json.dumps(reply.arguments)
            head = {"id": reply.call_id, "type": "function"}
            yield frame(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"index": 0, **head, "function": {"name": reply.name, "arguments": ""}}
                    ],
                }
            )
            for start in range(0, len(arguments), 9):  # the arguments in several pieces
                piece = arguments[start : start + 9]
                yield frame({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            yield frame({}, "tool_calls")
        else:
            yield frame({"role": "assistant", "content": ""})
            for start in range(0, len(reply), self.text_chunk_size):
                yield frame({"content": reply[start : start + self.text_chunk_size]})
                await asyncio.sleep(0.01)
            yield frame({}, "stop")
        yield b"data: [DONE]\n\n"


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    app = Starlette(routes=[Route("/v1/chat/completions", fake.chat_completions, methods=["POST"])])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    fake.port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "fake server did not start"
        time.sleep(0.01)
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# --- the agent -----------------------------------------------------------------------------


def _agent(fake: FakeOpenAI, calls: list[dict[str, Any]]) -> LlmAgent:
    async def find_papers(topic: str, year: int) -> dict[str, Any]:
        """Finds papers in the user's Zotero library about a topic, published in a year.

        Call it before answering any question about the literature.

        Args:
            topic: what the papers are about, in a few words.
            year: the publication year.

        Returns:
            A dict whose "papers" lists the matching papers' titles.
        """
        calls.append({"topic": topic, "year": year})
        return {"papers": [PAPER]}

    return LlmAgent(
        name="coordinator",
        model=resolve_model("openai/test-model", api_base=fake.api_base, api_key=API_KEY),
        instruction="Answer from the user's library.",
        tools=[find_papers],
        generate_content_config=types.GenerateContentConfig(
            http_options=types.HttpOptions(timeout=CALL_TIMEOUT_MS)
        ),
    )


async def _run(agent: LlmAgent, run_config: RunConfig | None = None) -> list[Event]:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=APP, user_id=USER)
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    message = types.Content(role="user", parts=[types.Part(text="Which optimizer does lmer use?")])
    return [
        event
        async for event in runner.run_async(
            user_id=USER, session_id=session.id, new_message=message, run_config=run_config
        )
    ]


def _text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(part.text or "" for part in parts if not part.thought)


def _assert_protocol(fake: FakeOpenAI, *, stream: bool) -> None:
    """Both requests reached the server as OpenAI Chat Completions with our key and tool."""
    assert len(fake.requests) == 2
    for body, headers in zip(fake.requests, fake.headers, strict=True):
        assert headers["authorization"] == f"Bearer {API_KEY}"
        assert body["model"] == "test-model"  # LiteLLM strips the "openai/" provider prefix
        assert bool(body.get("stream")) is stream
        (tool,) = body["tools"]
        assert tool["type"] == "function"
        assert tool["function"]["name"] == "find_papers"
        assert "Finds papers" in tool["function"]["description"]
        parameters = tool["function"]["parameters"]
        assert parameters["type"] == "object"
        assert parameters["properties"]["topic"]["type"] == "string"
        assert parameters["properties"]["year"]["type"] == "integer"
        assert set(parameters["required"]) == {"topic", "year"}
    first, second = fake.requests
    assert first["messages"][0]["role"] == "system"
    assert "Answer from the user's library." in first["messages"][0]["content"]
    assert first["messages"][-1]["role"] == "user"
    assert not any(m["role"] == "tool" for m in first["messages"])
    # The second request replays the assistant's tool call and carries the tool's result.
    (assistant,) = [m for m in second["messages"] if m["role"] == "assistant"]
    (echoed_call,) = assistant["tool_calls"]
    assert echoed_call["id"] == "call_find_1"
    assert echoed_call["function"]["name"] == "find_papers"
    assert json.loads(echoed_call["function"]["arguments"]) == TOOL_ARGS
    (tool_message,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_message["tool_call_id"] == "call_find_1"
    assert json.loads(tool_message["content"]) == {"papers": [PAPER]}
    assert second["messages"][-1] is tool_message


async def test_a_tool_call_round_trip_through_litellm(
    fake_openai: FakeOpenAI, network: NetworkLog
) -> None:
    fake_openai.replies = [ToolCall("find_papers", TOOL_ARGS), FINAL_TEXT]
    calls: list[dict[str, Any]] = []

    events = await _run(_agent(fake_openai, calls))

    assert calls == [TOOL_ARGS]
    (call_event,) = [e for e in events if e.get_function_calls()]
    (call,) = call_event.get_function_calls()
    assert (call.name, call.args) == ("find_papers", TOOL_ARGS)
    (response_event,) = [e for e in events if e.get_function_responses()]
    (response,) = response_event.get_function_responses()
    assert response.response == {"papers": [PAPER]}
    assert events[-1].is_final_response() and _text(events[-1]) == FINAL_TEXT
    assert not any(e.partial for e in events)
    _assert_protocol(fake_openai, stream=False)
    _only_to(network, fake_openai.port)


async def test_streaming_assembles_chunked_text_and_a_chunked_tool_call(
    fake_openai: FakeOpenAI, network: NetworkLog
) -> None:
    fake_openai.replies = [ToolCall("find_papers", TOOL_ARGS), FINAL_TEXT]
    calls: list[dict[str, Any]] = []

    events = await _run(_agent(fake_openai, calls), RunConfig(streaming_mode=StreamingMode.SSE))

    assert calls == [TOOL_ARGS]  # the arguments arrived in pieces and were joined
    # Partial events show the call while it streams in; only the final one is executed.
    (call_event,) = [e for e in events if e.get_function_calls() and not e.partial]
    assert [(c.name, c.args) for c in call_event.get_function_calls()] == [
        ("find_papers", TOOL_ARGS)
    ]
    partial_texts = [_text(e) for e in events if e.partial and _text(e)]
    assert len(partial_texts) >= 3, partial_texts
    assert "".join(partial_texts) == FINAL_TEXT
    final = events[-1]
    assert final.is_final_response() and not final.partial and _text(final) == FINAL_TEXT
    _assert_protocol(fake_openai, stream=True)
    _only_to(network, fake_openai.port)


def test_importing_litellm_through_models_py_touches_no_network() -> None:
    """In a fresh interpreter without the env var: models.py must keep LiteLLM local."""
    script = """
        from services.common.models import resolve_model
        model = resolve_model("openrouter/meta-llama/llama-3.1-8b-instruct", api_key="k")
        model.capabilities  # makes LiteLLM look the model up in its cost map
        import litellm
        litellm.get_model_info("gpt-4o-mini")
        print(json.dumps({
            "seen": seen,
            "cost_map": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
            "mode": os.environ.get("LITELLM_MODE"),
            "suppress_debug_info": litellm.suppress_debug_info,
        }))
        """
    report = fresh_python_report(script)
    assert report == {
        "seen": [],
        "cost_map": "True",
        "mode": "PRODUCTION",
        "suppress_debug_info": True,
    }


# --- resolve_model and describe_model --------------------------------------------------------


@pytest.mark.parametrize("provider", sorted(LITELLM_PROVIDERS))
def test_each_litellm_provider_prefix_builds_a_litellm_model(provider: str) -> None:
    spec = f"{provider}/some-org/some-model"
    model = resolve_model(spec, api_base="http://127.0.0.1:9/v1", api_key="k")
    assert isinstance(model, LiteLlm) and model.model == spec
    assert describe_model(spec) == {
        "provider": "litellm",
        "model": spec,
        "needs_key": provider not in {"ollama", "ollama_chat", "lm_studio", "hosted_vllm"},
    }


@pytest.mark.parametrize(
    ("spec", "passed", "needs_key"),
    [
        ("litellm/azure/my-gpt-4o-deployment", "azure/my-gpt-4o-deployment", True),
        ("litellm/bedrock/anthropic.claude-3-haiku", "bedrock/anthropic.claude-3-haiku", True),
        ("litellm/ollama_chat/qwen2.5:7b", "ollama_chat/qwen2.5:7b", False),
    ],
)
def test_the_litellm_prefix_passes_the_rest_through(
    spec: str, passed: str, needs_key: bool
) -> None:
    model = resolve_model(spec)
    assert isinstance(model, LiteLlm) and model.model == passed
    assert describe_model(spec) == {"provider": "litellm", "model": passed, "needs_key": needs_key}


def test_a_gemini_name_stays_a_string_for_adks_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    model = resolve_model(" gemini-2.5-flash ", api_key="ignored")
    assert model == "gemini-2.5-flash"
    assert LLMRegistry.resolve("gemini-2.5-flash") is Gemini
    # Building the agent needs no key; the key is read when the model is first called.
    agent = LlmAgent(name="coordinator", model=model)
    assert isinstance(agent.canonical_model, Gemini)
    assert describe_model("gemini-2.5-flash") == {
        "provider": "gemini",
        "model": "gemini-2.5-flash",
        "needs_key": True,
    }


@pytest.mark.parametrize("spec", ["offline", "OFFLINE", "", "  "])
def test_offline_comes_from_the_factory(spec: str) -> None:
    built = ScriptedLlm(replies=["extractive answer"])
    assert resolve_model(spec, offline_factory=lambda: built) is built
    assert describe_model(spec) == {
        "provider": "offline",
        "model": OFFLINE_MODEL,
        "needs_key": False,
    }


def test_offline_without_a_factory_is_refused() -> None:
    with pytest.raises(InvalidArgument) as caught:
        resolve_model(OFFLINE_MODEL)
    assert caught.value.code == "invalid_model"
    assert caught.value.http_status == 400


@pytest.mark.parametrize(
    "spec",
    ["gpt-4o", "claude-3-5-sonnet", "vertex_ai/gemini-2.5-pro", "openai/", "litellm/", "gemini-"],
)
def test_unknown_forms_are_invalid_model_with_the_accepted_forms_listed(spec: str) -> None:
    for call in (lambda: resolve_model(spec), lambda: describe_model(spec)):
        with pytest.raises(InvalidArgument) as caught:
            call()
        assert caught.value.code == "invalid_model"
        message = caught.value.message
        assert repr(spec) in message
        assert all(f"{provider}/..." in message for provider in LITELLM_PROVIDERS)
        assert "gemini-" in message and "litellm/" in message and "'offline'" in message
