"""The thinking setting per kind of model: Gemini 2.5 a budget, Gemini 3 a level, a LiteLLM
reasoning model a level (ADK's LiteLlm sends it as ``reasoning_effort``), and nothing for
``off``, the offline model, a model that does not think, a name LiteLLM's map does not know,
or a local server (never asked: no connection)."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import pytest
from google.genai import types

from services.common.errors import InvalidArgument
from services.common.thinking import GEMINI_BUDGETS, thinking_config
from tests.support.openai_server import record_network

LEVELS = {
    "low": types.ThinkingLevel.LOW,
    "medium": types.ThinkingLevel.MEDIUM,
    "high": types.ThinkingLevel.HIGH,
}


@pytest.mark.parametrize("setting", ["low", "medium", "high"])
@pytest.mark.parametrize("spec", ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite"])
def test_gemini_2_5_gets_a_thinking_budget(spec: str, setting: str) -> None:
    assert thinking_config(spec, setting) == types.ThinkingConfig(
        thinking_budget=GEMINI_BUDGETS[setting], include_thoughts=True
    )


def test_the_gemini_budgets_grow_and_fit_every_2_5_model() -> None:
    # 2.5 Pro takes 128-32,768 tokens, Flash 0-24,576, Flash-Lite 512-24,576.
    budgets = [GEMINI_BUDGETS[s] for s in ("low", "medium", "high")]
    assert budgets == sorted(budgets) and budgets[0] >= 512 and budgets[-1] <= 24_576


@pytest.mark.parametrize("setting", ["low", "medium", "high"])
@pytest.mark.parametrize("spec", ["gemini-3-flash-preview", "gemini-3.1-pro-preview"])
def test_gemini_3_gets_a_thinking_level(spec: str, setting: str) -> None:
    assert thinking_config(spec, setting) == types.ThinkingConfig(
        thinking_level=LEVELS[setting], include_thoughts=True
    )


@pytest.mark.parametrize("setting", ["low", "medium", "high"])
@pytest.mark.parametrize(
    "spec",
    [
        "openai/gpt-5",
        "openai/o3-mini",
        "anthropic/claude-sonnet-4-5",
        "openrouter/openai/o3-mini",
        "deepseek/deepseek-reasoner",
        "litellm/azure/o3-mini",
    ],
)
def test_a_litellm_reasoning_model_gets_the_level(spec: str, setting: str) -> None:
    assert thinking_config(spec, setting) == types.ThinkingConfig(
        thinking_level=LEVELS[setting], include_thoughts=True
    )


@pytest.mark.parametrize(
    "spec",
    [
        "gemini-2.0-flash",  # does not think
        "gemini-1.5-pro",
        "openai/gpt-4o",  # known, not a reasoning model
        "deepseek/deepseek-chat",
        "openai/synthesizer-llm",  # unknown to LiteLLM's map
        "offline",
        "",
    ],
)
def test_a_model_that_does_not_think_gets_none(spec: str) -> None:
    assert thinking_config(spec, "high") is None


@pytest.mark.parametrize(
    "spec", ["ollama_chat/qwen3", "ollama/qwen3", "lm_studio/qwen3", "hosted_vllm/qwen3"]
)
def test_a_local_server_gets_none_and_is_not_asked(spec: str) -> None:
    with record_network() as network:
        assert thinking_config(spec, "high") is None
    assert network.connects == [] and network.lookups == []


@pytest.mark.parametrize("spec", ["gemini-2.5-flash", "openai/gpt-5", "offline"])
def test_off_is_none(spec: str) -> None:
    assert thinking_config(spec, "off") is None


def test_an_invalid_model_name_is_refused_as_resolve_model_does() -> None:
    with pytest.raises(InvalidArgument) as caught:
        thinking_config("claude-sonnet", "high")
    assert caught.value.code == "invalid_model"
