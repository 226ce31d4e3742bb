"""gRPC servicer of the agent service: translates agent.v1 protos to the Library and back."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from prometheus_client import Counter
from zocrates.agent.v1 import agent_pb2 as pb
from zocrates.agent.v1 import agent_pb2_grpc as pb_grpc

from services.agent.library.indexer import SyncProgress
from services.agent.library.library import Library
from services.agent.research.runtime import ResearchRuntime
from services.agent.research.wire import WireEvent
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


def _embedding_phase(e: dict[str, Any]) -> pb.EmbeddingPhase:
    return pb.EmbeddingPhase(**e) if e else pb.EmbeddingPhase()


def _progress(p: SyncProgress) -> pb.SyncProgress:
    return pb.SyncProgress(
        phase=p.phase,
        items_done=p.items_done,
        items_total=p.items_total,
        pages_done=p.pages_done,
        pages_total=p.pages_total,
        pages_per_second=p.pages_per_second,
        eta_seconds=p.eta_seconds,
        current=p.current,
        added=p.added,
        updated=p.updated,
        removed=p.removed,
        unchanged=p.unchanged,
        failed=p.failed,
        elapsed_seconds=p.elapsed_seconds,
        message=p.message,
        no_text=p.no_text,
        keyword=pb.KeywordPhase(
            running=p.phase in ("scanning", "indexing"),
            items_done=p.items_done,
            items_total=p.items_total,
            items_pending=p.items_pending,
            pages_done=p.pages_done,
            pages_total=p.pages_total,
            pages_pending=p.pages_pending,
            pages_per_second=p.pages_per_second,
            eta_seconds=p.eta_seconds,
        ),
        embedding=_embedding_phase(p.embedding),
    )


def _chat_event(kind: str, data: dict[str, Any]) -> pb.ChatEvent:
    return pb.ChatEvent(type=kind, data_json=json.dumps(data, ensure_ascii=False, default=str))


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
    def __init__(self, library: Library, research: ResearchRuntime | None = None) -> None:
        self._library = library
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
        chat = await self._runtime().chat_service()
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
        chat = await self._runtime().chat_service()
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
        chat = await self._runtime().chat_service()
        await chat.rewind(
            app_name=request.session.app_name,
            user_id=request.session.user_id,
            session_id=request.session.session_id,
            invocation_id=request.invocation_id,
        )
        return pb.RewindReply()

    async def SyncLibrary(
        self, request: pb.SyncLibraryRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.SyncProgress]:
        async for progress in self._library.sync(
            zotero_dir=request.zotero_data_dir,
            full=request.full,
            follow_embedding=request.follow_embedding,
        ):
            yield _progress(progress)

    async def PrioritizeItems(
        self, request: pb.PrioritizeItemsRequest, context: grpc.aio.ServicerContext
    ) -> pb.PrioritizeItemsReply:
        pending = await self._library.prioritize_items(list(request.item_keys))
        return pb.PrioritizeItemsReply(chunks_pending=pending)

    async def GetLibraryStatus(
        self, request: pb.GetLibraryStatusRequest, context: grpc.aio.ServicerContext
    ) -> pb.LibraryStatus:
        s: dict[str, Any] = await self._library.status()
        return pb.LibraryStatus(
            zotero_data_dir=s["zotero_data_dir"],
            items=s["items"],
            attachments=s["attachments"],
            pages=s["pages"],
            chunks=s["chunks"],
            last_sync_at=s["last_sync_at"],
            syncing=s["syncing"],
            embedding_model=s["embedding_model"],
            embedding_dim=s["embedding_dim"],
            index_bytes=s["index_bytes"],
            keyword_phase=pb.KeywordPhase(**s["keyword_phase"]),
            embedding_phase=_embedding_phase(s["embedding_phase"]),
            attachment_states=s["attachment_states"],
            problems=[pb.AttachmentProblem(**p) for p in s["problems"]],
        )

    async def SearchLibrary(
        self, request: pb.SearchLibraryRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchLibraryReply:
        started = time.perf_counter()
        hits = await self._library.search(
            request.query,
            k=request.k or 10,
            item_keys=list(request.item_keys) or None,
            collection_key=request.collection_key or None,
            mode=request.mode or "hybrid",  # type: ignore[arg-type]
            rerank=request.rerank,
        )
        return pb.SearchLibraryReply(
            hits=[
                pb.SearchHit(
                    chunk_id=str(h.chunk_id),
                    item_key=h.item_key,
                    attachment_key=h.attachment_key or "",
                    title=h.title,
                    authors=h.authors,
                    year=h.year or 0,
                    page_start=h.page_start,
                    page_end=h.page_end,
                    section=h.section or "",
                    score=h.score,
                    text=h.text,
                    word_count=h.word_count,
                )
                for h in hits
            ],
            took_ms=(time.perf_counter() - started) * 1000,
        )
