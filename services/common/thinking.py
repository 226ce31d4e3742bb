"""A role's thinking setting (``off``, ``low``, ``medium``, ``high``) as the ``ThinkingConfig``
its agent carries, for the models that can think.

The agent carries it as ``generate_content_config.thinking_config``; ADK copies the agent's
config into every request (``google/adk/flows/llm_flows/basic.py``, ``_build_basic_request``),
and each kind of model reads it its own way:

- Gemini (``gemini-...``, google-genai's ``ThinkingConfig``): Gemini 3 and later take a
  ``thinking_level`` (``LOW``, ``MEDIUM``, ``HIGH``); Gemini 2.5 takes a ``thinking_budget`` in
  tokens, :data:`GEMINI_BUDGETS` (24,576 is the most 2.5 Flash allows; all three are within 2.5
  Pro's and Flash-Lite's ranges). A name with no version (``gemini-flash-latest``) gets the
  budget, which Gemini 3 still accepts.
- LiteLLM: ADK's ``LiteLlm`` turns the ``thinking_level`` into LiteLLM's ``reasoning_effort``
  (``low``, ``medium``, ``high``) when the model's entry supports reasoning and lists that
  parameter (``google/adk/models/lite_llm.py``, ``_get_completion_inputs``); LiteLLM then maps
  it to the provider's own (for Anthropic, a thinking budget).
- ``offline``: none; the built-in model does not think.

Only a model that can think gets one: a Gemini or LiteLLM model whose entry in LiteLLM's bundled
model map ``supports_reasoning`` (the same map that prices the calls; a model it does not know
gets none). A model on a local server (``ollama``, ``ollama_chat``, ``lm_studio``,
``hosted_vllm``) never does: a plain OpenAI-compatible server may refuse a parameter it does
not know, and asking LiteLLM about an Ollama model queries the server (``/api/show``).

``include_thoughts`` is on, so the model's thoughts stream to the client as ``thought`` steps;
they never become the answer: ADK's node output leaves thought parts out
(``google/adk/workflow/_llm_agent_wrapper.py``, ``process_llm_agent_output``) and so does the
wire (:mod:`services.agent.research.wire`).
"""

from __future__ import annotations

import functools
import re

from google.genai import types

from services.common.app_config import ThinkingSetting
from services.common.litellm_local import import_litellm
from services.common.models import LITELLM_PROVIDERS, describe_model

# Thinking tokens of a Gemini 2.x model per setting.
GEMINI_BUDGETS: dict[str, int] = {"low": 1024, "medium": 8192, "high": 24576}
LEVELS: dict[str, types.ThinkingLevel] = {
    "low": types.ThinkingLevel.LOW,
    "medium": types.ThinkingLevel.MEDIUM,
    "high": types.ThinkingLevel.HIGH,
}
# The LiteLLM providers that need no key are the local servers.
LOCAL_SERVERS = frozenset(name for name, needs_key in LITELLM_PROVIDERS.items() if not needs_key)
_GEMINI_VERSION = re.compile(r"^gemini-(\d+)")


def thinking_config(spec: str, setting: ThinkingSetting) -> types.ThinkingConfig | None:
    """The thinking config of a role on the model named ``spec`` (a model name of
    :mod:`services.common.models`); ``None`` for ``off`` and for a model that cannot think.

    Imports LiteLLM (seconds the first time) for a remote model: call it from a thread where a
    loop must keep running.

    Raises:
        InvalidArgument: code ``invalid_model``, as :func:`services.common.models.describe_model`.
    """
    described = describe_model(spec)
    if setting == "off" or described["provider"] == "offline":
        return None
    name = described["model"]
    if described["provider"] == "gemini":
        if not _supports_reasoning(f"gemini/{name}"):
            return None
        version = _GEMINI_VERSION.match(name)
        if version and int(version.group(1)) >= 3:
            return types.ThinkingConfig(thinking_level=LEVELS[setting], include_thoughts=True)
        return types.ThinkingConfig(thinking_budget=GEMINI_BUDGETS[setting], include_thoughts=True)
    if name.split("/", 1)[0] in LOCAL_SERVERS or not _supports_reasoning(name):
        return None
    return types.ThinkingConfig(thinking_level=LEVELS[setting], include_thoughts=True)


@functools.lru_cache(maxsize=256)
def _supports_reasoning(model: str) -> bool:
    """Whether LiteLLM's bundled map knows ``model`` as a reasoning model (``False`` when it
    does not know it)."""
    return bool(import_litellm().supports_reasoning(model=model))
