"""Dynamic batching: concurrent requests share model calls.

Each ``submit`` queues its items. One worker task per batcher takes up to ``max_batch_size``
items from the head of the queue (splitting a large request across batches, never reordering
requests), waits at most ``max_wait_s`` for more company while the batch is not full, and runs
the model on them in an executor thread, so the event loop keeps serving while the model
computes. While one batch runs, the next fills up, so a busy model always gets full batches.

A failing model call fails exactly the requests that had items in that batch; a caller that
gives up (cancelled, deadline) has its remaining items dropped from the queue.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from prometheus_client import Histogram

from services.common.errors import Internal, Unavailable
from services.common.metrics import REGISTRY

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

BATCH_SIZE = Histogram(
    "zocrates_reranker_batch_items",
    "Items per model call of the dynamic batcher, by batcher.",
    ["batcher"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    registry=REGISTRY,
)
BATCH_SECONDS = Histogram(
    "zocrates_reranker_batch_seconds",
    "Seconds one model call of the dynamic batcher took, by batcher.",
    ["batcher"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=REGISTRY,
)
REQUEST_ITEMS = Histogram(
    "zocrates_reranker_request_items",
    "Items per request submitted to the dynamic batcher (one Rerank or Embed call), by batcher.",
    ["batcher"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "zocrates_reranker_request_seconds",
    "Seconds from submitting a request to the batcher to its last result (queueing, waiting "
    "for company and the model calls), by batcher.",
    ["batcher"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=REGISTRY,
)


@dataclass(eq=False)
class _Job(Generic[T, R]):
    items: list[T]
    future: asyncio.Future[list[R]]
    results: list[Any] = field(default_factory=list)
    taken: int = 0  # items handed to a batch so far
    done: int = 0  # items with a result so far

    def __post_init__(self) -> None:
        self.results = [None] * len(self.items)


class DynamicBatcher(Generic[T, R]):
    """Runs ``run(items) -> results`` (one result per item, same order) over batches built
    from concurrent ``submit`` calls. ``run`` is blocking; it executes in ``executor`` (pass a
    single-thread executor shared by every model of a process to keep model calls serial)."""

    def __init__(
        self,
        run: Callable[[list[T]], Sequence[R]],
        *,
        max_batch_size: int,
        max_wait_s: float,
        executor: concurrent.futures.Executor | None = None,
        name: str = "model",
    ) -> None:
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1")
        self._run = run
        self.max_batch_size = max_batch_size
        self.max_wait_s = max(0.0, max_wait_s)
        self._own_executor = executor is None
        self._executor = executor or concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"{name}-inference"
        )
        self.name = name
        self._queue: collections.deque[_Job[T, R]] = collections.deque()
        self._wakeup = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._in_flight: list[_Job[T, R]] = []
        self._closed = False
        self.calls = 0  # model calls made so far (for tests and logs)

    async def submit(self, items: Sequence[T]) -> list[R]:
        """Results of ``items`` in order, computed together with whatever else is queued."""
        if self._closed:
            raise Unavailable("The model is shutting down.", code="shutting_down")
        if not items:
            return []
        job: _Job[T, R] = _Job(list(items), asyncio.get_running_loop().create_future())
        REQUEST_ITEMS.labels(self.name).observe(len(job.items))
        self._queue.append(job)
        self._wakeup.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name=f"{self.name}-batcher")
        with REQUEST_SECONDS.labels(self.name).time():
            return await job.future

    def _pending_items(self) -> int:
        return sum(len(j.items) - j.taken for j in self._queue if not j.future.done())

    async def _gather_company(self) -> None:
        """Wait until a full batch is queued or ``max_wait_s`` has passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_wait_s
        while self._pending_items() < self.max_batch_size:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._wakeup.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), remaining)

    def _take(self) -> tuple[list[T], list[tuple[_Job[T, R], int, int, int]]]:
        """The next batch, plus (job, batch offset, job offset, count) for each slice of it."""
        batch: list[T] = []
        slices: list[tuple[_Job[T, R], int, int, int]] = []
        while self._queue and len(batch) < self.max_batch_size:
            job = self._queue[0]
            if job.future.done():  # cancelled by its caller, or failed with an earlier batch
                self._queue.popleft()
                continue
            count = min(self.max_batch_size - len(batch), len(job.items) - job.taken)
            slices.append((job, len(batch), job.taken, count))
            batch.extend(job.items[job.taken : job.taken + count])
            job.taken += count
            if job.taken == len(job.items):
                self._queue.popleft()
        return batch, slices

    def _timed_run(self, batch: list[T]) -> Sequence[R]:
        with BATCH_SECONDS.labels(self.name).time():
            return self._run(batch)

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not self._pending_items():
                    self._queue.clear()
                    self._wakeup.clear()
                    await self._wakeup.wait()
                    continue
                if self.max_wait_s:
                    await self._gather_company()
                batch, slices = self._take()
                if not batch:
                    continue
                self.calls += 1
                BATCH_SIZE.labels(self.name).observe(len(batch))
                self._in_flight = [job for job, *_ in slices]
                try:
                    out = await loop.run_in_executor(self._executor, self._timed_run, batch)
                    if len(out) != len(batch):
                        raise Internal(
                            f"{self.name} returned {len(out)} results for {len(batch)} items."
                        )
                except Exception as exc:
                    self._in_flight = []
                    logger.warning("%s batch of %d items failed: %r", self.name, len(batch), exc)
                    for job, *_ in slices:
                        if not job.future.done():
                            job.future.set_exception(exc)
                    continue
                self._in_flight = []
                for job, at, offset, count in slices:
                    if job.future.done():
                        continue
                    job.results[offset : offset + count] = out[at : at + count]
                    job.done += count
                    if job.done == len(job.items):
                        job.future.set_result(job.results)
        except BaseException as exc:
            # Cancelled (close) or a bug in this loop: nobody may wait forever.
            self._fail_pending(exc if isinstance(exc, Exception) else None)
            raise

    def _fail_pending(self, exc: Exception | None) -> None:
        error = exc or Unavailable("The model is shutting down.", code="shutting_down")
        for job in [*self._in_flight, *self._queue]:
            if not job.future.done():
                job.future.set_exception(error)
        self._queue.clear()
        self._in_flight = []

    async def close(self) -> None:
        """Fail queued requests, stop the worker and (if this batcher made it) the executor."""
        self._closed = True
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        self._fail_pending(None)
        if self._own_executor:
            self._executor.shutdown(wait=False, cancel_futures=True)
