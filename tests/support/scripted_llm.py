"""The one permitted stand-in: a scripted model at ADK's BaseLlm boundary."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field


class ScriptedLlm(BaseLlm):
    """Answers each model call with the next scripted reply and records the requests."""

    model: str = "scripted"
    replies: list[str] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        text = self.replies.pop(0) if self.replies else "(no more scripted replies)"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def call(name: str, **args: object) -> LlmResponse:
    """A model turn that calls one tool."""
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))]
        )
    )


def text(value: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=value)]))


Reply = LlmResponse | Callable[[LlmRequest], LlmResponse]


class ScriptedToolLlm(BaseLlm):
    """Answers each model call with the next scripted reply: a response, or a function of the
    request (to react to tool results). Records every request."""

    model: str = "scripted-tools"
    replies: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)
    fallback: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        if self.replies:
            reply = self.replies.pop(0)
        elif self.fallback is not None:
            reply = self.fallback
        else:
            reply = text("(no more scripted replies)")
        yield reply(llm_request) if callable(reply) else reply
