"""Typed client of the agent service (research turns; used by the gateway)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from zocrates.agent.v1 import agent_pb2 as pb
from zocrates.agent.v1 import agent_pb2_grpc as pb_grpc
from zocrates.common.v1.session_ref_pb2 import SessionRef

from services.common.app_config import ZocratesConfig
from services.common.grpc_client import ServiceClient, error_from_rpc
from services.common.turn_scope import IMAGE_SNIPPET, TurnScope, is_image


def _snippet_pb(s: dict[str, Any]) -> pb.Snippet:
    image = s.get("image") if is_image(s) else None
    return pb.Snippet(
        text=s.get("text", ""),
        item_key=s.get("item_key", ""),
        page=int(s.get("page") or 0),
        title=s.get("title", ""),
        kind=IMAGE_SNIPPET if image else "",
        image=pb.SnippetImage(mime_type=image["mime_type"], data=image["data"]) if image else None,
    )


class AgentClient(ServiceClient):
    peer = "agent"

    def __init__(self, address: str, *, timeout: float = 30.0) -> None:
        super().__init__(address, timeout=timeout)
        self.stub = pb_grpc.AgentServiceStub(self.channel)

    async def _stream(self, start: Callable[[], Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The events of the stream ``start`` opens, opened at the first iteration once the
        channel is up (a call made while the agent restarts would fail at once)."""
        await self._connected()
        call = start()
        try:
            async for event in call:
                yield event.type, json.loads(event.data_json or "{}")
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, peer=self.peer, address=self.address) from None
        finally:
            call.cancel()

    def chat(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        prompt: str,
        scope: TurnScope | None = None,
        config: ZocratesConfig | None = None,
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The events of one turn ((type, data) pairs). No deadline: a research turn streams
        for as long as it works; closing the iterator cancels the run on the agent. ``config``:
        the user's settings for the turn (None: the agent reads its own data directory's)."""
        scope = scope or TurnScope()
        request = pb.ChatRequest(
            session=SessionRef(app_name=app_name, user_id=user_id, session_id=session_id),
            prompt=prompt,
            items=[
                pb.ContextItem(item_key=i["item_key"], title=i.get("title", ""))
                for i in scope.items
            ],
            collection_key=scope.collection_key,
            collection_name=scope.collection_name,
            snippets=[_snippet_pb(s) for s in scope.snippets],
            mode=scope.mode,
            config_json=config.model_dump_json() if config else "",
        )
        return self._stream(lambda: self.stub.Chat(request))

    def resume(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        interrupt_id: str,
        response: dict[str, Any],
        config: ZocratesConfig | None = None,
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        request = pb.ResumeRequest(
            session=SessionRef(app_name=app_name, user_id=user_id, session_id=session_id),
            invocation_id=invocation_id,
            interrupt_id=interrupt_id,
            response_json=json.dumps(response),
            config_json=config.model_dump_json() if config else "",
        )
        return self._stream(lambda: self.stub.Resume(request))

    async def rewind(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> None:
        await self.call(
            self.stub.Rewind,
            pb.RewindRequest(
                session=SessionRef(app_name=app_name, user_id=user_id, session_id=session_id),
                invocation_id=invocation_id,
            ),
        )
