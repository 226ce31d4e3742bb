"""gRPC servicer of the library service: translates library.v1 protos to the Library and
back."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from zocrates.library.v1 import library_pb2 as pb
from zocrates.library.v1 import library_pb2_grpc as pb_grpc

from services.library.indexer import SyncProgress
from services.library.library import Library


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


class LibraryServicer(pb_grpc.LibraryServiceServicer):
    def __init__(self, library: Library) -> None:
        self._library = library

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
            passages=s["passages"],
            ocr_phase=pb.OcrPhase(**s["ocr_phase"]),
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
            kinds=list(request.kinds) or None,
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
                    kind=h.kind,
                    source_key=h.source_key,
                    page_label=str(h.details.get("page_label") or ""),
                    color=str(h.details.get("color") or ""),
                    annotation_type=str(h.details.get("annotation_type") or ""),
                    note_title=str(h.details.get("note_title") or ""),
                    tags=[str(t) for t in h.details.get("tags") or []],  # type: ignore[attr-defined]
                )
                for h in hits
            ],
            took_ms=(time.perf_counter() - started) * 1000,
        )

    async def GetDocumentToc(
        self, request: pb.GetDocumentTocRequest, context: grpc.aio.ServicerContext
    ) -> pb.DocumentToc:
        toc = await self._library.table_of_contents(
            request.item_key, request.attachment_key or None
        )
        return pb.DocumentToc(
            item_key=toc["item_key"],
            attachment_key=toc["attachment_key"],
            attachment_keys=toc["attachment_keys"],
            title=toc["title"] or "",
            page_count=toc["page_count"],
            sections=[pb.TocSection(**s) for s in toc["sections"]],
        )

    async def ReadDocument(
        self, request: pb.ReadDocumentRequest, context: grpc.aio.ServicerContext
    ) -> pb.DocumentText:
        text = await self._library.read_document(
            request.item_key,
            section=request.section or None,
            start_page=request.start_page or None,
            end_page=request.end_page or None,
            attachment_key=request.attachment_key or None,
        )
        return pb.DocumentText(
            item_key=text["item_key"],
            attachment_key=text["attachment_key"],
            title=text["title"] or "",
            section=text["section"] or "",
            start_page=text["start_page"],
            end_page=text["end_page"],
            word_count=text["word_count"],
            pages=[pb.PageText(page=p["page"], text=p["text"]) for p in text["pages"]],
        )
