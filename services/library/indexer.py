"""Incremental indexing of a Zotero library into the ``IndexStore``: the keyword phase.

A sync reads a snapshot of zotero.sqlite, refreshes item metadata and collections, then
re-indexes only the attachments whose fingerprint changed: an attachment whose size and
modification time are unchanged is skipped without reading it; one whose stat changed is
hashed, and skipped if its content is the same. The fingerprint includes the text-cleaning
recipe (``pdf_text.TEXT_VERSION``): when a release changes it, every attachment with text is
extracted again at the next sync, and the chunks whose section and text come out the same keep
their vectors, so only the changed ones are embedded again. Removed or trashed items
disappear. Text comes from the PDF, or from Zotero's ``.zotero-ft-cache`` when the PDF is
missing or has no text.

Page counts (for progress), text, TOC and chunks are read in worker processes
(``extraction.ExtractorPool``), never in the library service's own, and written one attachment per
transaction with their keyword index, so each item is searchable as soon as it is written. A
PDF that cannot be opened to count its pages is recorded as failed at once, not read again.
Chunks are written without vectors: the embedding phase (``embedding.EmbeddingQueue``) gives
them theirs in the background. Every attachment ends in a state (indexed, no text layer,
failed, missing) with its reason; an unreadable file is not read again until it changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import pathlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from services.library import index_writes as writes
from services.library import metrics, own_reading, pdf_text
from services.library.extraction import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIMEOUT,
    Extracted,
    ExtractorPool,
    InteractiveGate,
    Job,
)
from services.library.index_store import STATE_FAILED, STATE_NO_TEXT, IndexStore
from services.library.zotero import Attachment, LibrarySnapshot, ZoteroItem, read_library

logger = logging.getLogger(__name__)

INTERRUPTED_SYNC = "interrupted_sync"  # meta key: set while a keyword phase has work left


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
    no_text: int = 0
    elapsed_seconds: float = 0.0
    message: str = ""
    # The embedding phase, filled in by the library (it runs on in the background).
    embedding: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Annotations and notes written by this sync (own_reading.py).
    own_reading: own_reading.Changes = dataclasses.field(default_factory=own_reading.Changes)

    @property
    def items_pending(self) -> int:
        return max(0, self.items_total - self.items_done)

    @property
    def pages_pending(self) -> int:
        return max(0, self.pages_total - self.pages_done)


@dataclasses.dataclass
class _Work:
    item: ZoteroItem
    attachment: Attachment
    source: str  # "pdf" or "ft-cache"
    file: pathlib.Path
    size: int
    mtime_ns: int
    content_hash: str
    pages_estimate: int  # a PDF's is counted by a worker before indexing starts
    is_new: bool


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


def _own_reading_message(changes: own_reading.Changes) -> str:
    if not changes.any:
        return ""
    return (
        f"; annotations and notes: {changes.added} new, {changes.changed} changed, "
        f"{changes.removed} removed"
    )


class LibraryIndexer:
    def __init__(
        self,
        store: IndexStore,
        *,
        base_attachment_dir: pathlib.Path | None = None,
        workers: int | None = None,
        timeout: float | None = None,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        on_written: Callable[[], None] | None = None,
        gate: InteractiveGate | None = None,
    ) -> None:
        self.base_attachment_dir = base_attachment_dir
        self.store = store
        self.workers = workers
        self.timeout = timeout
        self.memory_limit = memory_limit  # bytes per extraction worker (ExtractorPool)
        self.on_written = on_written  # an attachment's chunks are in: wake the embedder
        self.gate = gate  # research turns first: the readers step aside while one searches
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
        # What the user wrote (annotations, notes): only what changed, before the PDFs.
        regions = await self._region_texts(snapshot)
        own = await asyncio.to_thread(
            own_reading.sync, self.store, own_reading.writings(snapshot, regions)
        )
        progress.own_reading = own
        if own.chunks_written and self.on_written is not None:
            self.on_written()
        if work:  # cleared by _finish: still there at the next start, the sync was cut off
            await asyncio.to_thread(self._mark_interrupted, zotero_dir)
        progress.removed, progress.unchanged = len(removed), unchanged
        progress.items_total = len(work)
        pool = ExtractorPool(
            self.workers,
            timeout=self.timeout or DEFAULT_TIMEOUT,
            memory_limit=self.memory_limit,
            gate=self.gate,
        )
        try:
            pdfs = [i for i, w in enumerate(work) if w.source == "pdf"]
            if pdfs:
                progress.message = f"counting the pages of {len(pdfs)} PDFs"
                yield progress
            unreadable = await self._count_pages(pool, work, pdfs)
            progress.pages_total = sum(w.pages_estimate for w in work)
            progress.phase = "indexing"
            progress.message = (
                f"{len(work)} to index, {unchanged} unchanged, {len(removed)} removed"
            )
            progress.elapsed_seconds = time.perf_counter() - started
            yield progress

            index_started = time.perf_counter()
            async for item_work, extracted in self._extracted(pool, work, unreadable):
                progress.current = item_work.item.title
                await asyncio.to_thread(self._write, item_work, extracted)
                metrics.INDEXED_ATTACHMENTS.labels(extracted.state).inc()
                if extracted.state == STATE_FAILED:
                    progress.failed += 1
                else:
                    metrics.INDEXED_PAGES.inc(len(extracted.pages))
                    metrics.INDEXED_CHUNKS.inc(len(extracted.chunks))
                    progress.no_text += extracted.state == STATE_NO_TEXT
                    if item_work.is_new:
                        progress.added += 1
                    else:
                        progress.updated += 1
                    progress.pages_done += len(extracted.pages)
                if self.on_written is not None:
                    self.on_written()
                progress.items_done += 1
                elapsed = time.perf_counter() - index_started
                progress.pages_per_second = progress.pages_done / elapsed if elapsed > 0 else 0.0
                progress.eta_seconds = (
                    progress.pages_pending / progress.pages_per_second
                    if progress.pages_per_second
                    else 0.0
                )
                progress.elapsed_seconds = time.perf_counter() - started
                yield progress
        finally:
            pool.close()

        await asyncio.to_thread(self._finish)
        progress.phase = "done"
        progress.current = ""
        progress.eta_seconds = 0.0
        progress.elapsed_seconds = time.perf_counter() - started
        progress.message = (
            f"indexed {progress.added} new and {progress.updated} changed attachments "
            f"({progress.pages_done} pages), {progress.unchanged} unchanged, "
            f"{progress.removed} removed, {progress.failed} failed"
            + (f", {progress.no_text} without a text layer" if progress.no_text else "")
            + _own_reading_message(progress.own_reading)
        )
        yield progress

    async def _region_texts(self, snapshot: LibrarySnapshot) -> dict[str, str]:
        """The text under the region of each new or changed image annotation, by its key, read
        from its PDF in a worker (a PDF is never opened in this process)."""
        wanted = await asyncio.to_thread(own_reading.regions_to_read, self.store, snapshot)
        if not wanted:
            return {}
        paths = {
            a.key: a.path
            for item in snapshot.items
            for a in item.attachments
            if a.key in wanted and a.path is not None and a.path.is_file()
        }
        keys = [k for k in wanted if k in paths]
        jobs = [
            Job("pdf", str(paths[k]), regions=tuple((page, rects) for _, page, rects in wanted[k]))
            for k in keys
        ]
        out: dict[str, str] = {}
        pool = ExtractorPool(1, timeout=60.0, memory_limit=self.memory_limit, gate=self.gate)
        try:
            async for position, result in pool.map(jobs):
                annotations = wanted[keys[position]]
                for (key, _, _), text in zip(annotations, result.region_texts, strict=False):
                    out[key] = text
        finally:
            pool.close()
        return out

    async def _count_pages(
        self, pool: ExtractorPool, work: list[_Work], pdfs: list[int]
    ) -> dict[int, Extracted]:
        """Set the page count of the PDFs at ``pdfs`` (positions in ``work``); returns the
        failed results of those that could not be opened, by position."""
        jobs = [Job("pdf", str(work[i].file), count_only=True) for i in pdfs]
        unreadable = {}
        async for position, counted in pool.map(jobs):
            if counted.state == STATE_FAILED:
                unreadable[pdfs[position]] = counted
            else:
                work[pdfs[position]].pages_estimate = counted.page_count
        return unreadable

    async def _extracted(
        self, pool: ExtractorPool, work: list[_Work], unreadable: dict[int, Extracted]
    ) -> AsyncIterator[tuple[_Work, Extracted]]:
        """Each attachment of ``work`` with its result: the unreadable ones first, then the
        others as their workers finish them."""
        for position, failed in unreadable.items():
            yield work[position], failed
        todo = [i for i in range(len(work)) if i not in unreadable]
        jobs = [
            Job(
                work[i].source,
                str(work[i].file),
                str(work[i].attachment.ft_cache) if work[i].attachment.ft_cache else None,
            )
            for i in todo
        ]
        async for position, extracted in pool.map(jobs):
            yield work[todo[position]], extracted

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
                # The same file as last time, read or not (an unreadable one stays failed
                # until it changes; ``full`` tries again), its text made by this recipe.
                known = not full and row is not None and row["source"] != "none"
                current = row is not None and (
                    row["text_version"] == pdf_text.TEXT_VERSION or row["state"] == STATE_FAILED
                )
                same_stat = (
                    known
                    and row is not None
                    and row["source"] == source
                    and row["path"] == str(file)
                    and row["size"] == stat.st_size
                    and row["mtime_ns"] == stat.st_mtime_ns
                )
                if same_stat and current:
                    unchanged += 1
                    continue
                stored_hash = row["content_hash"] if same_stat and row is not None else None
                content_hash = stored_hash or _hash_file(file)  # same stat: same content
                if known and current and row is not None and row["content_hash"] == content_hash:
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
                pages = 0 if source == "pdf" else 1
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

    def _write(self, work: _Work, extracted: Extracted) -> None:
        key = work.attachment.key
        with self.store.writer() as conn:
            if extracted.state == STATE_FAILED:
                writes.record_failure(
                    conn,
                    attachment_key=work.attachment.key,
                    item_key=work.item.key,
                    path=str(work.file),
                    size=work.size,
                    mtime_ns=work.mtime_ns,
                    content_hash=work.content_hash,
                    source=work.source,
                    error=extracted.error or "unreadable",
                )
                self.store.set_text_version(conn, key, pdf_text.TEXT_VERSION)
                return
            vectors = self.store.chunk_vectors(conn, key)  # kept where the text is the same
            writes.write_attachment(
                conn,
                attachment_key=work.attachment.key,
                item_key=work.item.key,
                path=str(work.file),
                size=work.size,
                mtime_ns=work.mtime_ns,
                content_hash=work.content_hash,
                source=extracted.source,
                pages=extracted.pages,
                entries=extracted.entries,
                chunks=extracted.chunks,
                state=extracted.state,
                error=extracted.error,
                empty_pages=extracted.empty_pages,
                term_counts=extracted.term_counts,
            )
            self.store.set_text_version(conn, key, pdf_text.TEXT_VERSION)
            self.store.restore_vectors(conn, key, vectors)

    def _mark_interrupted(self, zotero_dir: pathlib.Path) -> None:
        with self.store.writer() as conn:
            self.store.set_meta(conn, INTERRUPTED_SYNC, str(zotero_dir))

    def interrupted_sync(self) -> pathlib.Path | None:
        """The Zotero directory of a keyword phase that was cut off (crash, kill, cancel)."""
        value = self.store.get_meta(INTERRUPTED_SYNC)
        return pathlib.Path(value) if value else None

    def _finish(self) -> None:
        with self.store.writer() as conn:
            self.store.set_meta(conn, "last_sync_at", str(time.time()))
            conn.execute("DELETE FROM meta WHERE key = ?", (INTERRUPTED_SYNC,))

    def status(self) -> dict[str, Any]:
        counts = self.store.counts()
        last = self.store.get_meta("last_sync_at")
        return {**counts, "last_sync_at": float(last) if last else 0.0, "syncing": self.syncing}
