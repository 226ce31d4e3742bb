"""The synthesizer's thinking setting: the agent built for a Gemini model carries the thinking
config of each setting (none for ``off``); a research turn through ADK's real flow (scripted
models, the permitted stand-in) sends it in the synthesizer's requests only; a thinking
synthesizer's thought never reaches the answer, nor an ``answer`` message on the wire; and a
changed setting rebuilds the chat service at the next turn, as a changed model does. The
library tools are a real, empty library's (the scripted subagent never searches)."""

from __future__ import annotations

import os
import pathlib
from collections.abc import AsyncIterator
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import pytest
import pytest_asyncio
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from services.agent.research.agents import (
    COORDINATOR,
    SEARCH_SUBAGENT,
    build_coordinator,
    build_synthesizer,
)
from services.agent.research.chat import ChatService
from services.agent.research.harness import Harness
from services.agent.research.library_tools import Tool
from services.agent.research.retrieval_tools import CONCLUDE_SEARCH
from services.agent.research.runtime import ResearchRuntime
from services.agent.research.wire import wire_events
from services.common.adk.names import SEARCH_LIBRARY, SYNTHESIZER
from services.common.app_config import ConfigStore
from services.common.models import resolve_model
from services.common.thinking import thinking_config
from services.common.turn_scope import TurnScope
from services.library.library import Library
from services.reranker.models import Embedder
from tests.support.scripted_llm import ScriptedToolLlm, call, text
from tests.support.stack import research_tools_over_grpc

APP, USER = "zocrates", "local"
THOUGHT = "The question wants the optimizer; evidence [7, p. 70] looks closest."
ANSWER = "lmer fits with bobyqa by default."


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "gemini-2.5-flash",
            {
                "low": types.ThinkingConfig(thinking_budget=1024, include_thoughts=True),
                "medium": types.ThinkingConfig(thinking_budget=8192, include_thoughts=True),
                "high": types.ThinkingConfig(thinking_budget=24576, include_thoughts=True),
            },
        ),
        (
            "gemini-3-flash-preview",
            {
                level: types.ThinkingConfig(
                    thinking_level=types.ThinkingLevel(level.upper()), include_thoughts=True
                )
                for level in ("low", "medium", "high")
            },
        ),
    ],
)
def test_the_synthesizer_for_a_gemini_model_carries_each_settings_thinking_config(
    spec: str, expected: dict[str, types.ThinkingConfig]
) -> None:
    for setting in ("off", "low", "medium", "high"):
        agent = build_synthesizer(
            model=resolve_model(spec),
            thinking=thinking_config(spec, setting),  # type: ignore[arg-type]
        )
        assert agent.name == SYNTHESIZER and agent.model == spec
        config = agent.generate_content_config
        assert config is not None
        assert config.thinking_config == expected.get(setting), setting


@pytest_asyncio.fixture
async def library_tools(tmp_path: pathlib.Path, embedder: Embedder) -> AsyncIterator[list[Tool]]:
    library = Library(
        index_dir=tmp_path / "index",
        zotero_dir=tmp_path / "zotero",
        embedder=embedder,
        reranker=None,
        embedding_model="bge_small_en",
    )
    async with research_tools_over_grpc(library) as tools:
        yield tools
    await library.aclose()


def _coordinator() -> ScriptedToolLlm:
    def reply(request: LlmRequest) -> LlmResponse:
        if any(
            p.function_response is not None and p.function_response.name == SEARCH_LIBRARY
            for c in request.contents
            for p in c.parts or []
        ):
            return text("Done.")
        return call(SEARCH_LIBRARY, request="How does lmer pick its optimizer?")

    return ScriptedToolLlm(fallback=reply)


def _thinking_reply() -> LlmResponse:
    """What a thinking Gemini model answers with ``include_thoughts``: a thought part, then the
    answer."""
    return LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(text=THOUGHT, thought=True), types.Part(text=ANSWER)],
        )
    )


