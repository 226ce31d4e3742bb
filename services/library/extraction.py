"""The keyword phase's heavy work, in worker processes: page counts, text per page, TOC and
chunks.

PDFium holds one lock per process, and text extraction is CPU-bound Python, so in the service's
process it would take one core and the event loop's GIL with it while the user is chatting.
``ExtractorPool`` runs ``extract`` in ``workers`` spawned processes instead, one attachment at
a time each. No PDF is opened in the service's own process, not even to count its pages: PDFium
inflates every stream it reads in full, so a 2 MB file whose object stream inflates to 2 GiB
takes 3 GB to open, and a 1 KB page whose form draws itself twice grows past 20 GB in about a
minute. Each worker's address space is therefore capped (``memory_limit`` bytes beyond what it
holds at start; Linux's RLIMIT_AS, not enforced elsewhere): PDFium aborts when an allocation
fails, Python raises MemoryError. A PDF that crashes its worker, exhausts its memory or runs
past ``timeout`` seconds costs that worker, which is replaced, and ends as a ``failed`` result
with the reason: a hostile file never stops the library's sync.

What a result may carry back into the service's process is bounded too: a page's text is cut at
``MAX_PAGE_CHARS`` and a document's at ``MAX_DOCUMENT_CHARS`` (pages past it keep no text); the
attachment is then indexed with what was kept and the reason.
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
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from services.common.errors import ZocratesError
from services.library import chunking, ocr, pdf_text, terms, toc
from services.library.index_store import STATE_FAILED, STATE_INDEXED, STATE_NO_TEXT

logger = logging.getLogger(__name__)

MIN_WORDS_FOR_TEXT_LAYER = 20  # fewer words in the whole PDF: it has no text layer
MIN_WORDS_PER_PAGE = 3  # a page with fewer words is an image-only page
DEFAULT_TIMEOUT = 300.0  # seconds for one attachment, however long
# Bytes a worker may allocate beyond what it holds once started. Reading any of the 38 test
# papers peaks under 60 MB (45 MB of it the interpreter); PDFium's memory grows with the
# content of the page it reads.
DEFAULT_MEMORY_LIMIT = 2 << 30
# A dense page of small print holds about 10,000 characters; a book of 2,500 such pages fits.
MAX_PAGE_CHARS = 100_000
MAX_DOCUMENT_CHARS = 25_000_000
# Where the cap is set: Linux enforces RLIMIT_AS on what a process maps; elsewhere none is set.
MEMORY_LIMIT_ENFORCED = sys.platform.startswith("linux")


def default_workers() -> int:
    """One worker per core, at most 2: the embedder and the services need the rest."""
    return max(1, min(2, os.cpu_count() or 1))


@dataclasses.dataclass(frozen=True)
class Job:
    source: str  # "pdf" or "ft-cache"
    file: str
    ft_cache: str | None = None
    count_only: bool = False  # only the PDF's page count (``Extracted.page_count``)
    # OCR (ocr.py): read this 1-based page of the PDF (``Extracted.ocr_text``) ...
    ocr_page: int = 0
    ocr_languages: str = "eng"
    ocr_dpi: int = 300
    # ... or extract the PDF with these pages' text as OCR read it: (page, text).
    ocr_texts: tuple[tuple[int, str], ...] = ()
    # ... or only the text inside these regions (image annotations): (page, rects).
    regions: tuple[tuple[int, tuple[tuple[float, float, float, float], ...]], ...] = ()


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
    # the library service's process, which writes the index.
    term_counts: dict[str, int] = dataclasses.field(default_factory=dict)
    page_count: int = 0  # for a ``count_only`` job
    ocr_text: str = ""  # for an ``ocr_page`` job
    region_texts: list[str] = dataclasses.field(default_factory=list)  # for a ``regions`` job


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
    if job.count_only:
        count = pdf_text.pdf_page_count(file) if source == "pdf" else 1
        return Extracted(state=STATE_INDEXED, source=source, page_count=count)
    if job.regions:
        texts = pdf_text.text_in_regions(file, job.regions)
        return Extracted(state=STATE_INDEXED, source=source, region_texts=texts)
    if job.ocr_page:
        text = ocr.read_page(file, job.ocr_page, languages=job.ocr_languages, dpi=job.ocr_dpi)
        return Extracted(state=STATE_INDEXED, source=source, ocr_text=text)
    if source == "pdf":
        pages = pdf_text.extract_pages(file)
        for page, text in job.ocr_texts:  # pages without a text layer, as OCR read them
            if 1 <= page <= len(pages):
                pages[page - 1] = text
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
                    "the OCR phase reads its pages when Tesseract is installed"
                ),
            )
        entries = toc.build_toc(file if source == "pdf" else None, pages)
    else:
        pages = pdf_text.read_ft_cache(file)
        entries = toc.build_toc(None, pages)
    pages, cut = limit_text(pages)
    empty = sum(1 for p in pages if len(p.split()) < MIN_WORDS_PER_PAGE)
    chunks = chunking.chunk_document(pages, entries)
    return Extracted(
        state=STATE_INDEXED,
        source=source,
        pages=pages,
        entries=entries,
        chunks=chunks,
        empty_pages=empty if source == "pdf" else 0,
        error=cut,
        term_counts=dict(
            terms.document_frequencies(terms.chunk_text(c.text, c.section) for c in chunks)
        ),
    )


def limit_text(
    pages: list[str],
    *,
    page_chars: int = MAX_PAGE_CHARS,
    document_chars: int = MAX_DOCUMENT_CHARS,
) -> tuple[list[str], str | None]:
    """``pages`` with each page cut at ``page_chars`` and nothing kept past ``document_chars``
    in all, and what was cut (None when nothing was)."""
    kept: list[str] = []
    long_pages: list[int] = []
    total = 0
    dropped_from = None
    for number, text in enumerate(pages, start=1):
        if len(text) > page_chars:
            long_pages.append(number)
            text = text[:page_chars]
        if total + len(text) > document_chars:
            dropped_from = dropped_from or number
            text = text[: max(0, document_chars - total)]
        total += len(text)
        kept.append(text)
    reasons = []
    if long_pages:
        listed = ", ".join(map(str, long_pages[:5])) + (", ..." if len(long_pages) > 5 else "")
        reasons.append(
            f"the text of {len(long_pages)} page(s) ({listed}) was cut at {page_chars:,} "
            "characters, more than a real page holds"
        )
    if dropped_from is not None:
        reasons.append(
            f"the text past {document_chars:,} characters (from page {dropped_from} on) was "
            "left out"
        )
    if not reasons:
        return kept, None
    return kept, "partly indexed: " + "; ".join(reasons)


# Extraction workers yield the CPU to everything else (a research turn's cross-encoder, the
# service's event loop): idle cores they still take in full, a busy machine runs the turn first.
WORKER_NICENESS = 10


def _worker_main(conn: multiprocessing.connection.Connection, memory_limit: int | None) -> None:
    """A worker process: one job in, one result out, until the pipe closes."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICENESS)
    _limit_memory(memory_limit)
    with contextlib.suppress(EOFError, KeyboardInterrupt):
        while True:
            job = conn.recv()
            conn.send(extract(job))


