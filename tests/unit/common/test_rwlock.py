"""AsyncRWLock: shared readers, exclusive writers, writer preference, cancellation safety."""

from __future__ import annotations

import asyncio

import pytest

from services.common.rwlock import AsyncRWLock


async def _settle(rounds: int = 5) -> None:
    """Let every ready task run until it blocks."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def _hold(cm, entered: asyncio.Event, release: asyncio.Event, log: list, name: str):  # type: ignore[no-untyped-def]
    async with cm:
        log.append(f"{name}+")
        entered.set()
        await release.wait()
        log.append(f"{name}-")


async def test_readers_run_concurrently() -> None:
    lock = AsyncRWLock()
    inside = 0
    peak = 0
    gate = asyncio.Event()

    async def reader() -> None:
        nonlocal inside, peak
        async with lock.shared():
            inside += 1
            peak = max(peak, inside)
            await gate.wait()
            inside -= 1

    tasks = [asyncio.create_task(reader()) for _ in range(5)]
    await _settle()
    assert peak == 5  # all five inside at once, none waiting for another to leave
    gate.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert inside == 0


async def test_writer_waits_for_readers() -> None:
    lock = AsyncRWLock()
    log: list[str] = []
    r_in, r_out = asyncio.Event(), asyncio.Event()
    w_in, w_out = asyncio.Event(), asyncio.Event()
    reader = asyncio.create_task(_hold(lock.shared(), r_in, r_out, log, "r"))
    await asyncio.wait_for(r_in.wait(), 1)
    writer = asyncio.create_task(_hold(lock.exclusive(), w_in, w_out, log, "w"))
    await _settle()
    assert not w_in.is_set()
    r_out.set()
    await asyncio.wait_for(w_in.wait(), 1)
    w_out.set()
    await asyncio.wait_for(asyncio.gather(reader, writer), 1)
    assert log == ["r+", "r-", "w+", "w-"]


async def test_readers_wait_for_writer() -> None:
    lock = AsyncRWLock()
    log: list[str] = []
    w_in, w_out = asyncio.Event(), asyncio.Event()
    r_in, r_out = asyncio.Event(), asyncio.Event()
    writer = asyncio.create_task(_hold(lock.exclusive(), w_in, w_out, log, "w"))
    await asyncio.wait_for(w_in.wait(), 1)
    reader = asyncio.create_task(_hold(lock.shared(), r_in, r_out, log, "r"))
    await _settle()
    assert not r_in.is_set()
    w_out.set()
    r_out.set()
    await asyncio.wait_for(asyncio.gather(writer, reader), 1)
    assert log == ["w+", "w-", "r+", "r-"]


async def test_waiting_writer_blocks_new_readers() -> None:
    lock = AsyncRWLock()
    log: list[str] = []
    r1_in, r1_out = asyncio.Event(), asyncio.Event()
    w_in, w_out = asyncio.Event(), asyncio.Event()
    r2_in, r2_out = asyncio.Event(), asyncio.Event()

    r1 = asyncio.create_task(_hold(lock.shared(), r1_in, r1_out, log, "r1"))
    await asyncio.wait_for(r1_in.wait(), 1)
    w = asyncio.create_task(_hold(lock.exclusive(), w_in, w_out, log, "w"))
    await _settle()
    r2 = asyncio.create_task(_hold(lock.shared(), r2_in, r2_out, log, "r2"))
    await _settle()
    # r1 still reads, yet r2 may not join it while the writer waits.
    assert not r2_in.is_set() and not w_in.is_set()

    r1_out.set()
    await asyncio.wait_for(w_in.wait(), 1)
    await _settle()
    assert not r2_in.is_set()  # still excluded while the writer holds
    w_out.set()
    await asyncio.wait_for(r2_in.wait(), 1)
    r2_out.set()
    await asyncio.wait_for(asyncio.gather(r1, w, r2), 1)
    assert log == ["r1+", "r1-", "w+", "w-", "r2+", "r2-"]


async def test_writers_are_mutually_exclusive() -> None:
    lock = AsyncRWLock()
    inside = 0
    peak = 0
    order: list[int] = []

    async def writer(i: int) -> None:
        nonlocal inside, peak
        async with lock.exclusive():
            inside += 1
            peak = max(peak, inside)
            order.append(i)
            await asyncio.sleep(0.005)
            inside -= 1

    await asyncio.wait_for(asyncio.gather(*(writer(i) for i in range(6))), 5)
    assert peak == 1
    assert sorted(order) == list(range(6))


async def test_mixed_load_invariant() -> None:
    """Never a writer together with anyone else, across a random-ish interleaving."""
    lock = AsyncRWLock()
    readers = 0
    writers = 0
    violations: list[str] = []

    async def reader(i: int) -> None:
        nonlocal readers
        await asyncio.sleep((i % 3) * 0.001)
        async with lock.shared():
            readers += 1
            if writers:
                violations.append(f"reader {i} with writer")
            await asyncio.sleep(0.001 * (i % 2))
            readers -= 1

    async def writer(i: int) -> None:
        nonlocal writers
        await asyncio.sleep((i % 4) * 0.001)
        async with lock.exclusive():
            writers += 1
            if writers > 1 or readers:
                violations.append(f"writer {i} not alone")
            await asyncio.sleep(0.001)
            writers -= 1

    jobs = [reader(i) for i in range(20)] + [writer(i) for i in range(6)]
    await asyncio.wait_for(asyncio.gather(*jobs), 5)
    assert violations == []
    assert readers == writers == 0


async def test_cancelled_waiting_writer_does_not_wedge_the_lock() -> None:
    lock = AsyncRWLock()
    r_in, r_out = asyncio.Event(), asyncio.Event()
    log: list[str] = []
    reader = asyncio.create_task(_hold(lock.shared(), r_in, r_out, log, "r"))
    await asyncio.wait_for(r_in.wait(), 1)

    w_in = asyncio.Event()
    writer = asyncio.create_task(_hold(lock.exclusive(), w_in, asyncio.Event(), log, "w"))
    await _settle()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert not w_in.is_set()

    # New readers are admitted again next to the one still reading.
    async with asyncio.timeout(1), lock.shared():
        pass
    r_out.set()
    await asyncio.wait_for(reader, 1)
    # And a writer can take it once everyone has left.
    async with asyncio.timeout(1), lock.exclusive():
        pass


async def test_cancelled_writer_releases_readers_queued_behind_it() -> None:
    lock = AsyncRWLock()
    log: list[str] = []
    r1_in, r1_out = asyncio.Event(), asyncio.Event()
    r1 = asyncio.create_task(_hold(lock.shared(), r1_in, r1_out, log, "r1"))
    await asyncio.wait_for(r1_in.wait(), 1)

    writer = asyncio.create_task(
        _hold(lock.exclusive(), asyncio.Event(), asyncio.Event(), log, "w")
    )
    await _settle()
    r2_in, r2_out = asyncio.Event(), asyncio.Event()
    r2 = asyncio.create_task(_hold(lock.shared(), r2_in, r2_out, log, "r2"))
    await _settle()
    assert not r2_in.is_set()  # held back by the waiting writer (writer preference)

    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    try:
        # No writer waits any more: r2 should join r1, which is still reading.
        await asyncio.wait_for(r2_in.wait(), 0.5)
    finally:
        r1_out.set()
        r2_out.set()
        await asyncio.wait_for(asyncio.gather(r1, r2), 1)


async def test_cancelled_waiting_reader_does_not_wedge_the_lock() -> None:
    lock = AsyncRWLock()
    w_in, w_out = asyncio.Event(), asyncio.Event()
    log: list[str] = []
    writer = asyncio.create_task(_hold(lock.exclusive(), w_in, w_out, log, "w"))
    await asyncio.wait_for(w_in.wait(), 1)

    reader = asyncio.create_task(_hold(lock.shared(), asyncio.Event(), asyncio.Event(), log, "r"))
    await _settle()
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    w_out.set()
    await asyncio.wait_for(writer, 1)

    async with asyncio.timeout(1), lock.exclusive():
        pass
    async with asyncio.timeout(1), lock.shared():
        pass
    assert log == ["w+", "w-"]


async def test_exception_inside_releases() -> None:
    lock = AsyncRWLock()
    with pytest.raises(RuntimeError):
        async with lock.exclusive():
            raise RuntimeError("boom")
    with pytest.raises(ValueError):
        async with lock.shared():
            raise ValueError("boom")
    async with asyncio.timeout(1), lock.exclusive():
        pass


async def test_cancelled_holder_releases() -> None:
    lock = AsyncRWLock()
    entered = asyncio.Event()

    async def hold_forever() -> None:
        async with lock.exclusive():
            entered.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(hold_forever())
    await asyncio.wait_for(entered.wait(), 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with asyncio.timeout(1), lock.shared():
        pass
