"""RedisChatLock against a real Redis: exclusivity across replicas, TTL, renewal, ownership.

Redis comes from the shared ``redis_url`` fixture (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

from services.common.errors import Unavailable
from services.gateway.locks.base_chat_lock import HeldLock, MaintenanceRunning, SessionBusy
from services.gateway.locks.redis_chat_lock import RedisChatLock, redact_redis_url
from tests.support.processes import maintenance_mark_holder

SHORT_TTL = 0.3

MakeLock = Callable[..., RedisChatLock]


@pytest.fixture
def prefix() -> str:
    return f"zocrates-test-{uuid.uuid4().hex}"


@pytest.fixture
async def raw(redis_url: str, prefix: str) -> AsyncIterator[aioredis.Redis]:
    """A plain client for reaching behind the lock's back; deletes this test's keys after."""
    # Socket timeouts, so that a reply that never comes fails the test instead of hanging it.
    client = aioredis.Redis.from_url(
        redis_url, decode_responses=True, socket_timeout=5.0, socket_connect_timeout=5.0
    )
    yield client
    keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=500)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
async def make_lock(redis_url: str, prefix: str, raw: aioredis.Redis) -> AsyncIterator[MakeLock]:
    """Build locks (one per simulated gateway replica) under this test's prefix."""
    made: list[RedisChatLock] = []

    def make(*, ttl_seconds: float = 10.0, key_prefix: str | None = None) -> RedisChatLock:
        lock = RedisChatLock(redis_url, key_prefix=key_prefix or prefix, ttl_seconds=ttl_seconds)
        made.append(lock)
        return lock

    yield make
    for lock in made:
        await lock.close()


def key_of(prefix: str, session_id: str) -> str:
    return f"{prefix}:chat-lock:{session_id}"


async def test_lock_is_a_token_keyed_by_session_with_the_ttl(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str
) -> None:
    lock = make_lock(ttl_seconds=10.0)
    held = await lock.try_acquire("s1")
    assert held is not None
    assert await raw.get(key_of(prefix, "s1")) == held.token
    assert 9_000 < await raw.pttl(key_of(prefix, "s1")) <= 10_000


async def test_second_acquire_is_refused(make_lock: MakeLock) -> None:
    lock = make_lock()
    assert await lock.try_acquire("s1") is not None
    assert await lock.try_acquire("s1") is None
    with pytest.raises(SessionBusy) as busy:
        await lock.acquire("s1")
    assert busy.value.code == "session_busy"
    started = time.monotonic()
    with pytest.raises(SessionBusy):
        await lock.acquire("s1", wait_seconds=0.3)
    assert time.monotonic() - started >= 0.25
    assert await lock.try_acquire("s2") is not None  # other sessions are unaffected


async def test_two_replicas_exclude_each_other(make_lock: MakeLock) -> None:
    replica_a, replica_b = make_lock(), make_lock()
    held = await replica_a.try_acquire("s1")
    assert held is not None
    assert await replica_b.try_acquire("s1") is None
    with pytest.raises(SessionBusy):
        await replica_b.acquire("s1", wait_seconds=0.1)
    assert await replica_b.is_locked("s1")

    await replica_a.release(held)
    held_b = await replica_b.try_acquire("s1")
    assert held_b is not None
    assert await replica_a.try_acquire("s1") is None


async def test_stale_holder_cannot_release_or_renew_the_new_owners_lock(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str
) -> None:
    replica_a, replica_b = make_lock(ttl_seconds=SHORT_TTL), make_lock(ttl_seconds=10.0)
    stale = await replica_a.try_acquire("s1")
    assert stale is not None
    await asyncio.sleep(SHORT_TTL + 0.15)
    fresh = await replica_b.try_acquire("s1")
    assert fresh is not None

    assert await replica_a.renew(stale) is False
    await replica_a.release(stale)
    assert await raw.get(key_of(prefix, "s1")) == fresh.token
    assert await raw.pttl(key_of(prefix, "s1")) > 9_000  # the stale renew did not shorten it
    assert await replica_a.try_acquire("s1") is None


