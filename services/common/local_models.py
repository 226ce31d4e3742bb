"""What a model server on the user's machine offers, asked of the server itself.

A local server (llama.cpp's ``llama-server`` or llama-cpp-python's, Ollama, LM Studio, vLLM)
is named by ``model_api_base``. This module asks it, over plain HTTP, which models it serves
(:func:`list_models`: OpenAI's ``/v1/models`` or Ollama's ``/api/tags``) and how many tokens
its context holds (:func:`context_window`), and, through LiteLLM as a turn would call it,
whether a model makes tool calls (:func:`probe_tool_calling`) and what one tiny completion
answers (:func:`test_model`). Capability is the server's as well as the model's: a server may
leave the tools out of its prompt template, or refuse a streamed ``tool_choice: auto``.

Errors are :class:`ModelServerError` with a stable code and the server's own words:
``invalid_api_base`` (400), ``model_server_unreachable``, ``model_server_error`` and
``model_test_failed`` (503).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from services.common.errors import InvalidArgument, Unavailable, ZocratesError
from services.common.litellm_local import import_litellm
from services.common.models import NO_KEY, OLLAMA, OPENAI_COMPATIBLE, describe_model

logger = logging.getLogger(__name__)


# A local server that does not state its context: llama.cpp's and Ollama's common default.
DEFAULT_LOCAL_WINDOW = 4096
LIST_TIMEOUT = 5.0
TEST_TIMEOUT = 120.0
PROBE_TOOL = "record_city"
# What API keys look like (sk-..., sk-or-..., gsk_..., AIza...): never in an error's words.
_KEYLIKE = re.compile(r"\b(?:sk-[\w-]{8,}|gsk_\w{8,}|AIza[\w-]{20,})")


class ModelServerError(Unavailable):
    """The model server could not be reached, or answered with an error (its words kept).
    A 503, as any service that is down: the same status through the agent's gRPC."""

    default_code = "model_server_error"


@dataclass(frozen=True, slots=True)
class ServerModel:
    id: str  # the server's name for it
    model: str  # what a role's model setting takes: "openai/<id>", "ollama_chat/<id>"
    context_window: int | None = None


def check_api_base(api_base: str) -> str:
    """``api_base`` without a trailing slash; refused unless it is an http(s) URL."""
    base = api_base.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgument(
            f"model_api_base {api_base!r} is not an http:// or https:// URL; a local server's "
            "is like http://127.0.0.1:8080/v1 (llama.cpp) or http://127.0.0.1:11434 (Ollama).",
            code="invalid_api_base",
        )
    return base


def server_root(api_base: str) -> str:
    """The server's root: ``api_base`` without its ``/v1``."""
    base = check_api_base(api_base)
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _unreachable(url: str, exc: Exception) -> ModelServerError:
    return ModelServerError(
        f"Could not reach the model server at {url} ({type(exc).__name__}: {exc or 'no reply'}). "
        "Is it running, and is model_api_base its address?",
        code="model_server_unreachable",
    )


async def _get(client: httpx.AsyncClient, url: str) -> Any | None:
    """The JSON of ``url``; None when the server has no such route (404, 405, not JSON)."""
    try:
        response = await client.get(url)
    except httpx.HTTPError as exc:
        raise _unreachable(url, exc) from None
    if response.status_code in (404, 405, 501):
        return None
    if response.status_code >= 400:
        raise ModelServerError(
            f"The model server answered {response.status_code} to GET {url}: "
            f"{_server_words(response.text)}"
        )
    try:
        return response.json()
    except ValueError:
        return None


def _entry_context(entry: dict[str, Any]) -> int | None:
    """The context size an entry of ``/v1/models`` states, in the fields servers use."""
    meta: dict[str, Any] = entry["meta"] if isinstance(entry.get("meta"), dict) else {}
    for value in (
        entry.get("max_model_len"),  # vLLM
        entry.get("context_length"),  # LM Studio, OpenRouter
        entry.get("max_context_length"),  # LM Studio's /api/v0
        meta.get("n_ctx"),
        meta.get("n_ctx_train"),  # llama.cpp's llama-server
    ):
        if isinstance(value, int) and value > 0:
            return value
    return None


async def list_models(
    api_base: str, *, timeout: float = LIST_TIMEOUT
) -> tuple[str, list[ServerModel]]:
    """(``"ollama"`` or ``"openai"``, the models the server at ``api_base`` lists).

    Raises:
        InvalidArgument: ``invalid_api_base``.
        ModelServerError: ``model_server_unreachable``, or ``model_server_error`` when the
            server lists no models through either API.
    """
    root = server_root(api_base)
    async with httpx.AsyncClient(timeout=timeout) as client:
        tags = await _get(client, f"{root}/api/tags")
        if isinstance(tags, dict) and isinstance(tags.get("models"), list):
            names = [str(m.get("name") or m.get("model")) for m in tags["models"] if m]
            return "ollama", [ServerModel(n, f"ollama_chat/{n}") for n in names if n]
        listed = await _get(client, f"{root}/v1/models")
    if isinstance(listed, dict) and isinstance(listed.get("data"), list):
        models = [
            ServerModel(str(e["id"]), f"openai/{e['id']}", _entry_context(e))
            for e in listed["data"]
            if isinstance(e, dict) and e.get("id")
        ]
        return "openai", models
    raise ModelServerError(
        f"The server at {root} lists no models: neither GET {root}/v1/models (OpenAI) nor "
        f"GET {root}/api/tags (Ollama) answered with a model list."
    )


