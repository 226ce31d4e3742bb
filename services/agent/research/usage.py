"""Each remote model call's tokens and cost, stamped on its response (see
:mod:`services.common.turn_usage`), as an ``after_model_callback`` of the role's agent.

Tokens come from ADK's ``usage_metadata``: ``prompt_token_count`` in;
``candidates_token_count`` out, plus ``thoughts_token_count`` for a Gemini model (Gemini counts
its thinking apart from the answer and bills it as output; LiteLLM already counts reasoning in
``completion_tokens``, which ADK maps to ``candidates_token_count``). Partial responses of a
stream are skipped: the final response of each call carries the whole call's usage.

The same figures feed the agent's Prometheus counters, by role and model, as each call ends
(a turn that pauses at a checkpoint has counted its calls so far).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_response import LlmResponse
from prometheus_client import Counter

from services.common.metrics import REGISTRY
from services.common.model_prices import call_cost
from services.common.models import describe_model, price_name
from services.common.turn_usage import stamp_call

UsageCallback = Callable[[CallbackContext, LlmResponse], Awaitable[None]]

MODEL_CALLS = Counter(
    "zocrates_agent_model_calls_total",
    "Remote model calls of research turns, by role (coordinator, search_subagent, synthesizer) "
    "and model as configured. The offline model's calls are not counted.",
    ["role", "model"],
    registry=REGISTRY,
)
MODEL_TOKENS = Counter(
    "zocrates_agent_model_tokens_total",
    "Tokens of remote model calls of research turns, by role, model and kind ('input', "
    "'output'; output includes a Gemini model's thinking, as it is billed).",
    ["role", "model", "kind"],
    registry=REGISTRY,
)
MODEL_COST = Counter(
    "zocrates_agent_model_cost_usd_total",
    "Dollars of remote model calls whose price is known, by role and model.",
    ["role", "model"],
    registry=REGISTRY,
)


def usage_recorder(spec: str, *, role: str = "") -> UsageCallback | None:
    """The callback that stamps the calls of the model named ``spec`` (the model of ``role``,
    which labels the metrics); ``None`` for the offline model, whose calls are never counted."""
    priced_as = price_name(spec)
    if priced_as is None:
        return None
    model = spec.strip()
    thoughts_are_output = describe_model(spec)["provider"] == "gemini"

    async def record_usage(callback_context: CallbackContext, llm_response: LlmResponse) -> None:
        usage = llm_response.usage_metadata
        if llm_response.partial or usage is None:
            return
        input_tokens = usage.prompt_token_count or 0
        output_tokens = usage.candidates_token_count or 0
        if thoughts_are_output:
            output_tokens += usage.thoughts_token_count or 0
        # The first look-up imports LiteLLM (seconds): not on the loop that streams the turn.
        cost = await asyncio.to_thread(
            call_cost, priced_as, input_tokens=input_tokens, output_tokens=output_tokens
        )
        MODEL_CALLS.labels(role=role, model=model).inc()
        MODEL_TOKENS.labels(role=role, model=model, kind="input").inc(input_tokens)
        MODEL_TOKENS.labels(role=role, model=model, kind="output").inc(output_tokens)
        if cost is not None:
            MODEL_COST.labels(role=role, model=model).inc(cost)
        stamp_call(
            llm_response,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost,
        )

    return record_usage
