"""The one permitted stand-in: a scripted model at ADK's BaseLlm boundary."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field


def _last_words(request: LlmRequest, limit: int = 300) -> str:
    """The end of a request's last content: enough to tell which call ran out of script."""
    for content in reversed(request.contents or []):
        for part in reversed(content.parts or []):
            if part.text:
                return part.text[-limit:]
            if part.function_response is not None:
                return f"function_response {part.function_response.name}"
            if part.function_call is not None:
                return f"function_call {part.function_call.name}"
    return "(no contents)"


def out_of_script(model: BaseLlm, request: LlmRequest, calls: int) -> AssertionError:
    """A call the test did not script: fail it loudly instead of answering a placeholder that
    a lenient assertion could take for a real reply."""
    return AssertionError(
        f"{type(model).__name__} {model.model!r} ran out of scripted replies at call {calls} "
        f"(agent request to {request.model!r}, last content: {_last_words(request)!r}); "
        "script the reply this call needs or give the model a `fallback`."
    )


class ScriptedLlm(BaseLlm):
    """Answers each model call with the next scripted reply and records the requests. A call
    past the script answers ``fallback`` when one is set, and otherwise fails."""

    model: str = "scripted"
    replies: list[str] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)
    fallback: str | None = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        if self.replies:
            text = self.replies.pop(0)
        elif self.fallback is not None:
            text = self.fallback
        else:
            raise out_of_script(self, llm_request, len(self.requests))
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


def thinking(thought: str, answer: str) -> LlmResponse:
    """A model turn of a reasoning model: a thought part (``thought=True``), then the answer."""
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(text=thought, thought=True), types.Part(text=answer)]
        )
    )


Reply = LlmResponse | Callable[[LlmRequest], LlmResponse]


class ScriptedToolLlm(BaseLlm):
    """Answers each model call with the next scripted reply: a response, or a function of the
    request (to react to tool results). Records every request. A call past the script answers
    ``fallback`` when one is set, and otherwise fails."""

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
            raise out_of_script(self, llm_request, len(self.requests))
        yield reply(llm_request) if callable(reply) else reply