def served_name(spec: str) -> str:
    """The server's name for a role's model: ``openai/smollm2`` -> ``smollm2``."""
    name = spec.strip().removeprefix("litellm/")
    provider, _, rest = name.partition("/")
    return rest if provider in OPENAI_COMPATIBLE | OLLAMA and rest else name


async def context_window(api_base: str, spec: str, *, timeout: float = LIST_TIMEOUT) -> int | None:
    """The tokens the server's context holds for ``spec``; None when it does not say.

    llama.cpp's server states its ``n_ctx`` at ``/props``; vLLM, LM Studio and llama-server
    state one in ``/v1/models``; Ollama's ``/api/show`` gives the model's trained length.
    """
    root = server_root(api_base)
    name = served_name(spec)
    async with httpx.AsyncClient(timeout=timeout) as client:
        props = await _get(client, f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings") or {}
            for value in (settings.get("n_ctx"), props.get("n_ctx")):
                if isinstance(value, int) and value > 0:
                    return value
        if spec.split("/", 1)[0] in OLLAMA:
            try:
                shown = await client.post(f"{root}/api/show", json={"model": name})
                info = shown.json().get("model_info") or {} if shown.status_code == 200 else {}
            except (httpx.HTTPError, ValueError):
                info = {}
            lengths = [v for k, v in info.items() if k.endswith(".context_length")]
            return int(lengths[0]) if lengths else None
        listed = await _get(client, f"{root}/v1/models")
    if isinstance(listed, dict):
        for entry in listed.get("data") or []:
            if isinstance(entry, dict) and entry.get("id") == name:
                return _entry_context(entry)
    return None


def is_local(spec: str, api_base: str) -> bool:
    """Whether ``spec`` is served by a server the user runs: at ``model_api_base``, or by a
    provider that is always local (Ollama, LM Studio, vLLM)."""
    described = describe_model(spec)
    if described["provider"] != "litellm":
        return False
    provider = described["model"].split("/", 1)[0]
    if provider in OLLAMA or provider in ("lm_studio", "hosted_vllm"):
        return True
    return bool(api_base) and provider in OPENAI_COMPATIBLE


async def window_for(spec: str, api_base: str, configured: int = 0) -> int | None:
    """The context window to fit ``spec``'s prompts to: ``configured`` (model_context_window)
    when set, else what a local server states, else :data:`DEFAULT_LOCAL_WINDOW` for a local
    server; None (no limit applied) for a hosted model."""
    if configured:
        return configured
    if not is_local(spec, api_base):
        return None
    if api_base:
        try:
            stated = await context_window(api_base, spec)
        except ZocratesError as exc:
            logger.warning("%s: the server did not say its context size (%s)", spec, exc)
            stated = None
        if stated:
            return stated
    return DEFAULT_LOCAL_WINDOW


def _server_words(text: str, limit: int = 400) -> str:
    """The message of an error body (OpenAI's ``{"error": {"message"}}``, Ollama's
    ``{"error": "..."}``, or the text), any key in it hidden, then clipped (a key clipped
    first could leave a prefix too short to be recognised)."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, dict):
            error = error.get("message") or error
        if error:
            text = str(error)
    text = _KEYLIKE.sub("[key hidden]", " ".join(text.split()))  # a server may echo the key
    return text if len(text) <= limit else text[: limit - 3] + "..."


def completion_kwargs(spec: str, api_base: str, api_key: str) -> dict[str, Any]:
    """LiteLLM's ``model``, ``api_base`` and ``api_key`` for ``spec`` at ``api_base``."""
    described = describe_model(spec)
    kwargs: dict[str, Any] = {"model": described["model"]}
    if described["provider"] == "gemini":
        kwargs["model"] = f"gemini/{described['model']}"
    if api_base and described["provider"] == "litellm":
        kwargs["api_base"] = check_api_base(api_base)
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and described["model"].split("/", 1)[0] in OPENAI_COMPATIBLE:
        kwargs["api_key"] = NO_KEY
    return kwargs


def _no_connection(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a failure to connect: LiteLLM reports a refused
    connection to an OpenAI-compatible server as an InternalServerError "Connection error"."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        if isinstance(seen, httpx.ConnectError | httpx.ConnectTimeout | ConnectionError):
            return True
        if type(seen).__name__ == "APIConnectionError" or "Connection error" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def model_failure(exc: BaseException, *, api_base: str = "") -> ModelServerError | None:
    """A model provider's error (LiteLLM's, OpenAI's client's, httpx's) raised by a turn, in
    words a user can act on; None for any other error."""
    module = type(exc).__module__.split(".", 1)[0]
    if module not in ("litellm", "openai", "httpx"):
        return None
    name = str(getattr(exc, "model", "") or "the model")
    return _failure(name, exc, api_base)


def _failure(spec: str, exc: BaseException, api_base: str = "") -> ModelServerError:
    """A LiteLLM error in words a user can act on, the server's own message kept."""
    litellm = import_litellm()
    words = _server_words(str(getattr(exc, "message", "") or exc))
    # LiteLLM's wrapping: "litellm.InternalServerError: InternalServerError: OpenAIException - "
    words = re.sub(r"^(?:litellm\.)?(?:\w+(?:Error|Exception)(?::| -)\s*)+", "", words).strip()
    where = f" at {api_base}" if api_base else ""
    if _no_connection(exc) or isinstance(exc, litellm.Timeout):
        return ModelServerError(
            f"Could not reach the server of {spec}{where} ({words.rstrip('.')}). Is it "
            "running, and is model_api_base its address?",
            code="model_server_unreachable",
        )
    if isinstance(exc, litellm.NotFoundError):
        words += " (the server does not serve this model: pick one it lists)"
    return ModelServerError(f"{spec} failed: {words}", code="model_test_failed")


async def test_model(
    spec: str, api_base: str = "", api_key: str = "", *, timeout: float = TEST_TIMEOUT
) -> dict[str, Any]:
    """One tiny completion of ``spec``: its reply, seconds, tokens per second, the server's
    context size (None when it does not say) and whether it calls tools (the probe).

    Raises:
        InvalidArgument: ``invalid_model``, ``invalid_api_base``.
        ModelServerError: ``model_server_unreachable`` or ``model_test_failed``.
    """
    if describe_model(spec)["provider"] == "offline":
        raise InvalidArgument(
            "The offline model is built in and needs no server: there is nothing to test.",
            code="invalid_model",
        )
    kwargs = completion_kwargs(spec, api_base, api_key)
    litellm = await asyncio.to_thread(import_litellm)
    started = time.perf_counter()
    try:
        response = await litellm.acompletion(
            messages=[{"role": "user", "content": "Say hello in five words."}],
            max_tokens=24,
            temperature=0,
            timeout=timeout,
            max_retries=0,
            **kwargs,
        )
    except Exception as exc:
        raise _failure(spec, exc, api_base) from None
    seconds = time.perf_counter() - started
    usage = getattr(response, "usage", None)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    window = None
    if api_base:
        try:
            window = await context_window(api_base, spec)
        except ZocratesError:
            window = None
    tools = await probe_tool_calling(spec, api_base, api_key)
    return {
        "model": spec,
        "tool_calling": tools,
        "reply": str(response.choices[0].message.content or "").strip(),
        "seconds": round(seconds, 3),
        "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion_tokens": completion,
        "tokens_per_second": round(completion / seconds, 1) if seconds > 0 and completion else None,
        "context_window": window,
    }


async def probe_tool_calling(
    spec: str, api_base: str = "", api_key: str = "", *, timeout: float = 60.0
) -> bool | None:
    """Whether ``spec`` answers a plain request for a tool with a well-formed call of it, as
    a turn asks: streamed, ``tool_choice`` left to the model. A server that refuses the
    request counts as no; None when the server cannot be reached (nothing was learned)."""
    kwargs = completion_kwargs(spec, api_base, api_key)
    litellm = await asyncio.to_thread(import_litellm)
    tool = {
        "type": "function",
        "function": {
            "name": PROBE_TOOL,
            "description": "Record the city the user names.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city's name."}},
                "required": ["city"],
            },
        },
    }
    messages = [
        {"role": "system", "content": "You record cities by calling the record_city tool."},
        {"role": "user", "content": "Record the city Paris."},
    ]
    name, arguments = "", ""
    try:
        stream = await litellm.acompletion(
            messages=messages,
            tools=[tool],
            tool_choice="auto",
            max_tokens=64,
            temperature=0,
            stream=True,
            timeout=timeout,
            max_retries=0,
            **kwargs,
        )
        async for chunk in stream:
            for choice in chunk.choices or []:
                for call in getattr(choice.delta, "tool_calls", None) or []:
                    if call.function is not None:
                        name += call.function.name or ""
                        arguments += call.function.arguments or ""
    except Exception as exc:
        failure = _failure(spec, exc, api_base)
        logger.info("tool-calling probe of %s: %s", spec, failure)
        return None if failure.code == "model_server_unreachable" else False
    try:
        parsed = json.loads(arguments or "null")
    except ValueError:
        parsed = None
    capable = name == PROBE_TOOL and isinstance(parsed, dict) and "paris" in str(parsed).lower()
    logger.info("tool-calling probe of %s: %s", spec, "calls tools" if capable else "no tool call")
    return capable
