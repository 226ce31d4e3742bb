"""Incremental indexing of a Zotero library into the ``IndexStore``.

A sync reads a snapshot of zotero.sqlite, refreshes item metadata and collections, then
re-indexes only the attachments whose fingerprint changed: an attachment whose size and
modification time are unchanged is skipped without reading it; one whose stat changed is
hashed, and skipped if its content is the same. Removed or trashed items disappear. Text comes
from the PDF, or from Zotero's ``.zotero-ft-cache`` when the PDF is missing or has no text.
Extraction of the next attachment overlaps with embedding of the current one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import pathlib
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from services.agent.library import chunking, pdf_text, toc
from services.agent.library import index_writes as writes
from services.agent.library.index_store import IndexStore
from services.agent.library.search import Embedder
from services.agent.library.zotero import Attachment, LibrarySnapshot, ZoteroItem, read_library
from services.common.errors import ZocratesError

logger = logging.getLogger(__name__)

EMBED_BATCH = 64
MIN_WORDS_FOR_TEXT_LAYER = 20  # fewer words in the whole PDF: treat it as having no text


@dataclasses.dataclass
class SyncProgress:
    phase: str = "scanning"
    items_done: int = 0
    items_total: int = 0
    pages_done: int = 0
    pages_total: int = 0
    pages_per_second: float = 0.0
    eta_seconds: float = 0.0
    current: str = ""
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    elapsed_seconds: float = 0.0
    message: str = ""


@dataclasses.dataclass
class _Work:
    item: ZoteroItem
    attachment: Attachment
    source: str  # "pdf" or "ft-cache"
    file: pathlib.Path
    size: int
    mtime_ns: int
    content_hash: str
    pages_estimate: int
    is_new: bool


@dataclasses.dataclass
class _Extracted:
    pages: list[str]
    entries: list[toc.TocEntry]
    chunks: list[chunking.Chunk]
    source: str


def _hash_file(path: pathlib.Path) -> str:
    digest = hashlib.blake2b(digest_size=20)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _source_file(attachment: Attachment) -> tuple[str, pathlib.Path] | None:
    if attachment.path is not None and attachment.path.is_file():
        return "pdf", attachment.path
    if attachment.ft_cache is not None and attachment.ft_cache.is_file():
        return "ft-cache", attachment.ft_cache
    return None


def _extract(work: _Work) -> _Extracted:
    """Blocking: text per page, table of contents, chunks."""
    source = work.source
    if source == "pdf":
        pages = pdf_text.extract_pages(work.file)
        if (
            sum(len(p.split()) for p in pages) < MIN_WORDS_FOR_TEXT_LAYER
            and work.attachment.ft_cache
            and work.attachment.ft_cache.is_file()
        ):
            pages, source = pdf_text.read_ft_cache(work.attachment.ft_cache), "ft-cache"
        entries = toc.build_toc(work.file if source == "pdf" else None, pages)
    else:
        pages = pdf_text.read_ft_cache(work.file)
        entries = toc.build_toc(None, pages)
    return _Extracted(
        pages=pages, entries=entries, chunks=chunking.chunk_document(pages, entries), source=source
    )


def _page_estimate(source: str, file: pathlib.Path) -> int:
    """Pages to expect, for progress; an unreadable PDF counts 0 (its extraction will fail)."""
    if source != "pdf":
        return 1
    try:
        return pdf_text.pdf_page_count(file)
    except ZocratesError:
        return 0


def _embedding_text(item: ZoteroItem, chunk: chunking.Chunk) -> str:
    head = f"{item.title} - {chunk.section}" if chunk.section else item.title
    return f"{head}\n{chunk.text}"


class LibraryIndexer:
    def __init__(
        self,
        store: IndexStore,
        embedder: Embedder,
        *,
        embedding_model: str,
        base_attachment_dir: pathlib.Path | None = None,
    ) -> None:
        self.base_attachment_dir = base_attachment_dir
        self.store = store
        self.embedder = embedder
        self.embedding_model = embedding_model
        self._lock = asyncio.Lock()

    @property
    def syncing(self) -> bool:
        return self._lock.locked()

    async def sync(
        self, zotero_dir: pathlib.Path, *, full: bool = False
    ) -> AsyncIterator[SyncProgress]:
        """Index ``zotero_dir``; yields progress after each step. One sync at a time."""
        async with self._lock:
            async for progress in self._sync(zotero_dir, full=full):
                yield progress

    async def _sync(self, zotero_dir: pathlib.Path, *, full: bool) -> AsyncIterator[SyncProgress]:
        started = time.perf_counter()
        progress = SyncProgress(message=f"reading {zotero_dir / 'zotero.sqlite'}")
        yield progress
        snapshot = await asyncio.to_thread(
            read_library, zotero_dir, base_attachment_dir=self.base_attachment_dir
        )
        work, removed, unchanged = await asyncio.to_thread(self._plan, snapshot, full)
        await asyncio.to_thread(self._write_metadata, snapshot, removed)
        progress.removed, progress.unchanged = len(removed), unchanged
        progress.items_total = len(work)
        progress.pages_total = sum(w.pages_estimate for w in work)
        progress.phase = "indexing"
        progress.message = f"{len(work)} to index, {unchanged} unchanged, {len(removed)} removed"
        progress.elapsed_seconds = time.perf_counter() - started
        yield progress

        index_started = time.perf_counter()
        next_extraction: asyncio.Task[_Extracted] | None = (
            asyncio.create_task(asyncio.to_thread(_extract, work[0])) if work else None
        )
        try:
            for position, item_work in enumerate(work):
                assert next_extraction is not None
                progress.current = item_work.item.title
                try:
                    extracted = await next_extraction
                except ZocratesError as exc:
                    extracted = None
                    error = exc.message
                except Exception as exc:  # a broken PDF must not stop the library's sync
                    logger.exception("could not read %s", item_work.file)
                    extracted, error = None, f"{type(exc).__name__}: {exc}"
                next_extraction = (
                    asyncio.create_task(asyncio.to_thread(_extract, work[position + 1]))
                    if position + 1 < len(work)
                    else None
                )
                if extracted is None:
                    progress.failed += 1
                    await asyncio.to_thread(self._record_failure, item_work, error)
                else:
                    vectors = await self._embed(item_work.item, extracted.chunks)
                    await asyncio.to_thread(self._write_attachment, item_work, extracted, vectors)
                    if item_work.is_new:
                        progress.added += 1
                    else:
                        progress.updated += 1
                    progress.pages_done += len(extracted.pages)
                progress.items_done = position + 1
                elapsed = time.perf_counter() - index_started
                progress.pages_per_second = progress.pages_done / elapsed if elapsed > 0 else 0.0
                remaining = max(0, progress.pages_total - progress.pages_done)
                progress.eta_seconds = (
                    remaining / progress.pages_per_second if progress.pages_per_second else 0.0
                )
                progress.elapsed_seconds = time.perf_counter() - started
                yield progress
        finally:
            if next_extraction is not None and not next_extraction.done():
                next_extraction.cancel()

        await asyncio.to_thread(self._finish)
        progress.phase = "done"
        progress.current = ""
        progress.eta_seconds = 0.0
        progress.elapsed_seconds = time.perf_counter() - started
        progress.message = (
            f"indexed {progress.added} new and {progress.updated} changed attachments "
            f"({progress.pages_done} pages), {progress.unchanged} unchanged, "
            f"{progress.removed} removed, {progress.failed} failed"
        )
        yield progress

    def _plan(self, snapshot: LibrarySnapshot, full: bool) -> tuple[list[_Work], list[str], int]:
        """What to index, which attachments disappeared, and how many are unchanged."""
        stored = self.store.attachment_rows()
        work: list[_Work] = []
        seen: set[str] = set()
        unchanged = 0
        for item in snapshot.items:
            for attachment in item.attachments:
                seen.add(attachment.key)
                row = stored.get(attachment.key)
                found = _source_file(attachment)
                if found is None:
                    continue  # recorded as missing in _write_metadata
                source, file = found
                stat = file.stat()
                same_model = row is not None and row["embedding_model"] == self.embedding_model
                if (
                    not full
                    and row is not None
                    and same_model
                    and row["source"] == source
                    and row["path"] == str(file)
                    and row["size"] == stat.st_size
                    and row["mtime_ns"] == stat.st_mtime_ns
                    and row["error"] is None
                ):
                    unchanged += 1
                    continue
                content_hash = _hash_file(file)
                if (
                    not full
                    and row is not None
                    and same_model
                    and row["content_hash"] == content_hash
                    and row["error"] is None
                ):
                    with self.store.writer() as conn:  # touched, not changed
                        writes.update_stat(
                            conn,
                            attachment.key,
                            size=stat.st_size,
                            mtime_ns=stat.st_mtime_ns,
                            path=str(file),
                        )
                    unchanged += 1
                    continue
                pages = _page_estimate(source, file)
                work.append(
                    _Work(
                        item,
                        attachment,
                        source,
                        file,
                        stat.st_size,
                        stat.st_mtime_ns,
                        content_hash,
                        pages,
                        row is None,
                    )
                )
        removed = sorted(set(stored) - seen)
        return work, removed, unchanged

    def _write_metadata(self, snapshot: LibrarySnapshot, removed: list[str]) -> None:
        missing = [
            (a.key, item.key, str(a.path) if a.path else None)
            for item in snapshot.items
            for a in item.attachments
            if _source_file(a) is None  # file gone and no full-text cache
        ]
        with self.store.writer() as conn:
            writes.replace_metadata(
                conn, snapshot, removed_attachments=removed, missing_attachments=missing
            )

    async def _embed(self, item: ZoteroItem, chunks: list[chunking.Chunk]) -> np.ndarray:
        texts = [_embedding_text(item, c) for c in chunks]
        parts = [
            await self.embedder.embed(texts[i : i + EMBED_BATCH])
            for i in range(0, len(texts), EMBED_BATCH)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def _write_attachment(self, work: _Work, extracted: _Extracted, vectors: np.ndarray) -> None:
        with self.store.writer() as conn:
            writes.write_attachment(
                conn,
                attachment_key=work.attachment.key,
                item_key=work.item.key,
                path=str(work.file),
                size=work.size,
                mtime_ns=work.mtime_ns,
                content_hash=work.content_hash,
                source=extracted.source,
                embedding_model=self.embedding_model,
                pages=extracted.pages,
                entries=extracted.entries,
                chunks=extracted.chunks,
                vectors=vectors,
            )

    def _record_failure(self, work: _Work, error: str) -> None:
        with self.store.writer() as conn:
            writes.record_failure(
                conn,
                attachment_key=work.attachment.key,
                item_key=work.item.key,
                path=str(work.file),
                size=work.size,
                mtime_ns=work.mtime_ns,
                content_hash=work.content_hash,
                source=work.source,
                error=error,
            )

    def _finish(self) -> None:
        with self.store.writer() as conn:
            self.store.set_meta(conn, "last_sync_at", str(time.time()))
            self.store.set_meta(conn, "embedding_model", self.embedding_model)

    def status(self) -> dict[str, Any]:
        counts = self.store.counts()
        last = self.store.get_meta("last_sync_at")
        return {**counts, "last_sync_at": float(last) if last else 0.0, "syncing": self.syncing}
