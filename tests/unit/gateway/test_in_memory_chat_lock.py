"""InMemoryChatLock, the base class's acquire/hold logic, and the lock factory."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.common.errors import Unavailable
from services.gateway.locks.base_chat_lock import HeldLock, MaintenanceRunning, SessionBusy
from services.gateway.locks.factory import make_chat_lock
from services.gateway.locks.in_memory_chat_lock import InMemoryChatLock
from services.gateway.locks.redis_chat_lock import RedisChatLock

SHORT_TTL = 0.3


async def test_second_acquire_is_refused() -> None:
    lock = InMemoryChatLock()
    held = await lock.try_acquire("s1")
    assert held is not None and held.session_id == "s1"
    assert await lock.try_acquire("s1") is None
    with pytest.raises(SessionBusy) as busy:
        await lock.acquire("s1")
    assert busy.value.code == "session_busy"
    started = time.monotonic()
    with pytest.raises(SessionBusy):
        await lock.acquire("s1", wait_seconds=0.2)
    assert time.monotonic() - started >= 0.15
    assert await lock.try_acquire("s2") is not None


async def test_release_frees_and_tokens_differ() -> None:
    lock = InMemoryChatLock()
    first = await lock.try_acquire("s1")
    assert first is not None
    await lock.release(first)
    second = await lock.try_acquire("s1")
    assert second is not None and second.token != first.token


async def test_stale_holder_cannot_release_or_renew_the_new_owners_lock() -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    stale = await lock.try_acquire("s1")
    assert stale is not None
    await asyncio.sleep(SHORT_TTL + 0.1)
    fresh = await lock.try_acquire("s1")
    assert fresh is not None
    assert await lock.renew(stale) is False
    await lock.release(stale)
    assert await lock.try_acquire("s1") is None
    assert await lock.locked_session_ids() == {"s1"}


async def test_ttl_frees_an_unrenewed_lock_and_it_is_not_listed() -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    assert await lock.try_acquire("s1") is not None
    assert await lock.locked_session_ids() == {"s1"}
    await asyncio.sleep(SHORT_TTL + 0.1)
    assert await lock.locked_session_ids() == set()
    assert not await lock.is_locked("s1")
    assert await lock.try_acquire("s1") is not None


async def test_renew_extends_the_ttl() -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    held = await lock.try_acquire("s1")
    assert held is not None
    for _ in range(4):
        await asyncio.sleep(SHORT_TTL / 2)
        assert await lock.renew(held) is True
    assert await lock.try_acquire("s1") is None


async def test_hold_renews_past_the_ttl_then_releases() -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    async with lock.hold("s1") as held:
        await asyncio.sleep(3 * SHORT_TTL)
        assert await lock.try_acquire("s1") is None
        assert not held.lost.is_set()
    assert await lock.locked_session_ids() == set()


async def test_hold_releases_when_the_block_raises() -> None:
    lock = InMemoryChatLock(ttl_seconds=30.0)
    with pytest.raises(RuntimeError, match="boom"):
        async with lock.hold("s1"):
            raise RuntimeError("boom")
    assert await lock.try_acquire("s1") is not None


async def test_hold_releases_and_propagates_when_the_task_is_cancelled() -> None:
    lock = InMemoryChatLock(ttl_seconds=30.0)
    entered = asyncio.Event()

    async def chat() -> None:
        async with lock.hold("s1"):
            entered.set()
            await asyncio.sleep(10)

    task = asyncio.create_task(chat())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await lock.try_acquire("s1") is not None


@pytest.mark.parametrize("tamper", ["delete", "overwrite"])
async def test_hold_sets_lost_when_the_entry_changes_behind_its_back(tamper: str) -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    async with lock.hold("s1") as held:
        if tamper == "delete":
            del lock._locks["s1"]
        else:
            lock._locks["s1"] = ("intruder", time.monotonic() + 30.0)
        await asyncio.wait_for(held.lost.wait(), timeout=SHORT_TTL * 3)
    if tamper == "overwrite":  # releasing on exit must leave the intruder's lock alone
        assert lock._locks["s1"][0] == "intruder"


class FlakyLock(InMemoryChatLock):
    """An in-memory lock whose renew raises like an unreachable store while ``down``."""

    down = False

    async def renew(self, held: HeldLock) -> bool:
        if self.down:
            raise Unavailable("store down", code="redis_unavailable")
        return await super().renew(held)


async def test_hold_survives_a_store_outage_shorter_than_the_ttl() -> None:
    lock = FlakyLock(ttl_seconds=SHORT_TTL)
    async with lock.hold("s1") as held:
        lock.down = True
        await asyncio.sleep(SHORT_TTL / 2)
        lock.down = False
        await asyncio.sleep(2 * SHORT_TTL)
        assert not held.lost.is_set()
        assert await lock.try_acquire("s1") is None


async def test_hold_sets_lost_when_renewal_fails_for_a_whole_ttl() -> None:
    lock = FlakyLock(ttl_seconds=SHORT_TTL)
    async with lock.hold("s1") as held:
        lock.down = True
        await asyncio.wait_for(held.lost.wait(), timeout=SHORT_TTL * 3)


async def test_acquire_with_wait_succeeds_when_the_holder_releases() -> None:
    lock = InMemoryChatLock()
    held = await lock.try_acquire("s1")
    assert held is not None

    async def release_later() -> None:
        await asyncio.sleep(0.2)
        await lock.release(held)

    releaser = asyncio.create_task(release_later())
    started = time.monotonic()
    got = await lock.acquire("s1", wait_seconds=2.0)
    await releaser
    assert got.token != held.token
    assert 0.15 <= time.monotonic() - started < 2.0


async def test_locked_session_ids_lists_exactly_the_held_ones() -> None:
    lock = InMemoryChatLock()
    assert await lock.locked_session_ids() == set()
    assert await lock.try_acquire("s1") is not None
    released = await lock.try_acquire("s2")
    assert released is not None
    await lock.release(released)
    assert await lock.locked_session_ids() == {"s1"}
    assert await InMemoryChatLock().locked_session_ids() == set()  # instances are independent


async def test_maintenance_mark_refuses_new_locks_and_spares_held_ones() -> None:
    lock = InMemoryChatLock(ttl_seconds=30.0)
    running = await lock.try_acquire("s1")  # a chat that started before maintenance
    assert running is not None
    async with lock.hold_maintenance() as mark:
        assert mark is not None
        assert await lock.maintenance_running()
        with pytest.raises(MaintenanceRunning) as refused:
            await lock.try_acquire("s2")
        assert refused.value.code == "maintenance_running" and refused.value.http_status == 503
        with pytest.raises(MaintenanceRunning):  # raised at once, not after the wait
            await lock.acquire("s2", wait_seconds=5.0)
        assert await lock.locked_session_ids() == {"s1"}  # what maintenance spares
        assert await lock.renew(running) is True  # the running chat goes on
        async with lock.hold_maintenance() as second:  # one maintenance at a time
            assert second is None
    assert not await lock.maintenance_running()
    assert await lock.try_acquire("s2") is not None


async def test_hold_maintenance_renews_past_the_ttl_and_clears_when_the_block_raises() -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    with pytest.raises(RuntimeError, match="boom"):
        async with lock.hold_maintenance() as mark:
            await asyncio.sleep(3 * SHORT_TTL)
            assert mark is not None and not mark.lost.is_set()
            assert await lock.maintenance_running()
            raise RuntimeError("boom")
    assert not await lock.maintenance_running()


async def test_an_unrenewed_mark_expires() -> None:
    lock = InMemoryChatLock(ttl_seconds=SHORT_TTL)
    assert await lock.try_mark_maintenance("crashed")
    assert not await lock.try_mark_maintenance("other")
    assert await lock.try_mark_maintenance("crashed")  # idempotent for its holder
    await asyncio.sleep(SHORT_TTL + 0.1)
    assert not await lock.maintenance_running()
    assert await lock.renew_maintenance("crashed") is False
    assert await lock.try_acquire("s1") is not None


async def test_waits_for_the_mark_bounded() -> None:
    lock = InMemoryChatLock(ttl_seconds=30.0)
    assert await lock.try_mark_maintenance("m")
    started = time.monotonic()
    assert await lock.wait_while_maintenance(wait_seconds=0.2) is False
    assert time.monotonic() - started >= 0.15

    async def clear_later() -> None:
        await asyncio.sleep(0.2)
        await lock.clear_maintenance("m")

    clearer = asyncio.create_task(clear_later())
    async with lock.hold_maintenance(wait_seconds=2.0) as mark:  # queued behind it
        assert mark is not None
    await clearer
    assert await lock.wait_while_maintenance(wait_seconds=0.0) is True


async def test_factory_picks_in_memory_without_a_url() -> None:
    lock = make_chat_lock(None, key_prefix="zocrates", ttl_seconds=12.0)
    assert isinstance(lock, InMemoryChatLock)
    assert lock.ttl_seconds == 12.0


async def test_factory_picks_redis_with_a_url() -> None:
    lock = make_chat_lock("redis://:pw@127.0.0.1:1/0", key_prefix="zocrates", ttl_seconds=12.0)
    try:
        assert isinstance(lock, RedisChatLock)
        assert lock.ttl_seconds == 12.0
        assert "pw" not in lock.url
    finally:
        await lock.close()