async def test_ttl_frees_the_lock_of_a_dead_holder(make_lock: MakeLock) -> None:
    dead, survivor = make_lock(ttl_seconds=SHORT_TTL), make_lock()
    assert await dead.try_acquire("s1") is not None
    await dead.close()  # the replica died without releasing
    assert await survivor.try_acquire("s1") is None
    assert await survivor.locked_session_ids() == {"s1"}
    await asyncio.sleep(SHORT_TTL + 0.15)
    assert await survivor.locked_session_ids() == set()
    assert await survivor.try_acquire("s1") is not None


async def test_hold_renews_past_the_ttl_then_releases(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str
) -> None:
    holder, other = make_lock(ttl_seconds=SHORT_TTL), make_lock(ttl_seconds=SHORT_TTL)
    async with holder.hold("s1") as held:
        await asyncio.sleep(3 * SHORT_TTL)
        assert await other.try_acquire("s1") is None
        assert not held.lost.is_set()
        assert await raw.get(key_of(prefix, "s1")) == held.token
    assert await raw.exists(key_of(prefix, "s1")) == 0
    assert await other.try_acquire("s1") is not None


async def test_hold_releases_when_the_block_raises(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str
) -> None:
    lock = make_lock(ttl_seconds=30.0)  # long TTL: only an explicit release frees it
    with pytest.raises(RuntimeError, match="boom"):
        async with lock.hold("s1"):
            raise RuntimeError("boom")
    assert await raw.exists(key_of(prefix, "s1")) == 0
    assert await lock.try_acquire("s1") is not None


@pytest.mark.parametrize("tamper", ["delete", "overwrite"])
async def test_hold_sets_lost_when_the_key_changes_behind_its_back(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str, tamper: str
) -> None:
    lock = make_lock(ttl_seconds=SHORT_TTL)
    key = key_of(prefix, "s1")
    async with lock.hold("s1") as held:
        if tamper == "delete":
            await raw.delete(key)
        else:
            await raw.set(key, "intruder", px=10_000)
        await asyncio.wait_for(held.lost.wait(), timeout=SHORT_TTL * 3)
    if tamper == "overwrite":  # releasing on exit must leave the intruder's lock alone
        assert await raw.get(key) == "intruder"


async def test_acquire_with_wait_succeeds_when_the_holder_releases(make_lock: MakeLock) -> None:
    replica_a, replica_b = make_lock(), make_lock()
    held = await replica_a.try_acquire("s1")
    assert held is not None

    async def release_later(lock: RedisChatLock, held: HeldLock) -> None:
        await asyncio.sleep(0.3)
        await lock.release(held)

    releaser = asyncio.create_task(release_later(replica_a, held))
    started = time.monotonic()
    got = await replica_b.acquire("s1", wait_seconds=3.0)
    await releaser
    assert got.session_id == "s1"
    assert 0.25 <= time.monotonic() - started < 3.0
    assert await replica_a.try_acquire("s1") is None


async def test_locked_session_ids_lists_exactly_the_held_ones_under_its_prefix(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str
) -> None:
    lock = make_lock()
    neighbour = make_lock(key_prefix=f"{prefix}-other")
    globby = make_lock(key_prefix=f"{prefix}*")  # glob characters in a prefix are literal
    assert await lock.locked_session_ids() == set()

    assert await lock.try_acquire("s1") is not None
    released = await lock.try_acquire("s2")
    assert released is not None
    assert await lock.try_acquire("user:42:abc") is not None
    await lock.release(released)
    assert await neighbour.try_acquire("n1") is not None
    await raw.set(f"{prefix}:unrelated", "x")

    assert await lock.locked_session_ids() == {"s1", "user:42:abc"}
    assert await neighbour.locked_session_ids() == {"n1"}
    assert await globby.locked_session_ids() == set()
    assert await lock.is_locked("s1")
    assert not await lock.is_locked("s2")


