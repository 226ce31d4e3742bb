"""What the library service's background phases share (the embedding phase, ``embedding.py``;
the OCR phase, ``ocr_phase.py``): a task that sleeps until woken and says when it is idle, and
the rate of its work over a recent window."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time


class Rate:
    """Units done per second over the last ``window`` seconds (``add`` as they are done; an
    ``add(0)`` marks when the work started again)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._recent: collections.deque[tuple[float, int]] = collections.deque()

    def add(self, done: int) -> None:
        self._recent.append((time.monotonic(), done))

    def per_second(self) -> float:
        now = time.monotonic()
        while self._recent and now - self._recent[0][0] > self.window:
            self._recent.popleft()
        if len(self._recent) < 2:
            return 0.0
        span = now - self._recent[0][0]
        done = sum(n for _, n in list(self._recent)[1:])
        return done / span if span > 0 else 0.0


class BackgroundPhase:
    """A task of its own (``_run``, written by the subclass) that waits on ``_wake`` and sets
    ``_idle`` when it has nothing left: ``start``, ``stop``, ``wake``, ``wait_idle``."""

    task_name = "background-phase"

    def __init__(self) -> None:
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=self.task_name)
            self.wake()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def wake(self) -> None:
        """There may be work (a sync wrote some)."""
        self._idle.clear()
        self._wake.set()

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Until the phase has nothing left (True), or ``timeout`` seconds (False)."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def _run(self) -> None:
        raise NotImplementedError
