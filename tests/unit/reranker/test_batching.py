"""The dynamic batcher, with a tiny deterministic model object standing in for the network."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from services.common.errors import Unavailable
from services.reranker.batching import DynamicBatcher


class FakeModel:
    """Doubles numbers; records every batch; optionally slow or failing on a marker item."""

    def __init__(self, *, delay_s: float = 0.0, fail_on: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.delay_s = delay_s
        self.fail_on = fail_on
        self.threads: set[str] = set()

    def __call__(self, items: list[int]) -> list[int]:
        self.batches.append(list(items))
        self.threads.add(threading.current_thread().name)
        if self.delay_s:
            time.sleep(self.delay_s)  # blocking, like a real model call
        if self.fail_on is not None and self.fail_on in items:
            raise ValueError(f"model failed on {self.fail_on}")
        return [2 * x for x in items]


async def test_concurrent_calls_share_model_calls_and_get_their_own_results() -> None:
    model = FakeModel(delay_s=0.01)
    batcher = DynamicBatcher(model, max_batch_size=32, max_wait_s=0.02, name="fake")
    requests = [list(range(100 * r, 100 * r + 3)) for r in range(40)]  # 40 requests x 3 items
    try:
        results = await asyncio.gather(*(batcher.submit(items) for items in requests))
    finally:
        await batcher.close()
    assert results == [[2 * x for x in items] for items in requests]
    assert len(model.batches) < 10  # 120 items in batches of up to 32, not 40 calls
    assert max(len(b) for b in model.batches) == 32
    assert sorted(x for b in model.batches for x in b) == sorted(x for r in requests for x in r)
    assert model.threads and not any(t == threading.current_thread().name for t in model.threads)


async def test_a_large_request_is_split_across_batches_in_order() -> None:
    model = FakeModel()
    batcher = DynamicBatcher(model, max_batch_size=8, max_wait_s=0.0)
    try:
        result = await batcher.submit(list(range(20)))
    finally:
        await batcher.close()
    assert result == [2 * x for x in range(20)]
    assert [len(b) for b in model.batches] == [8, 8, 4]


async def test_a_lone_request_waits_at_most_max_wait() -> None:
    model = FakeModel()
    batcher = DynamicBatcher(model, max_batch_size=32, max_wait_s=0.05)
    try:
        started = time.perf_counter()
        assert await batcher.submit([1]) == [2]
        elapsed = time.perf_counter() - started
    finally:
        await batcher.close()
    assert 0.04 <= elapsed < 0.5
    assert await DynamicBatcher(model, max_batch_size=4, max_wait_s=1.0).submit([]) == []


async def test_a_failing_batch_fails_only_its_callers() -> None:
    model = FakeModel(delay_s=0.05, fail_on=13)
    batcher = DynamicBatcher(model, max_batch_size=4, max_wait_s=0.01)
    try:
        first = asyncio.create_task(batcher.submit([1, 2]))
        await asyncio.sleep(0.02)  # the first batch ([1, 2]) is now running
        doomed = asyncio.create_task(batcher.submit([13]))
        sibling = asyncio.create_task(batcher.submit([3, 4, 5]))  # same batch as 13
        await asyncio.sleep(0)
        later_ok = asyncio.create_task(batcher.submit([6, 7]))  # 3 + 1 + 2 > 4: next batch
        assert await first == [2, 4]
        with pytest.raises(ValueError, match="model failed on 13"):
            await doomed
        with pytest.raises(ValueError, match="model failed on 13"):
            await sibling
        assert await later_ok == [12, 14]
        assert await batcher.submit([8]) == [16]  # the batcher keeps working afterwards
    finally:
        await batcher.close()
    assert [13, 3, 4, 5] in model.batches or [13, 3, 4] in model.batches


async def test_a_cancelled_caller_does_not_disturb_the_others() -> None:
    model = FakeModel(delay_s=0.05)
    batcher = DynamicBatcher(model, max_batch_size=2, max_wait_s=0.0)
    try:
        running = asyncio.create_task(batcher.submit([1, 2]))
        await asyncio.sleep(0.01)
        gone = asyncio.create_task(batcher.submit([3, 4, 5, 6]))
        kept = asyncio.create_task(batcher.submit([7]))
        await asyncio.sleep(0)
        gone.cancel()
        assert await running == [2, 4]
        assert await kept == [14]
    finally:
        await batcher.close()
    assert all(3 not in b for b in model.batches)


async def test_the_event_loop_keeps_running_while_the_model_computes() -> None:
    model = FakeModel(delay_s=0.4)
    batcher = DynamicBatcher(model, max_batch_size=4, max_wait_s=0.0)
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.create_task(heartbeat())
    try:
        assert await batcher.submit([1, 2, 3]) == [2, 4, 6]
    finally:
        beat.cancel()
        await batcher.close()
    assert ticks >= 20  # ~40 possible in 0.4 s; a blocked loop would give 0 or 1


async def test_close_fails_waiting_callers_and_refuses_new_ones() -> None:
    model = FakeModel(delay_s=0.2)
    batcher = DynamicBatcher(model, max_batch_size=1, max_wait_s=0.0)
    first = asyncio.create_task(batcher.submit([1]))
    queued = asyncio.create_task(batcher.submit([2]))
    await asyncio.sleep(0.05)
    await batcher.close()
    for task in (first, queued):
        with pytest.raises(Unavailable):
            await task
    with pytest.raises(Unavailable):
        await batcher.submit([3])
