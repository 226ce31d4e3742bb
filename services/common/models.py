"""Turn a role's model name into what ADK's ``LlmAgent(model=...)`` accepts.

Every role (coordinator, subagent, synthesizer, compaction summarizer) names its model by one
string, in one of these forms:

- ``offline`` (or empty): the built-in deterministic model, built by the caller's factory;
- ``gemini-...``: returned as the string, for ADK's registry to build ``Gemini``; it reads
  ``GOOGLE_API_KEY`` (or ``GEMINI_API_KEY``) when it is first called, not here;
- ``<provider>/<model>`` for a LiteLLM provider in :data:`LITELLM_PROVIDERS`, such as
  ``openrouter/anthropic/claude-sonnet-4`` or ``ollama_chat/llama3.1``: an ADK ``LiteLlm``;
- ``litellm/<anything>``: ``<anything>`` handed to LiteLLM unchanged, for the providers this
  list does not name (``azure/...``, ``bedrock/...``).

LiteLLM is imported only when a LiteLLM model is built, through
:func:`services.common.litellm_local.import_litellm`: its network look-ups (model cost map,
Anthropic beta headers) served from the copies inside the wheel, ``.env`` autoloading off and
its "Give Feedback" banner silenced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from google.adk.models.base_llm import BaseLlm

from services.common.errors import InvalidArgument
from services.common.litellm_local import import_litellm

if TYPE_CHECKING:
    from google.adk.models.lite_llm import LiteLlm

OFFLINE_MODEL = "offline"
GEMINI_PREFIX = "gemini-"
LITELLM_PASSTHROUGH = "litellm/"

# LiteLLM provider prefixes accepted as they are, and whether the provider needs an API key
# (the local servers do not).
LITELLM_PROVIDERS: dict[str, bool] = {
    "openrouter": True,
    "openai": True,
    "anthropic": True,
    "groq": True,
    "mistral": True,
    "deepseek": True,
    "together_ai": True,
    "ollama": False,
    "ollama_chat": False,
    "lm_studio": False,
    "hosted_vllm": False,
}

Provider = Literal["offline", "gemini", "litellm"]

# LiteLLM providers that talk to a server at ``model_api_base`` (OpenAI's wire format, or
# Ollama's own API for ollama/ and ollama_chat/).
OPENAI_COMPATIBLE = frozenset({"openai", "hosted_vllm", "lm_studio", "litellm_proxy"})
OLLAMA = frozenset({"ollama", "ollama_chat"})
# A local OpenAI-compatible server needs no key, but LiteLLM refuses to call one without a
# value (it would otherwise read OPENAI_API_KEY and send the user's OpenAI key to this server).
NO_KEY = "no-key-needed"

LOCAL_CALL_TIMEOUT = 300.0  # seconds

# The most tokens one reply of each role may take: a tool call or a search summary is short;
# the answer and the compaction summary are the long ones.
ROLE_MAX_TOKENS: dict[str, int] = {
    "coordinator": 1024,
    "search_subagent": 512,
    "synthesizer": 2048,
    "compaction_summarizer": 1024,
}


class ModelDescription(TypedDict):
    provider: Provider
    model: str
    needs_key: bool


def _accepted_forms() -> str:
    prefixes = ", ".join(f"{name}/..." for name in LITELLM_PROVIDERS)
    return (
        f"'{OFFLINE_MODEL}', '{GEMINI_PREFIX}<name>' (e.g. gemini-2.5-flash), "
        f"a LiteLLM model '<provider>/<name>' with provider one of {prefixes}, "
        f"or '{LITELLM_PASSTHROUGH}<any LiteLLM model>'"
    )


def _invalid(spec: str, why: str) -> InvalidArgument:
    return InvalidArgument(
        f"model {spec!r} {why}; accepted forms: {_accepted_forms()}", code="invalid_model"
    )


def describe_model(spec: str) -> ModelDescription:
    """Which provider serves ``spec``, the model name it receives, and whether it needs a key.

    Raises:
        InvalidArgument: code ``invalid_model`` when ``spec`` is in none of the accepted forms.
    """
    name = spec.strip()
    if not name or name.lower() == OFFLINE_MODEL:
        return {"provider": "offline", "model": OFFLINE_MODEL, "needs_key": False}
    if name.startswith(GEMINI_PREFIX) and len(name) > len(GEMINI_PREFIX):
        return {"provider": "gemini", "model": name, "needs_key": True}
    if name.startswith(LITELLM_PASSTHROUGH):
        passed = name.removeprefix(LITELLM_PASSTHROUGH).strip()
        if not passed:
            raise _invalid(spec, "names no model after 'litellm/'")
        provider = passed.split("/", 1)[0]
        return {
            "provider": "litellm",
            "model": passed,
            "needs_key": LITELLM_PROVIDERS.get(provider, True),
        }
    provider, sep, rest = name.partition("/")
    if sep and provider in LITELLM_PROVIDERS:
        if not rest.strip():
            raise _invalid(spec, f"names no model after '{provider}/'")
        return {"provider": "litellm", "model": name, "needs_key": LITELLM_PROVIDERS[provider]}
    raise _invalid(spec, "is not a known model")


def price_name(spec: str) -> str | None:
    """The name LiteLLM's price map knows ``spec`` by; ``None`` for the offline model, which
    costs nothing and whose token counts are estimates.

    Raises:
        InvalidArgument: code ``invalid_model``, as :func:`describe_model`.
    """
    described = describe_model(spec)
    if described["provider"] == "offline":
        return None
    if described["provider"] == "gemini":
        return f"gemini/{described['model']}"  # Google AI Studio's prices, not Vertex's
    return described["model"]


def resolve_model(
    spec: str,
    *,
    api_base: str = "",
    api_key: str = "",
    offline_factory: Callable[[], BaseLlm] | None = None,
    max_tokens: int | None = None,
) -> str | BaseLlm:
    """The ``model`` argument of an ``LlmAgent`` for ``spec``.

    Args:
        spec: the role's model name, in one of the forms of this module's docstring.
        api_base: base URL of the provider's API (a LiteLLM model's ``api_base``); empty for
            the provider's default.
        api_key: the provider's key; empty to let LiteLLM read the provider's environment
            variable (``OPENROUTER_API_KEY``, ``OPENAI_API_KEY``...). A Gemini model reads
            ``GOOGLE_API_KEY`` and ignores both ``api_base`` and ``api_key``.
        offline_factory: builds the offline model; without it ``offline`` is refused.
        max_tokens: the most tokens a LiteLLM model's reply may take (each role has its own,
            :data:`ROLE_MAX_TOKENS`); a local server without one may generate until it is cut
            off. Gemini models keep their own limit: their thinking counts against it.

    Raises:
        InvalidArgument: code ``invalid_model`` for a name in none of the accepted forms, or
            ``offline`` with no factory.
    """
    described = describe_model(spec)
    if described["provider"] == "offline":
        if offline_factory is None:
            raise InvalidArgument(
                "the offline model is not available here: no offline model factory was given",
                code="invalid_model",
            )
        return offline_factory()
    if described["provider"] == "gemini":
        return described["model"]
    extra: dict[str, Any] = {}
    if api_base:
        extra["api_base"] = api_base
    if api_key:
        extra["api_key"] = api_key
    elif api_base and described["model"].split("/", 1)[0] in OPENAI_COMPATIBLE:
        # A local server needs no key, but LiteLLM will not call it without one, and would
        # otherwise send the user's OPENAI_API_KEY to this server.
        extra["api_key"] = NO_KEY
    if max_tokens:
        extra["max_tokens"] = max_tokens
    if api_base:
        # A local server that stalls ends the call instead of holding the turn (LiteLLM's own
        # default waits 6,000 s); a slow CPU's longest answer takes a few minutes.
        extra["timeout"] = LOCAL_CALL_TIMEOUT
    # LiteLlm hands every extra keyword to litellm.acompletion on each call.
    return _lite_llm_class()(model=described["model"], **extra)


@functools.cache
def _lite_llm_class() -> type[LiteLlm]:
    """ADK's ``LiteLlm``, with LiteLLM imported and configured to stay quiet and local."""
    import_litellm()
    from google.adk.models.lite_llm import LiteLlm

    return LiteLlm
