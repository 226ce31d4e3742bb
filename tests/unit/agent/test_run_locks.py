"""The agent's per-session run lock and its wait for an aborted run."""

from __future__ import annotations

import asyncio

import pytest

from services.agent.research.run_locks import KeyedLocks, wait_through_cancellation
from services.common.errors import Conflict


async def test_a_run_that_ignores_the_abort_is_cancelled_when_the_wait_ends() -> None:
    started = asyncio.Event()

    async def stubborn() -> None:
        started.set()
        await asyncio.sleep(30)

    task = asyncio.create_task(stubborn())
    await started.wait()
    assert await wait_through_cancellation(task, 0.1) is False
    assert task.cancelled()


async def test_the_wait_survives_repeated_cancellation_then_re_raises() -> None:
    finished = asyncio.Event()

    async def slow_seal() -> None:
        await asyncio.sleep(0.3)
        finished.set()

    run = asyncio.create_task(slow_seal())

    async def handler() -> None:
        await wait_through_cancellation(run, 5.0)

    waiter = asyncio.create_task(handler())
    for _ in range(3):  # gRPC may cancel a handler more than once
        await asyncio.sleep(0.05)
        waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert finished.is_set()  # the run finished sealing before the handler let go


async def test_second_run_waits_then_times_out_with_session_busy() -> None:
    locks = KeyedLocks()
    async with locks.hold("s1", timeout=1):
        with pytest.raises(Conflict) as err:
            async with locks.hold("s1", timeout=0.05):
                pass
        assert err.value.code == "session_busy"
        async with locks.hold("s2", timeout=0.05):  # other sessions are independent
            pass
    async with locks.hold("s1", timeout=0.05):
        pass
    assert locks._locks == {}  # nothing left behind
