"""A research turn's searches pause the PDF readers of a sync: the busy worker is stopped
(SIGSTOP) for the gate's window and continued after, no new job starts meanwhile, and the
time it spends stopped does not count against its job's timeout."""

from __future__ import annotations

import asyncio
import pathlib
import time

from services.library.extraction import ExtractorPool, InteractiveGate, Job
from services.library.index_store import STATE_INDEXED
from tests.support import zotero_fixture as zf


def _long_pdf(dest: pathlib.Path) -> pathlib.Path:
    """The 38 papers in one PDF (about 1,000 pages: a second or more of reading)."""
    import pypdfium2 as pdfium

    merged = pdfium.PdfDocument.new()
    for paper in sorted(zf.default_papers_dir().glob("*.pdf")):
        source = pdfium.PdfDocument(paper)
        merged.import_pages(source)
        source.close()
    merged.save(dest)
    merged.close()
    return dest


def _state(pid: int) -> str:
    return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


async def test_a_search_stops_the_busy_reader_and_its_timeout_waits_too(
    tmp_path: pathlib.Path,
) -> None:
    pdf = _long_pdf(tmp_path / "long.pdf")
    gate = InteractiveGate(window=2.0)
    pool = ExtractorPool(1, timeout=60.0, gate=gate)
    try:
        warm = [r async for _, r in pool.map([Job("pdf", str(pdf), count_only=True)])]
        assert warm[0].page_count > 500
        started = time.perf_counter()
        alone = [r async for _, r in pool.map([Job("pdf", str(pdf))])]
        reading = time.perf_counter() - started
        assert alone[0].state == STATE_INDEXED
        # Shorter than reading it plus the pauses: only the reader's own time counts.
        pool.timeout = reading + 1.5
        results: list = []

        async def read() -> None:
            async for _, result in pool.map([Job("pdf", str(pdf)), Job("pdf", str(pdf))]):
                results.append(result)

        task = asyncio.create_task(read())
        await asyncio.sleep(min(0.2, reading / 4))
        (pid,) = pool.busy_pids()
        gate.touch()
        await asyncio.sleep(0.3)
        assert gate.paused() and _state(pid) == "T"  # stopped while the turn searches
        gate.touch()  # a second search extends the pause
        await asyncio.sleep(1.5)
        assert _state(pid) == "T" and len(results) == 0
        await asyncio.wait_for(task, timeout=60)
        assert not gate.paused() and gate.pauses == 1
        assert [r.state for r in results] == [STATE_INDEXED, STATE_INDEXED], results
    finally:
        pool.close()


async def test_without_a_running_pool_a_touch_pauses_nothing() -> None:
    gate = InteractiveGate(window=5.0)
    gate.touch()
    assert not gate.paused() and gate.pauses == 0
    await asyncio.wait_for(gate.wait_clear(), timeout=1)


async def test_a_reader_stopped_as_its_job_ended_runs_its_next_job() -> None:
    """The race seen on the large library: the gate stopped a worker whose result was already
    on its way, the worker went back to the idle ones stopped, and its next job then waited
    for its 300 s timeout (the PDF counted as failed)."""
    gate = InteractiveGate(window=0.5)
    pool = ExtractorPool(1, timeout=10.0, gate=gate)
    pdf = zf.default_papers_dir() / "lmtest__lmtest-intro.pdf"
    try:
        first = [r async for _, r in pool.map([Job("pdf", str(pdf), count_only=True)])]
        (worker,) = pool._idle
        pool._busy.add(worker)  # as if the gate caught it between its result and going idle
        gate.touch()
        pool._busy.discard(worker)
        await asyncio.sleep(0.1)  # the signal's delivery
        assert _state(worker.process.pid) == "T"
        gate.touch()  # still paused when the next job is handed out: it waits for the gate
        started = time.perf_counter()
        second = [r async for _, r in pool.map([Job("pdf", str(pdf), count_only=True)])]
        assert time.perf_counter() - started < 5.0
        assert first[0].page_count == second[0].page_count > 0
        assert second[0].state == STATE_INDEXED and _state(worker.process.pid) != "T"
    finally:
        pool.close()