def _limit_memory(budget: int | None) -> None:
    """Cap this process's address space at what it maps now plus ``budget`` bytes (Linux)."""
    if not budget or not MEMORY_LIMIT_ENFORCED:
        return
    import resource  # POSIX only

    with open("/proc/self/statm", encoding="ascii") as statm:
        mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped + budget
    for existing in (soft, hard):
        if existing != resource.RLIM_INFINITY:
            limit = min(limit, existing)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


class InteractiveGate:
    """Interactive work first: a search or a page read of a research turn ``touch``-es the
    gate, and for ``window`` seconds after the last touch the extraction workers of every pool
    that uses it are paused (SIGSTOP; SIGCONT after) and take no new job. On two cores the
    readers of a large sync otherwise halve the cross-encoder's speed, though they run niced:
    the user's turn is what they are waiting for. The time a worker spends paused does not
    count against its job's timeout."""

    def __init__(self, window: float = 5.0) -> None:
        self.window = window
        self._until = 0.0
        self._pools: set[ExtractorPool] = set()
        self._resume: asyncio.TimerHandle | None = None
        self._clear = asyncio.Event()
        self._clear.set()
        self.pauses = 0  # how often the readers stepped aside (for the logs and tests)

    def paused(self) -> bool:
        return time.monotonic() < self._until

    def touch(self) -> None:
        """A turn is searching or reading: readers step aside for ``window`` seconds."""
        if not self._pools:
            return
        was = self.paused()
        self._until = time.monotonic() + self.window
        if not was:
            self.pauses += 1
            self._clear.clear()
            for pool in list(self._pools):
                pool._pause(True)
        if self._resume is None:
            self._resume = asyncio.get_running_loop().call_later(self.window, self._check)

    def _check(self) -> None:
        self._resume = None
        left = self._until - time.monotonic()
        if left > 0:
            self._resume = asyncio.get_running_loop().call_later(left, self._check)
            return
        self._clear.set()
        for pool in list(self._pools):
            pool._pause(False)

    async def wait_clear(self) -> None:
        await self._clear.wait()


