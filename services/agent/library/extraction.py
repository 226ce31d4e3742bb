"""The keyword phase's heavy work, in worker processes: text per page, TOC and chunks.

PDFium holds one lock per process, and text extraction is CPU-bound Python, so in the agent's
process it would take one core and the event loop's GIL with it while the user is chatting.
``ExtractorPool`` runs ``extract`` in ``workers`` spawned processes instead, one attachment at
a time each. A PDF that crashes its worker (PDFium is C) or runs past ``timeout`` seconds
costs that worker, which is replaced, and ends as a ``failed`` result with the reason: a
hostile file never stops the library's sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import os
import pathlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from services.agent.library import chunking, pdf_text, terms, toc
from services.agent.library.index_store import STATE_FAILED, STATE_INDEXED, STATE_NO_TEXT
from services.common.errors import ZocratesError

logger = logging.getLogger(__name__)

MIN_WORDS_FOR_TEXT_LAYER = 20  # fewer words in the whole PDF: it has no text layer
MIN_WORDS_PER_PAGE = 3  # a page with fewer words is an image-only page
DEFAULT_TIMEOUT = 300.0  # seconds for one attachment, however long


def default_workers() -> int:
    """One worker per core, at most 2: the embedder and the agent need the rest."""
    return max(1, min(2, os.cpu_count() or 1))


@dataclasses.dataclass(frozen=True)
class Job:
    source: str  # "pdf" or "ft-cache"
    file: str
    ft_cache: str | None = None


@dataclasses.dataclass
class Extracted:
    state: str  # STATE_INDEXED, STATE_NO_TEXT or STATE_FAILED
    source: str
    pages: list[str] = dataclasses.field(default_factory=list)
    entries: list[toc.TocEntry] = dataclasses.field(default_factory=list)
    chunks: list[chunking.Chunk] = dataclasses.field(default_factory=list)
    empty_pages: int = 0
    error: str | None = None
    # Chunks each word occurs in (terms.document_frequencies), counted here rather than in
    # the agent's process, which writes the index.
    term_counts: dict[str, int] = dataclasses.field(default_factory=dict)


def extract(job: Job) -> Extracted:
    """Blocking: what the keyword phase writes for one attachment. Never raises for a bad
    file: an unreadable one is a ``failed`` result with the reason."""
    try:
        return _extract(job)
    except ZocratesError as exc:
        return Extracted(state=STATE_FAILED, source=job.source, error=exc.message)
    except Exception as exc:  # a broken PDF must not stop the library's sync
        logger.exception("could not read %s", job.file)
        return Extracted(
            state=STATE_FAILED, source=job.source, error=f"{type(exc).__name__}: {exc}"
        )


def _extract(job: Job) -> Extracted:
    source, file = job.source, pathlib.Path(job.file)
    ft_cache = pathlib.Path(job.ft_cache) if job.ft_cache else None
    if source == "pdf":
        pages = pdf_text.extract_pages(file)
        words = sum(len(p.split()) for p in pages)
        if words < MIN_WORDS_FOR_TEXT_LAYER and ft_cache is not None and ft_cache.is_file():
            pages, source = pdf_text.read_ft_cache(ft_cache), "ft-cache"
        elif words < MIN_WORDS_FOR_TEXT_LAYER:
            return Extracted(
                state=STATE_NO_TEXT,
                source=source,
                pages=pages,
                empty_pages=len(pages),
                error=(
                    f"no text layer: {words} words in {len(pages)} pages (scanned images?); "
                    "run OCR on it in Zotero or another tool, then sync again"
                ),
            )
        entries = toc.build_toc(file if source == "pdf" else None, pages)
    else:
        pages = pdf_text.read_ft_cache(file)
        entries = toc.build_toc(None, pages)
    empty = sum(1 for p in pages if len(p.split()) < MIN_WORDS_PER_PAGE)
    chunks = chunking.chunk_document(pages, entries)
    return Extracted(
        state=STATE_INDEXED,
        source=source,
        pages=pages,
        entries=entries,
        chunks=chunks,
        empty_pages=empty if source == "pdf" else 0,
        term_counts=dict(
            terms.document_frequencies(terms.chunk_text(c.text, c.section) for c in chunks)
        ),
    )


def _worker_main(conn: multiprocessing.connection.Connection) -> None:
    """A worker process: one job in, one result out, until the pipe closes."""
    with contextlib.suppress(EOFError, KeyboardInterrupt):
        while True:
            job = conn.recv()
            conn.send(extract(job))


class _WorkerGone(Exception):
    """The worker process was gone before a job reached it (the job is not at fault)."""


class _Worker:
    def __init__(self, ctx: Any) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_worker_main, args=(child,), daemon=True)
        self.process.start()
        child.close()

    def run(self, job: Job, timeout: float) -> Extracted:
        """Blocking (run in a thread): send one job, wait for its result. Raises
        ``_WorkerGone`` when the worker died before it took the job."""
        try:
            self.conn.send(job)
        except OSError as exc:  # BrokenPipeError included: it exited while idle
            self.kill()
            raise _WorkerGone from exc
        if not self.conn.poll(timeout):
            self.kill()
            return Extracted(
                state=STATE_FAILED,
                source=job.source,
                error=f"reading it took longer than {timeout:g} s; the reader was stopped",
            )
        try:
            result: Extracted = self.conn.recv()
        except (EOFError, OSError):
            code = self.process.exitcode
            self.kill()
            return Extracted(
                state=STATE_FAILED,
                source=job.source,
                error=f"the PDF reader crashed on this file (exit code {code})",
            )
        return result

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()  # the worker's recv() ends with EOFError
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.kill()


class ExtractorPool:
    """``workers`` spawned processes running ``extract``; results in completion order."""

    def __init__(self, workers: int | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.workers = workers or default_workers()
        self.timeout = timeout
        # spawn, not fork: the agent has gRPC and asyncio threads that a fork would copy.
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()

    def busy_pids(self) -> list[int]:
        """Process ids of the workers reading a file right now."""
        return [w.process.pid for w in self._busy if w.process.pid is not None]

    async def map(self, jobs: Sequence[Job]) -> AsyncIterator[tuple[int, Extracted]]:
        """(index into ``jobs``, result) as each finishes; at most ``workers`` at a time."""
        queue: asyncio.Queue[tuple[int, Extracted]] = asyncio.Queue()
        pending = iter(enumerate(jobs))

        async def lane() -> None:
            worker: _Worker | None = None
            busy = False
            try:
                for index, job in pending:
                    if worker is None or not worker.alive:
                        worker = self._idle.pop() if self._idle else _Worker(self._ctx)
                    busy = True
                    self._busy.add(worker)
                    try:
                        result = await asyncio.to_thread(worker.run, job, self.timeout)
                    except _WorkerGone:  # once more with a new worker
                        self._busy.discard(worker)
                        worker = _Worker(self._ctx)
                        self._busy.add(worker)
                        result = await asyncio.to_thread(worker.run, job, self.timeout)
                    self._busy.discard(worker)
                    busy = False
                    await queue.put((index, result))
            finally:
                if worker is not None:
                    self._busy.discard(worker)
                if worker is not None and busy:
                    worker.kill()  # cancelled mid-job: its answer would reach the next job
                elif worker is not None and worker.alive:
                    self._idle.append(worker)

        lanes = [asyncio.create_task(lane()) for _ in range(min(self.workers, len(jobs)))]
        try:
            for _ in range(len(jobs)):
                yield await queue.get()
            await asyncio.gather(*lanes)
        finally:
            for task in lanes:
                task.cancel()
            await asyncio.gather(*lanes, return_exceptions=True)

    def close(self) -> None:
        while self._idle:
            self._idle.pop().stop()