async def test_a_turn_sends_the_thinking_config_to_the_synthesizer_and_keeps_thoughts_out(
    library_tools: list[Tool],
) -> None:
    thinking = types.ThinkingConfig(thinking_level=types.ThinkingLevel.HIGH, include_thoughts=True)
    models = {
        COORDINATOR: _coordinator(),
        SEARCH_SUBAGENT: ScriptedToolLlm(
            replies=[call(CONCLUDE_SEARCH, summary="Nothing in the library.", gaps=[])]
        ),
        SYNTHESIZER: ScriptedToolLlm(replies=[_thinking_reply()]),
    }
    sessions = InMemorySessionService()
    agent = build_coordinator(
        models=lambda role: models[role],
        library_tools=library_tools,
        online_tool=None,
        reranker=None,
        harness=Harness,
        synthesizer_thinking=thinking,
    )
    chat = ChatService(
        runner=Runner(app_name=APP, agent=agent, session_service=sessions),
        session_service=sessions,
        app_name=APP,
    )
    session = await sessions.create_session(app_name=APP, user_id=USER)
    stream = await chat.chat(
        app_name=APP,
        user_id=USER,
        session_id=session.id,
        prompt="How does lmer pick its optimizer?",
        scope=TurnScope(),
    )
    events = [e async for e in stream]

    # The synthesizer's request carries the thinking config; the other roles' none.
    (synthesis,) = models[SYNTHESIZER].requests
    assert synthesis.config.thinking_config == thinking
    for role in (COORDINATOR, SEARCH_SUBAGENT):
        assert models[role].requests
        assert all(r.config.thinking_config is None for r in models[role].requests), role

    kind, done = events[-1]
    assert kind == "done" and done["status"] == "completed"
    assert done["answer"] == ANSWER
    assert done["citations"] == []  # not the thought's [7, p. 70]
    messages = [d for k, d in events if k == "message" and d["author"] == SYNTHESIZER]
    answers = [p for d in messages if d["kind"] == "answer" for p in d["parts"]]
    assert [p["text"] for p in answers] == [ANSWER]
    thoughts = [p for d in messages if d["kind"] == "thought" for p in d["parts"]]
    assert thoughts == [{"text": THOUGHT, "thought": True}]


def _event(author: str, *parts: types.Part, scope: str | None = None) -> Event:
    return Event(
        invocation_id="e-1",
        author=author,
        content=types.Content(role="model", parts=list(parts)),
        isolation_scope=scope,
    )


def test_an_answer_message_never_holds_a_thought() -> None:
    thought, answer = types.Part(text=THOUGHT, thought=True), types.Part(text=ANSWER)
    event = _event(SYNTHESIZER, thought, answer, scope="search_pipeline:call_1")
    out = wire_events(event)
    assert [(k, d["kind"], d["parts"]) for k, d in out] == [
        ("message", "thought", [{"text": THOUGHT, "thought": True}]),
        ("message", "answer", [{"text": ANSWER, "thought": False}]),
    ]
    assert {d["event_id"] for _, d in out} == {event.id}
    # A thought alone, or beside a tool call, stays one message as before.
    (only,) = wire_events(_event(SYNTHESIZER, thought, scope="search_pipeline:call_1"))
    assert only[1]["kind"] == "thought"
    (step,) = wire_events(
        _event(
            SEARCH_SUBAGENT,
            thought,
            types.Part(function_call=types.FunctionCall(name=CONCLUDE_SEARCH, args={})),
            scope="search_pipeline:call_1",
        )
    )
    assert step[1]["kind"] == "thought" and len(step[1]["parts"]) == 2


async def test_a_changed_thinking_setting_rebuilds_the_chat_service(
    tmp_path: pathlib.Path, library_tools: list[Tool]
) -> None:
    store = ConfigStore(tmp_path)
    store.update({"synthesizer_model": "gemini-2.5-flash"})
    runtime = ResearchRuntime(
        app_name=APP,
        session_service=InMemorySessionService(),
        library_tools=library_tools,
        reranker=None,
        online_tool=None,
        data_dir=tmp_path,
    )
    first = await runtime.chat_service()
    assert await runtime.chat_service() is first  # nothing changed: the same one
    changed: list[Any] = [first]
    for update in ({"synthesizer_thinking": "low"}, {"synthesizer_thinking": "off"}):
        store.update(update)
        service = await runtime.chat_service()
        assert all(service is not earlier for earlier in changed), update
        changed.append(service)
