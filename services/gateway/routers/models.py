"""The models a local server offers, and a one-request test of a model, for the preferences
pane: with ``model_api_base`` set, each role's field lists the server's models, and "Test model"
shows a reply, its speed and the context size, or the server's own error."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from services.common import local_models
from services.gateway.deps import State
from services.gateway.errors import COMMON_ERRORS, error_responses
from services.gateway.schemas.base import Success

router = APIRouter(tags=["models"])

API_KEY_ENV = "ZOCRATES_MODEL_API_KEY"
_SERVER_ERRORS = {
    400: "`invalid_api_base`: not an http(s) URL; `invalid_model`: not a model name.",
    503: (
        "`model_server_unreachable`: nothing answers at the address; `model_server_error`: "
        "the server lists no models or answered with an error; `model_test_failed`: the "
        "model's request failed (the message holds the server's own words)."
    ),
}


class LocalModel(BaseModel):
    id: str = Field(description="The server's name for the model.")
    model: str = Field(description="What a role's model setting takes: `openai/<id>`...")
    context_window: int | None = Field(description="Tokens its context holds, if stated.")


class LocalModels(Success):
    api_base: str
    server: str = Field(description="`openai` (OpenAI-compatible) or `ollama`.")
    models: list[LocalModel]


class TestModelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str = Field(min_length=1, max_length=300, description="A role's model setting.")
    api_base: str | None = Field(
        default=None, max_length=2000, description="The server; default: model_api_base."
    )


class ModelTest(Success):
    model: str
    reply: str
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    tokens_per_second: float | None
    context_window: int | None
    tool_calling: bool | None = Field(
        description="Whether the model made a well-formed tool call when asked (None: unknown)."
    )


@router.get(
    "/models/local",
    summary="The models the server at api_base lists (OpenAI's /v1/models or Ollama's tags)",
    response_model=LocalModels,
    responses=error_responses(*COMMON_ERRORS, 422, notes=_SERVER_ERRORS),
)
async def local_models_list(
    state: State,
    api_base: str | None = Query(
        default=None, max_length=2000, description="The server; default: model_api_base."
    ),
) -> dict[str, Any]:
    base = api_base if api_base is not None else (await state.load_config()).model_api_base
    base = local_models.check_api_base(base)
    server, models = await local_models.list_models(base)
    return {
        "status": "success",
        "api_base": base,
        "server": server,
        "models": [
            {"id": m.id, "model": m.model, "context_window": m.context_window} for m in models
        ],
    }


@router.post(
    "/models/test",
    summary="Run one tiny completion of a model: its reply, speed, context size, tool calls",
    response_model=ModelTest,
    responses=error_responses(*COMMON_ERRORS, 422, notes=_SERVER_ERRORS),
)
async def test_model(state: State, body: TestModelBody) -> dict[str, Any]:
    base = (
        body.api_base if body.api_base is not None else (await state.load_config()).model_api_base
    )
    result = await local_models.test_model(
        body.model, base.strip(), os.environ.get(API_KEY_ENV, "")
    )
    return {"status": "success", **result}
