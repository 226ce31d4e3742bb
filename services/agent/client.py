"""Typed client of the agent service (used by the gateway)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from zocrates.agent.v1 import agent_pb2 as pb
from zocrates.agent.v1 import agent_pb2_grpc as pb_grpc
from zocrates.common.v1.session_ref_pb2 import SessionRef

from services.common.grpc_client import ServiceClient, error_from_rpc
from services.common.turn_scope import IMAGE_SNIPPET, TurnScope, is_image


def keyword_phase_dict(k: pb.KeywordPhase) -> dict[str, Any]:
    return {
        "running": k.running,
        "items_done": k.items_done,
        "items_total": k.items_total,
        "items_pending": k.items_pending,
        "pages_done": k.pages_done,
        "pages_total": k.pages_total,
        "pages_pending": k.pages_pending,
        "pages_per_second": round(k.pages_per_second, 2),
        "eta_seconds": round(k.eta_seconds, 1),
    }


def embedding_phase_dict(e: pb.EmbeddingPhase) -> dict[str, Any]:
    return {
        "running": e.running,
        "chunks_total": e.chunks_total,
        "chunks_embedded": e.chunks_embedded,
        "chunks_pending": e.chunks_pending,
        "chunks_per_second": round(e.chunks_per_second, 2),
        "eta_seconds": round(e.eta_seconds, 1),
        "error": e.error,
    }


def problem_dict(p: pb.AttachmentProblem) -> dict[str, Any]:
    return {
        "attachment_key": p.attachment_key,
        "item_key": p.item_key,
        "title": p.title,
        "path": p.path,
        "state": p.state,
        "reason": p.reason,
        "pages": p.pages,
        "pages_without_text": p.pages_without_text,
    }


def progress_dict(p: pb.SyncProgress) -> dict[str, Any]:
    return {
        "phase": p.phase,
        "items_done": p.items_done,
        "items_total": p.items_total,
        "pages_done": p.pages_done,
        "pages_total": p.pages_total,
        "pages_per_second": round(p.pages_per_second, 2),
        "eta_seconds": round(p.eta_seconds, 1),
        "current": p.current,
        "added": p.added,
        "updated": p.updated,
        "removed": p.removed,
        "unchanged": p.unchanged,
        "failed": p.failed,
        "no_text": p.no_text,
        "elapsed_seconds": round(p.elapsed_seconds, 2),
        "message": p.message,
        "keyword": keyword_phase_dict(p.keyword),
        "embedding": embedding_phase_dict(p.embedding),
    }


def hit_dict(h: pb.SearchHit) -> dict[str, Any]:
    return {
        "item_key": h.item_key,
        "attachment_key": h.attachment_key or None,
        "title": h.title,
        "authors": list(h.authors),
        "year": h.year or None,
        "page": h.page_start,
        "page_end": h.page_end,
        "section": h.section or None,
        "score": h.score,
        "word_count": h.word_count,
        "text": h.text,
    }


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

    async def sync(
        self, *, zotero_data_dir: str = "", full: bool = False, follow_embedding: bool = False
    ) -> AsyncIterator[dict[str, Any]]:
        """Progress of a library sync, until its final ("done") update. No deadline: a first
        index of a large library takes a while; cancelling the iteration during the keyword
        phase cancels the sync (the embedding phase runs on regardless)."""
        call = self.stub.SyncLibrary(
            pb.SyncLibraryRequest(
                zotero_data_dir=zotero_data_dir, full=full, follow_embedding=follow_embedding
            )
        )
        try:
            async for progress in call:
                yield progress_dict(progress)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, peer=self.peer, address=self.address) from None
        finally:
            call.cancel()

    async def status(self) -> dict[str, Any]:
        s = await self.call(self.stub.GetLibraryStatus, pb.GetLibraryStatusRequest())
        return {
            "zotero_data_dir": s.zotero_data_dir,
            "items": s.items,
            "attachments": s.attachments,
            "pages": s.pages,
            "chunks": s.chunks,
            "last_sync_at": s.last_sync_at or None,
            "syncing": s.syncing,
            "embedding_model": s.embedding_model,
            "embedding_dim": s.embedding_dim,
            "index_bytes": s.index_bytes,
            "keyword_phase": keyword_phase_dict(s.keyword_phase),
            "embedding_phase": embedding_phase_dict(s.embedding_phase),
            "attachment_states": dict(s.attachment_states),
            "problems": [problem_dict(p) for p in s.problems],
        }

    async def prioritize(self, item_keys: list[str]) -> int:
        """Move these items to the front of the embedding queue; their chunks still pending."""
        reply = await self.call(
            self.stub.PrioritizeItems, pb.PrioritizeItemsRequest(item_keys=item_keys)
        )
        return int(reply.chunks_pending)

    async def search(
        self,
        query: str,
        *,
        k: int = 10,
        item_keys: list[str] | None = None,
        collection_key: str | None = None,
        mode: str = "hybrid",
        rerank: bool = False,
    ) -> tuple[list[dict[str, Any]], float]:
        reply = await self.call(
            self.stub.SearchLibrary,
            pb.SearchLibraryRequest(
                query=query,
                k=k,
                item_keys=item_keys or [],
                collection_key=collection_key or "",
                mode=mode,
                rerank=rerank,
            ),
        )
        return [hit_dict(h) for h in reply.hits], reply.took_ms

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
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The events of one turn ((type, data) pairs). No deadline: a research turn streams
        for as long as it works; closing the iterator cancels the run on the agent."""
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
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        request = pb.ResumeRequest(
            session=SessionRef(app_name=app_name, user_id=user_id, session_id=session_id),
            invocation_id=invocation_id,
            interrupt_id=interrupt_id,
            response_json=json.dumps(response),
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