class _WorkerGone(Exception):
    """The worker process was gone before a job reached it (the job is not at fault)."""


class _Worker:
    def __init__(self, ctx: Any, memory_limit: int | None) -> None:
        self.memory_limit = memory_limit
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_worker_main, args=(child, memory_limit), daemon=True)
        self.process.start()
        child.close()

    def run(self, job: Job, timeout: float, paused: Callable[[], bool] | None = None) -> Extracted:
        """Blocking (run in a thread): send one job, wait for its result (``timeout`` seconds
        of the worker's own time: while ``paused()`` says so, the clock stands). Raises
        ``_WorkerGone`` when the worker died before it took the job."""
        try:
            self.conn.send(job)
        except OSError as exc:  # BrokenPipeError included: it exited while idle
            self.kill()
            raise _WorkerGone from exc
        if not self._wait(timeout, paused):
            self.kill()
            return Extracted(
                state=STATE_FAILED,
                source=job.source,
                error=f"reading it took longer than {timeout:g} s; the reader was stopped",
            )
        try:
            result: Extracted = self.conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=5)
            code = self.process.exitcode
            self.kill()
            return Extracted(state=STATE_FAILED, source=job.source, error=self._crash(code))
        return result

    def _wait(self, timeout: float, paused: Callable[[], bool] | None) -> bool:
        if paused is None:
            return bool(self.conn.poll(timeout))
        used = 0.0
        while used < timeout:
            step = min(0.5, timeout - used)
            if self.conn.poll(step):
                return True
            if not paused():
                used += step
        return bool(self.conn.poll(0))

    def signal(self, sig: signal.Signals) -> None:
        if self.process.pid is not None and self.process.is_alive():
            with contextlib.suppress(OSError):
                os.kill(self.process.pid, sig)

    def _crash(self, code: int | None) -> str:
        """Why a file failed when its worker died."""
        how = f"exit code {code}"
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                how = f"killed by {signal.Signals(-code).name}"
        reason = f"the PDF reader crashed on this file ({how})"
        if self.memory_limit and MEMORY_LIMIT_ENFORCED:
            reason += f"; it may have needed more than its {self.memory_limit >> 20} MiB of memory"
        return reason

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
        self.signal(signal.SIGCONT)  # a paused worker would not see its pipe close
        with contextlib.suppress(OSError):
            self.conn.close()  # the worker's recv() ends with EOFError
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.kill()


class ExtractorPool:
    """``workers`` spawned processes running ``extract``; results in completion order."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        gate: InteractiveGate | None = None,
    ) -> None:
        self.workers = workers or default_workers()
        self.timeout = timeout
        self.memory_limit = memory_limit  # bytes per worker; None: no cap
        self.gate = gate  # research turns first (None: never step aside)
        if gate is not None:
            gate._pools.add(self)
        # spawn, not fork: the library service has gRPC and asyncio threads that a fork would copy.
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._stopped: set[_Worker] = set()  # paused by the gate (a job may finish meanwhile)

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
                paused = self.gate.paused if self.gate is not None else None
                for index, job in pending:
                    if self.gate is not None:
                        await self.gate.wait_clear()  # a turn is searching: it goes first
                    if worker is None or not worker.alive:
                        worker = self._idle.pop() if self._idle else self._new_worker()
                    if worker in self._stopped:  # stopped as its last job ended
                        worker.signal(signal.SIGCONT)
                        self._stopped.discard(worker)
                    busy = True
                    self._busy.add(worker)
                    try:
                        result = await asyncio.to_thread(worker.run, job, self.timeout, paused)
                    except _WorkerGone:  # once more with a new worker
                        self._busy.discard(worker)
                        worker = self._new_worker()
                        self._busy.add(worker)
                        result = await asyncio.to_thread(worker.run, job, self.timeout, paused)
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

    def _new_worker(self) -> _Worker:
        return _Worker(self._ctx, self.memory_limit)

    def _pause(self, paused: bool) -> None:
        """Stop the workers reading right now, or continue every worker stopped (one whose job
        had finished when it was stopped is idle by now, and must run its next one)."""
        if paused:
            for worker in list(self._busy):
                worker.signal(signal.SIGSTOP)
                self._stopped.add(worker)
        else:
            for worker in list(self._stopped):
                worker.signal(signal.SIGCONT)
            self._stopped.clear()

    def close(self) -> None:
        if self.gate is not None:
            self.gate._pools.discard(self)
        for worker in list(self._busy | self._stopped):
            worker.signal(signal.SIGCONT)
        self._stopped.clear()
        while self._idle:
            self._idle.pop().stop()
