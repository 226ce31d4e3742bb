"""Library routes: index the Zotero library (SSE progress), its status, and plain search."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from services.common.errors import ZocratesError
from services.gateway.deps import State
from services.gateway.errors import COMMON_ERRORS, PEER_ERRORS, error_responses
from services.gateway.schemas.events import SYNC_STREAM
from services.gateway.schemas.library import LibraryStatus, Prioritized, SearchResults
from services.gateway.sse import error_frame, frame, sse_response

logger = logging.getLogger(__name__)
router = APIRouter(
    prefix="/library",
    tags=["library"],
    responses=error_responses(*COMMON_ERRORS, *PEER_ERRORS),
)


class SyncBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    full: bool = Field(default=False, description="Re-index every attachment, changed or not.")
    follow_embedding: bool = Field(
        default=False,
        description=(
            "After the keyword phase (`searchable`), keep streaming the embedding phase's "
            "progress (`embedding`) until every passage has its vector, then `done`. Closing "
            "the stream then does not stop the embedding."
        ),
    )


class PrioritizeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_keys: list[Annotated[str, Field(min_length=1, max_length=32)]] = Field(
        min_length=1, max_length=200, description="Items to embed first (the open paper)."
    )


@router.post(
    "/sync",
    summary="Index the Zotero library; streams `progress` events, then `done` (or `error`)",
    response_class=StreamingResponse,
    responses={**SYNC_STREAM, **error_responses(422)},
)
async def sync(state: State, body: Annotated[SyncBody | None, Body()] = None) -> StreamingResponse:
    options = body or SyncBody()
    zotero_dir = str(state.data_dir.parent)

    async def frames() -> AsyncIterator[bytes]:
        try:
            async for progress in state.library.sync(
                zotero_data_dir=zotero_dir,
                full=options.full,
                follow_embedding=options.follow_embedding,
            ):
                yield frame("done" if progress["phase"] == "done" else "progress", progress)
        except ZocratesError as exc:
            yield error_frame(exc)

    return sse_response(frames())


@router.get(
    "/status",
    summary="What the library index holds, each phase's progress, and the PDFs that need care",
    response_model=LibraryStatus,
)
async def status(state: State) -> dict[str, Any]:
    return {"status": "success", **await state.library.status()}


@router.post(
    "/prioritize",
    summary="Embed these items first (the paper open in the reader)",
    response_model=Prioritized,
    responses=error_responses(400, 422),
)
async def prioritize(state: State, body: PrioritizeBody) -> dict[str, Any]:
    pending = await state.library.prioritize(body.item_keys)
    return {"status": "success", "item_keys": body.item_keys, "chunks_pending": pending}


@router.get(
    "/search",
    summary="Ranked passages for a query (what search_corpus returns)",
    response_model=SearchResults,
    responses=error_responses(
        400, 422, notes={404: "`collection_not_found`: the collection is not in the index."}
    ),
)
async def search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="The query.")],
    k: Annotated[int, Query(ge=1, le=100, description="How many passages.")] = 10,
    item_keys: Annotated[
        list[str] | None, Query(description="Only these items (repeatable).")
    ] = None,
    collection: Annotated[
        str | None, Query(description="Only this collection (and its sub-collections).")
    ] = None,
    mode: Annotated[Literal["hybrid", "keyword", "dense"], Query()] = "hybrid",
    rerank: Annotated[bool, Query(description="Rerank with the cross-encoder.")] = False,
    kind: Annotated[
        list[Literal["text", "highlight", "comment", "note"]] | None,
        Query(
            description="Only passages of these kinds (repeatable): `text` (the papers), "
            "`highlight`, `comment`, `note` (what you wrote in Zotero)."
        ),
    ] = None,
) -> dict[str, Any]:
    results, took_ms = await state.library.search(
        q,
        k=k,
        item_keys=item_keys,
        collection_key=collection,
        mode=mode,
        rerank=rerank,
        kinds=list(kind) if kind else None,
    )
    return {"status": "success", "query": q, "took_ms": round(took_ms, 2), "results": results}
