"""The scripted model (tests/support/scripted_llm.py) fails a call its script does not cover,
so a test that forgot a reply cannot pass on a placeholder answer."""

from __future__ import annotations

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from tests.support.scripted_llm import ScriptedLlm, ScriptedToolLlm, text


def _request(words: str) -> LlmRequest:
    return LlmRequest(
        model="the-agents-model",
        contents=[types.Content(role="user", parts=[types.Part(text=words)])],
    )


async def _answers(model: ScriptedLlm | ScriptedToolLlm, words: str) -> list[str]:
    out = []
    async for response in model.generate_content_async(_request(words)):
        assert response.content is not None and response.content.parts
        out.append(str(response.content.parts[0].text))
    return out


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(ScriptedLlm(replies=["one"]), id="text-replies"),
        pytest.param(ScriptedToolLlm(replies=[text("one")]), id="tool-replies"),
    ],
)
async def test_a_call_past_the_script_fails_naming_the_model_and_request(
    model: ScriptedLlm | ScriptedToolLlm,
) -> None:
    assert await _answers(model, "first question") == ["one"]
    with pytest.raises(AssertionError) as failed:
        await _answers(model, "a question nobody scripted")
    message = str(failed.value)
    assert repr(model.model) in message and "call 2" in message
    assert "the-agents-model" in message and "a question nobody scripted" in message
    assert len(model.requests) == 2


async def test_an_explicit_fallback_answers_every_further_call() -> None:
    assert await _answers(ScriptedLlm(fallback="again"), "q") == ["again"]
    tools = ScriptedToolLlm(replies=[text("first")], fallback=lambda r: text("later"))
    assert await _answers(tools, "q") == ["first"]
    assert await _answers(tools, "q") == await _answers(tools, "q") == ["later"]


async def test_the_failure_reaches_the_test_through_an_adk_run() -> None:
    sessions = InMemorySessionService()  # type: ignore[no-untyped-call]
    agent = LlmAgent(name="assistant", model=ScriptedLlm(), instruction="Answer.")
    runner = Runner(app_name="app", agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name="app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Hello?")])
    with pytest.raises(AssertionError, match="ran out of scripted replies"):
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
