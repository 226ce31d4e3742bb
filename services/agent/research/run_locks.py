"""Serialization of runs within one agent replica: one lock per key, and the wait for an
aborted run to finish writing before its session's lock is let go."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from services.common.errors import Conflict


async def wait_through_cancellation(task: asyncio.Task[Any], timeout: float) -> bool:
    """Wait for ``task`` to finish even if we are cancelled meanwhile (again and again: gRPC
    may cancel a handler more than once), then re-raise the cancellation. Returns whether the
    task finished. The session's lock must not be released while the run is still writing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    cancelled = False
    while not task.done() and loop.time() < deadline:
        try:
            await asyncio.wait([task], timeout=max(0.0, deadline - loop.time()))
        except asyncio.CancelledError:
            cancelled = True
    finished = task.done()
    if not finished:
        # It ignored the abort: cancel it and give it a moment to unwind before the caller
        # releases the session, whatever happens to us meanwhile.
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([task], timeout=5.0)
    if cancelled:
        raise asyncio.CancelledError
    return finished


class KeyedLocks:
    """One ``asyncio.Lock`` per key for the runs of this replica, dropped when nobody holds or
    waits for it.

    The chat service keys it by session: a run holds it until ADK has finished sealing or
    persisting its invocation, so the next request on the session never loads a copy that the
    previous run is still writing to. ``search_library`` keys it by invocation: two calls in
    one model response run one after the other.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str, *, timeout: float | None = None) -> AsyncIterator[None]:
        """Hold ``key``'s lock for the block, once the runs before it let go.

        Args:
            key: what the runs to serialize share (a session id, an invocation id).
            timeout: the longest wait, in seconds, before :class:`Conflict` ``session_busy``
                (the previous turn on the session is still shutting down); None waits for as
                long as it takes.
        """
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            if timeout is None:
                await lock.acquire()
            else:
                try:
                    await asyncio.wait_for(lock.acquire(), timeout)
                except TimeoutError:
                    raise Conflict(
                        "The previous turn on this session is still shutting down; try again.",
                        code="session_busy",
                    ) from None
            try:
                yield
            finally:
                lock.release()
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
