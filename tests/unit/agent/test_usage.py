"""Usage stamps through ADK's real flow: an agent on a scripted model whose responses carry
``usage_metadata``, the stamp kept in the stored event, the offline model never stamped."""

from __future__ import annotations

from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from services.agent.research.usage import MODEL_CALLS, MODEL_COST, MODEL_TOKENS, usage_recorder
from services.common.model_prices import call_cost
from services.common.models import price_name
from services.common.turn_usage import USAGE_KEY, turn_usage
from tests.support.scripted_llm import ScriptedToolLlm

APP, USER = "zocrates", "local"


def _reply(tokens_in: int, tokens_out: int, thoughts: int | None = None) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="An answer.")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens_in,
            candidates_token_count=tokens_out,
            thoughts_token_count=thoughts,
        ),
    )


async def _stored_events(spec: str, *replies: LlmResponse, role: str = "coordinator") -> list:
    sessions = InMemorySessionService()
    agent = LlmAgent(
        name="coordinator",
        model=ScriptedToolLlm(replies=list(replies)),
        instruction="Answer.",
        after_model_callback=usage_recorder(spec, role=role),
    )
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name=APP, user_id=USER)
    for _ in replies:
        message = types.Content(role="user", parts=[types.Part(text="A question?")])
        async for _event in runner.run_async(
            user_id=USER, session_id=session.id, new_message=message
        ):
            pass
    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert stored is not None
    return [e for e in stored.events if e.author != "user"]


def test_price_names() -> None:
    assert price_name("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert price_name(" gemini-2.5-flash ") == "gemini/gemini-2.5-flash"
    assert price_name("litellm/azure/gpt-4o") == "azure/gpt-4o"
    assert price_name("offline") is None
    assert price_name("") is None


def test_the_offline_model_gets_no_recorder() -> None:
    assert usage_recorder("offline") is None
    assert usage_recorder("OFFLINE") is None
    assert usage_recorder("") is None


async def test_a_litellm_call_is_stamped_in_the_stored_event() -> None:
    (event,) = await _stored_events("openai/gpt-4o-mini", _reply(1234, 210))
    expected_cost = call_cost("openai/gpt-4o-mini", input_tokens=1234, output_tokens=210)
    assert expected_cost is not None and expected_cost > 0
    assert event.custom_metadata[USAGE_KEY] == {
        "model": "openai/gpt-4o-mini",
        "input_tokens": 1234,
        "output_tokens": 210,
        "cost_usd": expected_cost,
    }
    assert turn_usage([event]) == event.custom_metadata[USAGE_KEY]


async def test_a_gemini_call_counts_its_thinking_as_output() -> None:
    (event,) = await _stored_events("gemini-2.5-flash", _reply(1000, 100, thoughts=400))
    record = event.custom_metadata[USAGE_KEY]
    assert (record["input_tokens"], record["output_tokens"]) == (1000, 500)
    assert record["cost_usd"] == call_cost(
        "gemini/gemini-2.5-flash", input_tokens=1000, output_tokens=500
    )


async def test_an_unpriced_model_keeps_its_tokens_without_a_cost() -> None:
    events = await _stored_events("openai/coordinator-llm", _reply(100, 20), _reply(300, 40))
    assert turn_usage(events) == {
        "model": "openai/coordinator-llm",
        "input_tokens": 400,
        "output_tokens": 60,
        "cost_usd": None,
    }


def _value(metric, **labels: str) -> float:  # type: ignore[no-untyped-def]
    return metric.labels(**labels)._value.get()


async def test_each_call_counts_in_the_metrics_by_role_and_model() -> None:
    model = "openai/gpt-4o-mini"
    before = (
        _value(MODEL_CALLS, role="synthesizer", model=model),
        _value(MODEL_TOKENS, role="synthesizer", model=model, kind="input"),
        _value(MODEL_TOKENS, role="synthesizer", model=model, kind="output"),
        _value(MODEL_COST, role="synthesizer", model=model),
        _value(MODEL_CALLS, role="coordinator", model=model),
    )
    await _stored_events(model, _reply(1000, 100), _reply(500, 50), role="synthesizer")
    after = (
        _value(MODEL_CALLS, role="synthesizer", model=model),
        _value(MODEL_TOKENS, role="synthesizer", model=model, kind="input"),
        _value(MODEL_TOKENS, role="synthesizer", model=model, kind="output"),
        _value(MODEL_COST, role="synthesizer", model=model),
        _value(MODEL_CALLS, role="coordinator", model=model),
    )
    cost = call_cost(model, input_tokens=1000, output_tokens=100)
    cost2 = call_cost(model, input_tokens=500, output_tokens=50)
    assert cost is not None and cost2 is not None
    deltas = [round(a - b, 9) for a, b in zip(after, before, strict=True)]
    assert deltas == [2, 1500, 150, round(cost + cost2, 9), 0]
