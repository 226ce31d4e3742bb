"""What the agent and the preferences pane learn from a model server on the user's machine
(services/common/local_models.py), against local HTTP servers speaking each server's real wire
format: the model list (OpenAI's /v1/models, Ollama's /api/tags), the context size (llama.cpp's
/props, vLLM's max_model_len, Ollama's /api/show), the tool-calling probe (a model that calls
the tool, one that answers in prose, a server that refuses, a server that is not there), a
"Test model" run, and the errors a user reads."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from services.agent.research.capabilities import plan_models
from services.common import local_models as lm
from services.common.app_config import ZocratesConfig
from services.common.errors import InvalidArgument
from tests.support.openai_server import ToolCall, serve_openai

CLOSED = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


def _json(body: Any, status: int = 200) -> Any:
    async def handler(request: Request) -> JSONResponse:
        return JSONResponse(body, status_code=status)

    return handler


def _calls_the_tool(body: dict[str, Any]) -> Any:
    if body.get("tools"):
        return ToolCall(lm.PROBE_TOOL, {"city": "Paris"})
    return "Hello there, friend!"


def _prose(body: dict[str, Any]) -> Any:
    return "Paris is the capital of France."


def _echoes_the_key(body: dict[str, Any]) -> Any:
    raise PermissionError("401: Incorrect API key provided: sk-zocrates-secret-0123456789")


def _refuses_tools(body: dict[str, Any]) -> Any:
    if body.get("tools") and body.get("stream"):
        raise RuntimeError("llama-cpp-python: streamed tool_choice auto is not supported")
    return "Hello."


LLAMA_SERVER = [  # llama.cpp's llama-server
    Route(
        "/v1/models",
        _json({"object": "list", "data": [{"id": "qwen", "meta": {"n_ctx_train": 32768}}]}),
    ),
    Route("/props", _json({"default_generation_settings": {"n_ctx": 8192}})),
]
VLLM = [Route("/v1/models", _json({"data": [{"id": "llama-3", "max_model_len": 16384}]}))]
OLLAMA = [
    Route("/api/tags", _json({"models": [{"name": "llama3.2:1b"}, {"name": "qwen2.5:0.5b"}]})),
    Route(
        "/api/show",
        _json({"model_info": {"llama.context_length": 131072}}),
        methods=["POST"],
    ),
]


async def test_the_model_list_and_context_size_in_each_servers_format() -> None:
    with serve_openai(_prose, routes=LLAMA_SERVER) as llama:
        server, models = await lm.list_models(llama.api_base)
        assert server == "openai"
        assert [(m.id, m.model, m.context_window) for m in models] == [
            ("qwen", "openai/qwen", 32768)
        ]
        # The context the server runs with (/props), not the model's trained length.
        assert await lm.context_window(llama.api_base, "openai/qwen") == 8192
    with serve_openai(_prose, routes=VLLM) as vllm:
        assert await lm.context_window(vllm.api_base + "/", "openai/llama-3") == 16384
        assert await lm.window_for("openai/llama-3", vllm.api_base) == 16384
        assert await lm.window_for("openai/llama-3", vllm.api_base, 2048) == 2048  # the setting
    with serve_openai(_prose, routes=OLLAMA) as ollama:
        root = ollama.api_base.removesuffix("/v1")
        server, models = await lm.list_models(root)
        assert server == "ollama"
        assert [m.model for m in models] == ["ollama_chat/llama3.2:1b", "ollama_chat/qwen2.5:0.5b"]
        assert await lm.context_window(root, "ollama_chat/llama3.2:1b") == 131072
    with serve_openai(_prose) as bare:  # a server that states nothing: the local default
        assert await lm.window_for("openai/x", bare.api_base) == lm.DEFAULT_LOCAL_WINDOW
    assert await lm.window_for("openrouter/anthropic/claude-sonnet-4", "") is None  # hosted


async def test_listing_fails_in_words_a_user_can_act_on() -> None:
    with pytest.raises(InvalidArgument) as bad:
        await lm.list_models("127.0.0.1:8080")
    assert bad.value.code == "invalid_api_base" and "http://" in bad.value.message
    with pytest.raises(lm.ModelServerError) as closed:
        await lm.list_models(CLOSED)
    assert closed.value.code == "model_server_unreachable"
    assert "127.0.0.1:9" in closed.value.message and "running" in closed.value.message
    broken = [Route("/v1/models", _json({"error": {"message": "model is loading"}}, 503))]
    with (
        serve_openai(_prose, routes=broken) as server,
        pytest.raises(lm.ModelServerError) as failed,
    ):
        await lm.list_models(server.api_base)
    assert failed.value.code == "model_server_error" and "model is loading" in failed.value.message


async def test_the_probe_tells_a_model_that_calls_tools_from_one_that_does_not() -> None:
    with serve_openai(_calls_the_tool) as capable:
        assert await lm.probe_tool_calling("openai/m", capable.api_base) is True
        probe = capable.exchanges[-1].body
        assert probe["stream"] is True and probe["tool_choice"] == "auto"  # as a turn asks
        assert probe["max_tokens"] == 64
        # No key: the placeholder, never the user's OpenAI key.
        assert capable.exchanges[-1].headers["authorization"] == f"Bearer {lm.NO_KEY}"
    with serve_openai(_prose) as prose:
        assert await lm.probe_tool_calling("openai/m", prose.api_base) is False
    with serve_openai(_refuses_tools) as refusing:
        assert await lm.probe_tool_calling("openai/m", refusing.api_base) is False
    assert await lm.probe_tool_calling("openai/m", CLOSED) is None  # nothing learned


async def test_the_plan_gives_a_role_whose_model_calls_no_tools_to_the_fixed_policy() -> None:
    with serve_openai(_prose) as prose:
        config = ZocratesConfig(
            coordinator_model="openai/small",
            subagent_model="openai/small",
            synthesizer_model="openai/small",
            model_api_base=prose.api_base,
        )
        specs = {
            "coordinator": "openai/small",
            "search_subagent": "openai/small",
            "synthesizer": "openai/small",
        }
        plan = await plan_models(specs, config, "")
        assert plan.runs == {"coordinator": False, "search_subagent": False, "synthesizer": True}
        assert plan.settled
        # The writer: the local default window, a sixth of it for the answer.
        assert plan.writer is not None and plan.writer.context_window == lm.DEFAULT_LOCAL_WINDOW
        assert plan.writer.max_tokens == lm.DEFAULT_LOCAL_WINDOW // 6
        trusted = await plan_models(
            specs, config.model_copy(update={"model_tool_calling": "on"}), ""
        )
        assert trusted.runs["coordinator"] and trusted.runs["search_subagent"]
    with serve_openai(_calls_the_tool) as capable:
        config = config.model_copy(update={"model_api_base": capable.api_base})
        assert (await plan_models(specs, config, "")).runs["coordinator"] is True
    gone = await plan_models(specs, config.model_copy(update={"model_api_base": CLOSED}), "")
    assert gone.runs["coordinator"] is False and not gone.settled  # asked again next turn


async def test_a_model_test_reports_reply_speed_and_context_or_the_servers_words() -> None:
    with serve_openai(_calls_the_tool, routes=LLAMA_SERVER) as server:
        result = await lm.test_model("openai/qwen", server.api_base)
        assert result["reply"] == "Hello there, friend!"
        assert result["completion_tokens"] > 0 and result["tokens_per_second"] > 0
        assert result["context_window"] == 8192 and result["tool_calling"] is True
        assert server.exchanges[0].body["max_tokens"] == 24
    with pytest.raises(lm.ModelServerError) as closed:
        await lm.test_model("openai/qwen", CLOSED)
    assert closed.value.code == "model_server_unreachable" and CLOSED in closed.value.message
    with pytest.raises(InvalidArgument) as offline:
        await lm.test_model("offline", "")
    assert offline.value.code == "invalid_model"
    with serve_openai(_echoes_the_key) as echoing, pytest.raises(lm.ModelServerError) as refused:
        await lm.test_model("openai/qwen", echoing.api_base, "sk-zocrates-secret-0123456789")
    assert refused.value.code == "model_test_failed"
    assert "0123456789" not in refused.value.message and "[key hidden]" in refused.value.message