async def test_the_maintenance_mark_refuses_locks_on_every_replica(
    make_lock: MakeLock, raw: aioredis.Redis, prefix: str
) -> None:
    maintainer, replica = make_lock(ttl_seconds=10.0), make_lock()
    running = await replica.try_acquire("s1")  # a chat that started before maintenance
    assert running is not None
    async with maintainer.hold_maintenance() as mark:
        assert mark is not None
        assert await raw.get(f"{prefix}:maintenance") == mark.token
        assert 9_000 < await raw.pttl(f"{prefix}:maintenance") <= 10_000
        assert await replica.maintenance_running()
        with pytest.raises(MaintenanceRunning):
            await replica.try_acquire("s2")
        assert await raw.exists(key_of(prefix, "s2")) == 0  # refused: nothing was taken
        assert await maintainer.locked_session_ids() == {"s1"}  # the mark is not a session
        assert await replica.renew(running) is True
        async with replica.hold_maintenance(wait_seconds=0.1) as second:
            assert second is None  # one maintenance at a time, across replicas
    assert await raw.exists(f"{prefix}:maintenance") == 0
    assert await replica.try_acquire("s2") is not None


async def test_a_killed_holders_mark_expires_after_one_ttl(
    make_lock: MakeLock, raw: aioredis.Redis, redis_url: str, prefix: str
) -> None:
    ttl = 1.0
    survivor = make_lock()
    with maintenance_mark_holder(redis_url, key_prefix=prefix, ttl_seconds=ttl) as holder:
        await asyncio.sleep(2 * ttl)  # alive: renewed past its TTL
        assert await survivor.maintenance_running()
        holder.kill()  # SIGKILL: no clean-up, no release
        holder.wait()
        killed_at = time.monotonic()
        assert await survivor.maintenance_running()
        assert await survivor.wait_while_maintenance(wait_seconds=5.0)
        assert time.monotonic() - killed_at <= ttl + 0.3
    assert await raw.exists(f"{prefix}:maintenance") == 0
    assert await survivor.try_acquire("s1") is not None


async def test_ping_answers_true_when_redis_is_up(make_lock: MakeLock) -> None:
    assert await make_lock().ping() is True


async def test_unreachable_redis_is_unavailable_and_never_leaks_the_password() -> None:
    url = "redis://:s3cret@127.0.0.1:1/0?socket_connect_timeout=0.5&socket_timeout=0.5"
    lock = RedisChatLock(url, ttl_seconds=1.0)
    try:
        assert await lock.ping() is False
        held = HeldLock(session_id="s1", token="t")
        for call in (
            lambda: lock.try_acquire("s1"),
            lambda: lock.acquire("s1", wait_seconds=0.1),
            lambda: lock.renew(held),
            lambda: lock.locked_session_ids(),
            lambda: lock.try_mark_maintenance("t"),
            lambda: lock.renew_maintenance("t"),
            lambda: lock.maintenance_running(),
        ):
            with pytest.raises(Unavailable) as err:
                await call()
            assert err.value.code == "redis_unavailable"
            assert "127.0.0.1:1" in err.value.message
            assert "Is Redis running" in err.value.message
            assert "s3cret" not in err.value.message
        await lock.release(held)  # must not raise
        await lock.clear_maintenance("t")  # nor this
    finally:
        await lock.close()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:pw@host:6379/1", "redis://:***@host:6379/1"),
        ("rediss://user:p%40ss@host/0", "rediss://user:***@host/0"),
        ("unix:///tmp/r.sock?db=0&password=pw", "unix:///tmp/r.sock?db=0&password=***"),
        ("redis://user@host:6379/0", "redis://user@host:6379/0"),
    ],
)
def test_redact_redis_url(url: str, expected: str) -> None:
    assert redact_redis_url(url) == expected
