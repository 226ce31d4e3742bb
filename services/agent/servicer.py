"""gRPC servicer of the agent service: translates agent.v1 protos to research turns and back."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
from prometheus_client import Counter
from zocrates.agent.v1 import agent_pb2 as pb
from zocrates.agent.v1 import agent_pb2_grpc as pb_grpc

from services.agent.research.runtime import ResearchRuntime
from services.agent.research.wire import WireEvent
from services.common.app_config import ZocratesConfig, config_from_json
from services.common.errors import InvalidArgument
from services.common.metrics import REGISTRY
from services.common.turn_scope import IMAGE_SNIPPET, TEXT_SNIPPET, TurnScope

AGENT_TURNS = Counter(
    "zocrates_agent_turns_total",
    "Research turn streams the agent ran, by rpc ('chat', 'resume') and how they ended: "
    "'completed', 'paused' (at a checkpoint), 'failed' (raised after it started) or "
    "'cancelled' (the caller went away). Refusals before the turn starts are not counted.",
    ["rpc", "outcome"],
    registry=REGISTRY,
)


def _chat_event(kind: str, data: dict[str, Any]) -> pb.ChatEvent:
    return pb.ChatEvent(type=kind, data_json=json.dumps(data, ensure_ascii=False, default=str))


def _settings(config_json: str) -> ZocratesConfig | None:
    """The settings a turn's request carries (None: the agent's own file's)."""
    return config_from_json(config_json) if config_json else None


def _snippet(s: pb.Snippet) -> dict[str, Any]:
    """A text snippet as it always was; an image one with ``kind`` and its bytes."""
    out: dict[str, Any] = {"text": s.text, "item_key": s.item_key, "page": s.page, "title": s.title}
    if s.kind == IMAGE_SNIPPET:
        out = {
            "kind": IMAGE_SNIPPET,
            **out,
            "image": {"mime_type": s.image.mime_type, "data": bytes(s.image.data)},
        }
    elif s.kind not in ("", TEXT_SNIPPET):
        raise InvalidArgument(f"snippet kind must be 'text' or 'image', not {s.kind!r}.")
    return out


class AgentServicer(pb_grpc.AgentServiceServicer):
    def __init__(self, research: ResearchRuntime | None = None) -> None:
        self._research = research

    def _runtime(self) -> ResearchRuntime:
        if self._research is None:
            raise InvalidArgument("This agent was started without research turns.")
        return self._research

    async def _relay(
        self, rpc: str, events: AsyncIterator[WireEvent]
    ) -> AsyncIterator[pb.ChatEvent]:
        # Closed explicitly: when gRPC cancels the handler, the turn must unwind now (abort the
        # run, release the session) rather than whenever the generator is collected.
        outcome = "cancelled"
        started = False
        try:
            async with contextlib.aclosing(events):  # type: ignore[type-var]
                async for kind, data in events:
                    if kind == "started":
                        started = True
                    elif kind == "done":
                        outcome = "paused" if data.get("status") == "paused" else "completed"
                    yield _chat_event(kind, data)
        except Exception:
            outcome = "failed"
            raise
        finally:
            if started:
                AGENT_TURNS.labels(rpc, outcome).inc()

    async def Chat(
        self, request: pb.ChatRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ChatEvent]:
        chat = await self._runtime().chat_service(_settings(request.config_json))
        scope = TurnScope(
            items=[{"item_key": i.item_key, "title": i.title} for i in request.items],
            collection_key=request.collection_key,
            collection_name=request.collection_name,
            snippets=[_snippet(s) for s in request.snippets],
            mode=request.mode,
        )
        events = await chat.chat(
            app_name=request.session.app_name,
            user_id=request.session.user_id,
            session_id=request.session.session_id,
            prompt=request.prompt,
            scope=scope,
        )
        async for event in self._relay("chat", events):
            yield event

    async def Resume(
        self, request: pb.ResumeRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ChatEvent]:
        try:
            response = json.loads(request.response_json or "{}")
        except json.JSONDecodeError:
            raise InvalidArgument("response must be a JSON object.") from None
        if not isinstance(response, dict):
            raise InvalidArgument("response must be a JSON object.")
        chat = await self._runtime().chat_service(_settings(request.config_json))
        events = await chat.resume(
            app_name=request.session.app_name,
            user_id=request.session.user_id,
            session_id=request.session.session_id,
            invocation_id=request.invocation_id,
            interrupt_id=request.interrupt_id,
            response=response,
        )
        async for event in self._relay("resume", events):
            yield event

    async def Rewind(
        self, request: pb.RewindRequest, context: grpc.aio.ServicerContext
    ) -> pb.RewindReply:
        chat = await self._runtime().current_chat_service()
        await chat.rewind(
            app_name=request.session.app_name,
            user_id=request.session.user_id,
            session_id=request.session.session_id,
            invocation_id=request.invocation_id,
        )
        return pb.RewindReply()
