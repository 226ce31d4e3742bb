"""The OCR phase: after the keyword phase, the pages without a text layer are read by OCR.

A PDF that the keyword phase found without text (a scan: ``no_text``), or with pages without
text (``empty_pages``), is read page by page in an extraction worker (``ocr.read_page``:
PDFium renders, Tesseract reads), the shortest PDFs first. Each page's text is kept as it is
read (``ocr_pages``, by the PDF's content hash and the languages), so the phase resumes where
a restart cut it off and a re-index reads nothing again. Once every page of a PDF is read, the
PDF is indexed anew with those pages' text (TOC, chunks, keyword index; its vectors follow in
the embedding phase) and marked done for its content and languages.

The phase waits while a keyword phase runs (that one makes the library searchable first) and
steps aside for nothing else: its worker runs niced, Tesseract on one thread. Without
Tesseract (or the languages' data) it reads nothing and its progress says why and how to
install it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import pathlib
from collections.abc import Awaitable, Callable
from typing import Any

from services.library import index_writes as writes
from services.library import ocr, pdf_text
from services.library.extraction import (
    DEFAULT_MEMORY_LIMIT,
    MIN_WORDS_PER_PAGE,
    Extracted,
    ExtractorPool,
    InteractiveGate,
    Job,
)
from services.library.index_store import STATE_FAILED, STATE_NO_TEXT, IndexStore
from services.library.phase import BackgroundPhase, Rate

logger = logging.getLogger(__name__)

RATE_WINDOW = 120.0  # seconds of pages read that the rate is measured over


@dataclasses.dataclass
class OcrProgress:
    running: bool = False
    available: bool = False
    languages: str = "eng"
    attachments_pending: int = 0
    pages_done: int = 0  # read since the service started
    pages_pending: int = 0
    pages_per_second: float = 0.0
    eta_seconds: float = 0.0
    # Why it cannot run (Tesseract missing), or the last page it could not read.
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class OcrPhase(BackgroundPhase):
    task_name = "ocr-phase"

    def __init__(
        self,
        store: IndexStore,
        *,
        languages: str = "eng",
        dpi: int = ocr.DEFAULT_DPI,
        workers: int = 1,
        enabled: bool = True,
        hold: Callable[[], bool] | None = None,
        after_write: Callable[[bool], Awaitable[None]] | None = None,
        gate: InteractiveGate | None = None,
    ) -> None:
        super().__init__()
        self._idle.set()  # not started: nothing to wait for
        self.store = store
        self.languages = languages
        self.dpi = dpi
        self.workers = workers
        self.enabled = enabled
        self.hold = hold or (lambda: False)  # a keyword phase runs: wait for it
        # A PDF was indexed anew with its OCR text (True: it had chunks, now replaced).
        self.after_write = after_write
        self.gate = gate  # research turns first: OCR steps aside while one searches
        self._rate = Rate(RATE_WINDOW)
        self._done = 0
        self._running = False
        self._error = ""
        self._pending = (0, 0)

    # ---- control ----

    @property
    def done_key(self) -> str:
        return self.languages

    def start(self) -> None:
        if self.enabled:
            super().start()

    def refresh_counts(self) -> None:
        """Blocking: count what is left (a thread; the status calls it)."""
        self._pending = self.store.ocr_pending(self.languages)

    def progress(self) -> OcrProgress:
        found = ocr.status(self.languages)
        attachments, pages = self._pending
        rate = self._rate.per_second()
        return OcrProgress(
            running=self._running,
            available=bool(found["available"]) and self.enabled,
            languages=self.languages,
            attachments_pending=attachments,
            pages_done=self._done,
            pages_pending=pages,
            pages_per_second=round(rate, 3),
            eta_seconds=round(pages / rate, 1) if rate and pages else 0.0,
            error=(
                "OCR is turned off (ZOCRATES_OCR_ENABLED=false)"
                if not self.enabled
                else str(found["error"])
                if not found["available"]
                else self._error
            ),
        )

    # ---- the phase ----

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._after_sync()
                await self._drain()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never let the phase die: the next sync wakes it again
                logger.exception("OCR phase failed")
                self._error = f"{type(exc).__name__}: {exc}"
            finally:
                self._running = False
                await asyncio.to_thread(self.refresh_counts)
                if not self._wake.is_set():
                    self._idle.set()

    async def _after_sync(self) -> None:
        """Return once no keyword phase runs (it is polled: the indexer has no event)."""
        for _ in iter(self.hold, False):
            await asyncio.sleep(1.0)

    async def _drain(self) -> None:
        await asyncio.to_thread(self.refresh_counts)
        if not self._pending[0]:
            return
        if not ocr.status(self.languages)["available"]:
            logger.warning(
                "%d PDFs have pages without a text layer; OCR cannot read them: %s",
                self._pending[0],
                ocr.status(self.languages)["error"],
            )
            return
        await asyncio.to_thread(self.store.forget_unused_ocr)
        todo = await asyncio.to_thread(self.store.ocr_todo, self.languages)
        logger.info(
            "OCR phase: %d PDFs with %d pages without text (%s)",
            len(todo),
            self._pending[1],
            self.languages,
        )
        self._running = True
        self._rate.add(0)  # the reading starts (again) now
        pool = ExtractorPool(
            self.workers,
            timeout=ocr.PAGE_TIMEOUT + 30,
            memory_limit=DEFAULT_MEMORY_LIMIT,
            gate=self.gate,
        )
        try:
            for attachment in todo:
                await self._after_sync()  # a sync started: it goes first
                await self._read(pool, attachment)
        finally:
            pool.close()

    async def _read(self, pool: ExtractorPool, a: dict[str, Any]) -> None:
        key, content_hash, path = a["attachment_key"], a["content_hash"], a["path"]
        pages = await asyncio.to_thread(self.store.pages_without_text, key, MIN_WORDS_PER_PAGE)
        if a["state"] == STATE_NO_TEXT and not pages:
            pages = list(range(1, int(a["page_count"] or 0) + 1))
        read = await asyncio.to_thread(self.store.ocr_read, content_hash, self.languages)
        missing = [p for p in pages if p not in read]
        jobs = [
            Job("pdf", path, ocr_page=p, ocr_languages=self.languages, ocr_dpi=self.dpi)
            for p in missing
        ]
        async for position, result in pool.map(jobs):
            page = missing[position]
            text = result.ocr_text
            if result.state == STATE_FAILED:
                # Kept as read (empty): a page Tesseract cannot read is not tried forever.
                self._error = result.error or "unreadable"
                logger.warning(
                    "OCR: page %d of %s: %s", page, pathlib.Path(path).name, result.error
                )
                text = ""
            await asyncio.to_thread(
                self.store.save_ocr_page, content_hash, self.languages, page, text
            )
            read[page] = text
            self._done += 1
            self._rate.add(1)
            self._pending = (self._pending[0], max(0, self._pending[1] - 1))
        texts = tuple(sorted((p, read[p]) for p in pages if p in read))
        results = [r async for _, r in pool.map([Job("pdf", path, ocr_texts=texts)])]
        extracted = results[0]
        replaced = await asyncio.to_thread(self._write, a, extracted, len(texts))
        if replaced is None:
            return  # the PDF changed meanwhile: the next sync and phase take it from there
        words = sum(len(t.split()) for _, t in texts)
        logger.info(
            "OCR read %d pages of %s (%d words): %s",
            len(texts),
            pathlib.Path(path).name,
            words,
            extracted.state,
        )
        if self.after_write is not None:
            await self.after_write(replaced)

    def _write(self, a: dict[str, Any], extracted: Extracted, ocr_pages: int) -> bool | None:
        """Index the PDF anew with its OCR text; whether it had chunks before (None: it
        changed since the phase began, so nothing was written)."""
        key = a["attachment_key"]
        done = f"{a['content_hash']}:{self.done_key}"
        with self.store.writer() as conn:
            row = conn.execute(
                "SELECT content_hash, (SELECT count(*) FROM chunks WHERE attachment_key = ?) "
                "FROM attachments WHERE attachment_key = ?",
                (key, key),
            ).fetchone()
            if row is None or row[0] != a["content_hash"]:
                return None
            had_chunks = bool(row[1])
            if extracted.state == STATE_FAILED:  # the PDF cannot be read now: keep what was
                self.store.mark_ocr_done(conn, key, done, 0)
                return False
            vectors = self.store.chunk_vectors(conn, key)
            state = extracted.state
            error: str | None = extracted.error
            if state == STATE_NO_TEXT:  # OCR found nothing either: still no text, but done
                error = "no text layer, and OCR found no text on its pages"
            writes.write_attachment(
                conn,
                attachment_key=key,
                item_key=a["item_key"],
                path=a["path"],
                size=a["size"],
                mtime_ns=a["mtime_ns"],
                content_hash=a["content_hash"],
                source=extracted.source,
                pages=extracted.pages,
                entries=extracted.entries,
                chunks=extracted.chunks,
                state=state,
                error=error,
                empty_pages=extracted.empty_pages,
                term_counts=extracted.term_counts,
            )
            self.store.set_text_version(conn, key, pdf_text.TEXT_VERSION)
            self.store.restore_vectors(conn, key, vectors)
            self.store.mark_ocr_done(conn, key, done, ocr_pages)
        return had_chunks
