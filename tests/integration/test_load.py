"""Load through the real stack (issue 16): many sessions chatting at once lose and duplicate
nothing, on SQLite and on PostgreSQL, and concurrent chats on one session are one at a time.
The figures at scale (50 sessions x 10 turns, p50/p99 per route) come from
``bench/bench_load.py``; this test runs a smaller load and asserts only correctness."""

from __future__ import annotations

import pathlib
import uuid

import pytest

from tests.conftest import fresh_postgres_database
from tests.support.load import (
    count_events,
    load_stack,
    lost_or_duplicated,
    one_session_at_once,
    run_load,
)

pytestmark = [pytest.mark.timeout(600)]

SESSIONS, TURNS = 20, 5


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_many_sessions_at_once_lose_and_duplicate_nothing(
    backend: str, tmp_path: pathlib.Path, redis_url: str, request: pytest.FixtureRequest
) -> None:
    async def check(database_url: str | None) -> None:
        async with load_stack(
            tmp_path,
            database_url=database_url,
            redis_url=redis_url,
            key_prefix=f"load-{uuid.uuid4().hex[:8]}",
        ) as stack:
            result = await run_load(stack.http, sessions=SESSIONS, turns=TURNS)
            assert result.failures == []
            assert len(result.sessions) == SESSIONS
            counted = await count_events(stack.database_url, list(result.sessions))
            assert lost_or_duplicated(result, counted) == []
            assert sum(c.events for c in counted.values()) >= SESSIONS * TURNS * 2
            # One model call per turn: no turn was retried or run twice.
            assert len(stack.model.exchanges) == SESSIONS * TURNS
            assert stack.model.errors == []
            # Nothing is left locked once the load is over.
            lock = stack.gateway.app.state.gateway.chat_lock
            assert await lock.locked_session_ids() == set()

            statuses = await one_session_at_once(stack.http, requests=4)
            assert statuses[0] == 200 and sorted(statuses[1:]) == [409, 409, 409], statuses

    if backend == "sqlite":
        await check(None)
        return
    async with fresh_postgres_database(request.getfixturevalue("postgres_url")) as url:
        await check(url)
