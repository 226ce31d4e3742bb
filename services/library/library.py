"""The library service's index: sync, status, search, and what the research tools read.

Indexing has two phases. The keyword phase (``LibraryIndexer.sync``) extracts text, TOC and
chunks and writes the keyword index, item by item; the embedding phase
(``EmbeddingQueue``) runs for as long as the library service does and gives every chunk its vector,
starting with the items a chat's scope points at. Search uses dense scores where vectors
exist and keyword scores elsewhere, and the status says how much of each phase is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import pathlib
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from services.common.errors import Conflict, InvalidArgument
from services.common.reranking import Reranker
from services.library import documents, metrics, ocr
from services.library.dense import ANN_FROM, DenseIndex
from services.library.embedding import EmbeddingQueue
from services.library.extraction import InteractiveGate
from services.library.index_store import IndexStore
from services.library.indexer import LibraryIndexer, SyncProgress
from services.library.ocr_phase import OcrPhase
from services.library.search import Embedder, LibrarySearch, SearchHit, SearchMode

logger = logging.getLogger(__name__)

INDEX_FILE = "index.sqlite3"
GRAPH_FILE = "vectors.usearch"


@dataclasses.dataclass(frozen=True)
class OcrSettings:
    """How the OCR phase reads pages without text (ocr_phase.py)."""

    languages: str = "eng"
    dpi: int = ocr.DEFAULT_DPI
    workers: int = 1
    enabled: bool = True


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
        index_workers: int | None = None,
        embed_in_background: bool = True,
        vector_graph_from: int = ANN_FROM,
        ocr: OcrSettings | None = None,
    ) -> None:
        self.zotero_dir = zotero_dir
        self.store = IndexStore(index_dir / INDEX_FILE)
        # Above a size, an HNSW graph next to the index (reused at the next start).
        self.dense = DenseIndex(
            graph_path=index_dir / GRAPH_FILE, graph_tag=embedding_model, ann_from=vector_graph_from
        )
        self.embedding_model = embedding_model
        self.embed_in_background = embed_in_background
        self._dense_lock = asyncio.Lock()
        self.embedding = EmbeddingQueue(
            self.store,
            self.dense,
            embedder,
            dense_lock=self._dense_lock,
            hold_bulk=lambda: self.indexer.syncing,
        )
        # A research turn's searches and reads pause the PDF readers (keyword phase, OCR).
        self.gate = InteractiveGate()
        self.indexer = LibraryIndexer(
            self.store,
            base_attachment_dir=base_attachment_dir,
            workers=index_workers,
            on_written=self.embedding.wake,
            gate=self.gate,
        )
        ocr_settings = ocr or OcrSettings()
        # Pages without a text layer, read by OCR once the keyword phase is over.
        self.ocr = OcrPhase(
            self.store,
            languages=ocr_settings.languages,
            dpi=ocr_settings.dpi,
            workers=ocr_settings.workers,
            enabled=ocr_settings.enabled and embed_in_background,
            hold=lambda: self.indexer.syncing,
            after_write=self._after_ocr,
            gate=self.gate,
        )
        self.searcher = LibrarySearch(
            self.store,
            self.dense,
            embedder,
            reranker,
            on_scope=self.embedding.prioritize,
            chunk_count=lambda: self.embedding.chunks_total,
        )
        self._sync_progress: SyncProgress | None = None
        self._resume: asyncio.Task[None] | None = None
        # Items and attachments in the index, counted at open and after each sync (metrics).
        self.index_counts: dict[str, int] = {}

    async def open(self, *, resume_interrupted: bool = True) -> None:
        dropped = await asyncio.to_thread(self.store.reset_embeddings, self.embedding_model)
        if dropped:
            logger.info(
                "library index: the embedding model is now %s; %d vectors will be recomputed",
                self.embedding_model,
                dropped,
            )
        await self._reload_dense()
        await asyncio.to_thread(self.embedding.refresh_counts)
        await self._count_index()
        metrics.watch(self)
        progress = self.embedding.progress()
        logger.info(
            "library index: %d of %d chunks embedded (%d pending) in %s",
            progress.chunks_embedded,
            progress.chunks_total,
            progress.chunks_pending,
            self.store.path,
        )
        if self.embed_in_background:
            self.embedding.start()
        self.ocr.start()
        interrupted = await asyncio.to_thread(self.indexer.interrupted_sync)
        if interrupted is not None and resume_interrupted:
            logger.info("library index: a sync of %s was cut off; resuming it", interrupted)
            self._resume = asyncio.create_task(self._resume_sync(interrupted))

    async def _resume_sync(self, zotero_dir: pathlib.Path) -> None:
        """Finish a keyword phase that a crash or kill cut off (what was written is kept)."""
        try:
            async for progress in self.sync(zotero_dir=str(zotero_dir)):
                last = progress
            logger.info("library index: resumed sync finished: %s", last.message)
        except Conflict:
            pass  # someone started a sync meanwhile: it completes the index
        except Exception:
            logger.exception("library index: the resumed sync failed; the next sync retries")

    async def aclose(self) -> None:
        if self._resume is not None and not self._resume.done():
            self._resume.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._resume
        await self.ocr.stop()
        await self.embedding.stop()
        await asyncio.to_thread(self.dense.close)  # saves the graph if it changed
        self.close()

    def close(self) -> None:
        metrics.forget(self)
        self.store.close()

    async def _after_ocr(self, replaced: bool) -> None:
        """A PDF was indexed anew with its OCR text: its chunks wait for vectors; chunks it
        had before are gone from the index, so their vectors go from memory too."""
        self.embedding.wake()
        if replaced:
            await self._reload_dense()
        await self._count_index()

    async def _count_index(self) -> None:
        counts = await asyncio.to_thread(self.store.counts)
        self.index_counts = {k: v for k, v in counts.items() if isinstance(v, int)}

    async def _reload_dense(self) -> None:
        async with self._dense_lock:
            await asyncio.to_thread(self.dense.load, self.store)

    def prioritize(self, item_keys: Sequence[str]) -> None:
        """Embed these items before the rest of the queue (a chat's scope, the open paper)."""
        self.embedding.prioritize(item_keys)

    async def sync(
        self, *, zotero_dir: str = "", full: bool = False, follow_embedding: bool = False
    ) -> AsyncIterator[SyncProgress]:
        """The keyword phase's progress, then ``done``. With ``follow_embedding`` the keyword
        phase ends with ``searchable`` and the embedding phase's progress follows
        (``embedding``) until every chunk has its vector, then ``done``."""
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
        last: SyncProgress | None = None
        counted = 0.0
        try:
            async for progress in self.indexer.sync(target, full=full):
                self._sync_progress = last = progress
                if time.monotonic() - counted > 1.0 or progress.phase == "done":
                    await asyncio.to_thread(self.embedding.refresh_counts)
                    counted = time.monotonic()
                progress.embedding = self.embedding.progress().as_dict()
                if progress.phase == "done" and follow_embedding:
                    progress.phase = "searchable"
                yield progress
        finally:
            self._sync_progress = None
            self.embedding.wake()  # the bulk embedding waited for the keyword phase
            self.ocr.wake()  # and so did OCR: pages without text may be new
            with contextlib.suppress(Exception):  # the sync's own error is what matters
                await self._count_index()
            own = last.own_reading if last is not None else None
            rewritten = own is not None and bool(own.changed or own.removed)
            if last is None or last.updated or last.removed or full or rewritten:
                # re-indexed or removed chunks leave vectors behind in memory
                await self._reload_dense()
        if follow_embedding and last is not None:
            last.phase, last.current = "embedding", ""
            async for embedding in self.follow_embedding():
                last.embedding = embedding
                yield last
            last.phase = "done"
            yield last

    async def prioritize_items(self, item_keys: Sequence[str]) -> int:
        """``prioritize`` and how many of their chunks are still waiting."""
        keys = [k for k in item_keys if k]
        if not keys:
            raise InvalidArgument("Name at least one item key.", code="empty_item_keys")
        self.prioritize(keys)
        return await asyncio.to_thread(self.store.pending_count, keys)

    async def follow_embedding(self, interval: float = 1.0) -> AsyncIterator[dict[str, Any]]:
        """The embedding phase's progress every ``interval`` seconds until the queue is
        empty (the last one has ``chunks_pending`` 0, unless the embedder is failing)."""
        while True:
            idle = await self.embedding.wait_idle(timeout=interval)
            progress = self.embedding.progress().as_dict()
            yield progress
            if idle and not progress["chunks_pending"]:
                return
            if not self.embed_in_background and progress["chunks_pending"]:
                return  # nobody is embedding here: do not wait forever
            if idle:  # counts not caught up yet: never spin
                await asyncio.sleep(interval)

    async def status(self) -> dict[str, Any]:
        await asyncio.to_thread(self.embedding.refresh_counts)
        status = await asyncio.to_thread(self.indexer.status)
        problems = await asyncio.to_thread(self.store.problem_attachments)
        sync = self._sync_progress
        keyword = {
            "running": sync is not None,
            "items_done": sync.items_done if sync else 0,
            "items_total": sync.items_total if sync else 0,
            "items_pending": sync.items_pending if sync else 0,
            "pages_done": sync.pages_done if sync else 0,
            "pages_total": sync.pages_total if sync else 0,
            "pages_pending": sync.pages_pending if sync else 0,
            "pages_per_second": round(sync.pages_per_second, 2) if sync else 0.0,
            "eta_seconds": round(sync.eta_seconds, 1) if sync else 0.0,
        }
        return {
            **status,
            "zotero_data_dir": str(self.zotero_dir),
            "embedding_model": self.embedding_model,
            "embedding_dim": self.dense.dim,
            "index_bytes": await asyncio.to_thread(self.store.size_bytes),
            "keyword_phase": keyword,
            "embedding_phase": self.embedding.progress().as_dict(),
            "problems": problems,
            "passages": await asyncio.to_thread(self.store.kind_counts),
            "ocr_phase": await self._ocr_progress(),
        }

    async def _ocr_progress(self) -> dict[str, Any]:
        await asyncio.to_thread(self.ocr.refresh_counts)
        return self.ocr.progress().as_dict()

    async def search(
        self,
        query: str,
        *,
        k: int = 10,
        item_keys: Sequence[str] | None = None,
        collection_key: str | None = None,
        mode: SearchMode = "hybrid",
        rerank: bool = False,
        kinds: Sequence[str] | None = None,
    ) -> list[SearchHit]:
        self.gate.touch()  # a turn is searching: the PDF readers step aside
        return await self.searcher.search(
            query,
            k=k,
            item_keys=item_keys,
            collection_key=collection_key,
            mode=mode,
            rerank=rerank,
            kinds=kinds,
        )

    async def table_of_contents(
        self, item_key: str, attachment_key: str | None = None
    ) -> dict[str, Any]:
        """A paper's sections and their pages (``documents.table_of_contents``)."""
        self.gate.touch()
        return await asyncio.to_thread(
            documents.table_of_contents, self.store, item_key, attachment_key
        )

    async def read_document(
        self,
        item_key: str,
        *,
        section: str | None = None,
        start_page: int | None = None,
        end_page: int | None = None,
        attachment_key: str | None = None,
    ) -> dict[str, Any]:
        """A section's or a page range's text (``documents.read_document``)."""
        self.gate.touch()
        return await asyncio.to_thread(
            documents.read_document,
            self.store,
            item_key,
            section,
            start_page,
            end_page,
            attachment_key,
        )
