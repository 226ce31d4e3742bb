"""The library facade the agent service exposes: sync, status, search, research tools."""

from __future__ import annotations

import asyncio
import logging
import pathlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from services.agent.library.index_store import IndexStore
from services.agent.library.indexer import LibraryIndexer, SyncProgress
from services.agent.library.search import (
    DenseIndex,
    Embedder,
    LibrarySearch,
    Reranker,
    SearchHit,
    SearchMode,
)
from services.agent.library.tools import Tool, make_research_tools
from services.common.errors import Conflict, InvalidArgument

logger = logging.getLogger(__name__)

INDEX_FILE = "index.sqlite3"


class Library:
    def __init__(
        self,
        *,
        index_dir: pathlib.Path,
        zotero_dir: pathlib.Path,
        embedder: Embedder,
        reranker: Reranker | None,
        embedding_model: str,
        base_attachment_dir: pathlib.Path | None = None,
    ) -> None:
        self.zotero_dir = zotero_dir
        self.store = IndexStore(index_dir / INDEX_FILE)
        self.dense = DenseIndex()
        self.embedding_model = embedding_model
        self.indexer = LibraryIndexer(
            self.store,
            embedder,
            embedding_model=embedding_model,
            base_attachment_dir=base_attachment_dir,
        )
        self.searcher = LibrarySearch(self.store, self.dense, embedder, reranker)

    async def open(self) -> None:
        await asyncio.to_thread(self.dense.load, self.store)
        logger.info("library index: %d embedded chunks from %s", len(self.dense), self.store.path)

    def close(self) -> None:
        self.store.close()

    async def sync(
        self, *, zotero_dir: str = "", full: bool = False
    ) -> AsyncIterator[SyncProgress]:
        if self.indexer.syncing:
            raise Conflict(
                "The library is already being indexed; wait for that sync to finish.",
                code="sync_in_progress",
            )
        target = pathlib.Path(zotero_dir).expanduser() if zotero_dir else self.zotero_dir
        if not target.is_absolute():
            raise InvalidArgument(
                f"zotero_data_dir must be absolute, got {zotero_dir!r}.", code="invalid_data_dir"
            )
        self.zotero_dir = target
        try:
            async for progress in self.indexer.sync(target, full=full):
                yield progress
        finally:
            await asyncio.to_thread(self.dense.load, self.store)

    async def status(self) -> dict[str, Any]:
        status = await asyncio.to_thread(self.indexer.status)
        return {
            **status,
            "zotero_data_dir": str(self.zotero_dir),
            "embedding_model": self.embedding_model,
            "embedding_dim": int(self.dense.matrix.shape[1]) if len(self.dense) else 0,
            "index_bytes": await asyncio.to_thread(self.store.size_bytes),
        }

    async def search(
        self,
        query: str,
        *,
        k: int = 10,
        item_keys: Sequence[str] | None = None,
        collection_key: str | None = None,
        mode: SearchMode = "hybrid",
        rerank: bool = False,
    ) -> list[SearchHit]:
        return await self.searcher.search(
            query, k=k, item_keys=item_keys, collection_key=collection_key, mode=mode, rerank=rerank
        )

    def research_tools(self) -> list[Tool]:
        return make_research_tools(self.searcher, self.store)
