"""Typed client of the library service: the gateway's /library routes, the agent's research
tools and ``zocrates index`` reach the index through it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from zocrates.library.v1 import library_pb2 as pb
from zocrates.library.v1 import library_pb2_grpc as pb_grpc

from services.common.grpc_client import ServiceClient, error_from_rpc


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


def ocr_phase_dict(o: pb.OcrPhase) -> dict[str, Any]:
    return {
        "running": o.running,
        "available": o.available,
        "languages": o.languages,
        "attachments_pending": o.attachments_pending,
        "pages_done": o.pages_done,
        "pages_pending": o.pages_pending,
        "pages_per_second": round(o.pages_per_second, 3),
        "eta_seconds": round(o.eta_seconds, 1),
        "error": o.error,
    }


def hit_dict(h: pb.SearchHit, *, chunk_id: bool = False) -> dict[str, Any]:
    """A search hit as the REST API shows it; ``chunk_id`` adds the index's passage id (what
    the research tools pass on)."""
    return {
        **({"chunk_id": h.chunk_id} if chunk_id else {}),
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
        "kind": h.kind or "text",
        # Where a passage the user wrote is (null for the paper's text): the annotation or
        # note, its page label, colour, type, title and tags.
        "source_key": h.source_key or None,
        "page_label": h.page_label or None,
        "color": h.color or None,
        "annotation_type": h.annotation_type or None,
        "note_title": h.note_title or None,
        "tags": list(h.tags) if h.kind and h.kind != "text" else None,
    }


class LibraryClient(ServiceClient):
    peer = "library"

    def __init__(self, address: str, *, timeout: float = 30.0) -> None:
        super().__init__(address, timeout=timeout)
        self.stub = pb_grpc.LibraryServiceStub(self.channel)

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
            "passages": dict(s.passages),
            "ocr_phase": ocr_phase_dict(s.ocr_phase),
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
        chunk_ids: bool = False,
        kinds: list[str] | None = None,
    ) -> tuple[list[dict[str, Any]], float]:
        """The hits (best first, as :func:`hit_dict`) and the milliseconds the search took in
        the library service."""
        reply = await self.call(
            self.stub.SearchLibrary,
            pb.SearchLibraryRequest(
                query=query,
                k=k,
                item_keys=item_keys or [],
                collection_key=collection_key or "",
                mode=mode,
                rerank=rerank,
                kinds=kinds or [],
            ),
        )
        return [hit_dict(h, chunk_id=chunk_ids) for h in reply.hits], reply.took_ms

    async def table_of_contents(self, item_key: str, attachment_key: str = "") -> dict[str, Any]:
        """A paper's sections and the page each starts on (in its main PDF unless
        ``attachment_key`` names another); NotFound ``item_not_found``, ``no_text`` or
        ``attachment_not_found``."""
        toc = await self.call(
            self.stub.GetDocumentToc,
            pb.GetDocumentTocRequest(item_key=item_key, attachment_key=attachment_key),
        )
        return {
            "item_key": toc.item_key,
            "attachment_key": toc.attachment_key,
            "attachment_keys": list(toc.attachment_keys),
            "title": toc.title,
            "page_count": toc.page_count,
            "sections": [
                {"title": s.title, "level": s.level, "page": s.page} for s in toc.sections
            ],
        }

    async def read_document(
        self,
        item_key: str,
        *,
        section: str = "",
        start_page: int = 0,
        end_page: int = 0,
        attachment_key: str = "",
    ) -> dict[str, Any]:
        """The text of a section or a page range (0: unset), at most 12 pages; errors as
        :meth:`table_of_contents`, and ``section_not_found``, ``invalid_pages``."""
        text = await self.call(
            self.stub.ReadDocument,
            pb.ReadDocumentRequest(
                item_key=item_key,
                section=section,
                start_page=start_page,
                end_page=end_page,
                attachment_key=attachment_key,
            ),
        )
        return {
            "item_key": text.item_key,
            "attachment_key": text.attachment_key,
            "title": text.title,
            "section": text.section or None,
            "start_page": text.start_page,
            "end_page": text.end_page,
            "word_count": text.word_count,
            "pages": [{"page": p.page, "text": p.text} for p in text.pages],
        }
