"""A turn's usage: the sum of its stamped calls; none for a turn without any."""

from __future__ import annotations

import pytest
from google.adk.events.event import Event
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from services.common.turn_usage import USAGE_KEY, stamp_call, turn_usage


def _call(
    model: str, tokens_in: int, tokens_out: int, cost: float | None, *, partial: bool = False
) -> Event:
    response = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="...")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens_in, candidates_token_count=tokens_out
        ),
        partial=partial,
    )
    stamp_call(
        response, model=model, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost
    )
    return Event(author="coordinator", invocation_id="inv-1", **response.model_dump())


def _offline_call() -> Event:
    """What the offline model writes: token estimates, no stamp."""
    return Event(
        author="synthesizer",
        invocation_id="inv-1",
        content=types.Content(role="model", parts=[types.Part(text="quoted")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=5000, candidates_token_count=400
        ),
    )


def test_one_model_sums_its_calls() -> None:
    usage = turn_usage(
        [
            _call("openai/gpt-4o-mini", 1000, 100, 0.0002),
            _call("openai/gpt-4o-mini", 234, 110, 0.00011),
        ]
    )
    assert usage == {
        "model": "openai/gpt-4o-mini",
        "input_tokens": 1234,
        "output_tokens": 210,
        "cost_usd": pytest.approx(0.00031),
    }


def test_several_models_are_named_in_order_of_first_use_and_their_costs_summed() -> None:
    usage = turn_usage(
        [
            _call("openai/gpt-4o-mini", 10, 1, 0.001),
            _call("openai/gpt-4o", 20, 2, 0.01),
            _call("openai/gpt-4o-mini", 30, 3, 0.002),
        ]
    )
    assert usage is not None
    assert usage["model"] == "openai/gpt-4o-mini, openai/gpt-4o"
    assert (usage["input_tokens"], usage["output_tokens"]) == (60, 6)
    assert usage["cost_usd"] == pytest.approx(0.013)


def test_one_unpriced_call_makes_the_cost_unknown() -> None:
    usage = turn_usage([_call("openai/gpt-4o-mini", 10, 1, 0.001), _call("ollama/x", 5, 5, None)])
    assert usage is not None
    assert usage["cost_usd"] is None
    assert (usage["input_tokens"], usage["output_tokens"]) == (15, 6)


def test_partial_events_and_offline_calls_are_not_counted() -> None:
    usage = turn_usage(
        [
            _call("gemini-2.5-flash", 999, 999, 1.0, partial=True),  # a chunk of a stream
            _offline_call(),
            _call("gemini-2.5-flash", 100, 20, 0.5),
        ]
    )
    assert usage == {
        "model": "gemini-2.5-flash",
        "input_tokens": 100,
        "output_tokens": 20,
        "cost_usd": 0.5,
    }


def test_a_turn_without_remote_calls_has_no_usage() -> None:
    assert turn_usage([]) is None
    assert turn_usage([_offline_call(), _offline_call()]) is None


def test_the_stamp_keeps_other_custom_metadata() -> None:
    response = LlmResponse(custom_metadata={"trace": "abc"})
    stamp_call(response, model="m", input_tokens=1, output_tokens=2, cost_usd=None)
    assert response.custom_metadata == {
        "trace": "abc",
        USAGE_KEY: {"model": "m", "input_tokens": 1, "output_tokens": 2, "cost_usd": None},
    }
