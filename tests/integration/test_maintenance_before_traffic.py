"""Maintenance before traffic, through the real services: chats wait for session maintenance
that is running, whichever route and whichever gateway replica started it, and a VACUUM that
maintenance deferred because chats were in flight runs when the last of them ends.

The stack runs in-process: sessions (a real SQLite file), reranker, agent, and three gateways
sharing one real Redis (the lock store of a deployment with replicas); the third answers 503
after half a second of waiting. The coordinator is an ``openai/...`` model on a local server
speaking OpenAI's wire format (the permitted stand-in for a hosted model) that answers with a
short text, and holds its answer while the test keeps ``gate`` closed: that is how a chat is
kept in flight for as long as a test needs.

Maintenance is made slow by a real write lock on sessions.db, held by another connection (as
another process would): maintenance's first delete waits for it, with the mark set.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before anything imports litellm

import httpx
import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from services.agent.research.runtime import API_KEY_ENV
from services.gateway.locks.redis_chat_lock import RedisChatLock
from services.gateway.server import GatewayServer
from services.gateway.state import GatewayState
from services.reranker.models import CrossEncoder, Embedder
from services.sessions.client import SessionsClient
from services.sessions.remote_session_service import RemoteSessionService
from services.sessions.store import SessionStore, sqlite_url_for
from tests.support import adk_events as ev
from tests.support import zotero_fixture as zf
from tests.support.openai_server import CAPABLE_MODEL, serve_openai
from tests.support.processes import maintenance_mark_holder
from tests.support.sse import post_stream
from tests.support.stack import (
    running_agent,
    running_gateway,
    running_library,
    running_reranker,
    running_sessions,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

APP, USER = "zocrates", "local"
ANSWER = "Maintenance came first; this answer after it."
IMPATIENT = 2  # the gateway that waits only SHORT_WAIT for maintenance
SHORT_WAIT = 0.5
DAY = 86400.0

Events = list[tuple[str, dict[str, Any]]]


@dataclass
class Stack:
    zotero: pathlib.Path
    gateways: list[GatewayServer]
    http: list[httpx.AsyncClient]
    remote: RemoteSessionService
    sessions: SessionsClient
    gate: threading.Event
    redis_url: str
    prefix: str

    @property
    def db(self) -> pathlib.Path:
        return self.zotero / "zocrates-data" / "sessions.db"

    def state(self, i: int = 0) -> GatewayState:
        state: GatewayState = self.gateways[i].app.state.gateway
        return state

    async def new_session(self) -> str:
        response = await self.http[0].post("/sessions", json={"title": "maintenance"})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["id"])

    async def chat(self, session_id: str, *, via: int = 0) -> tuple[int, Events, Any]:
        return await post_stream(
            self.http[via], "/chat", {"session_id": session_id, "prompt": "What came first?"}
        )

    @contextlib.asynccontextmanager
    async def store(self) -> AsyncIterator[SessionStore]:
        """The test's own connection to sessions.db, as another writer; closed after each use
        (a VACUUM swaps the file, and pooled connections would keep the old one)."""
        store = SessionStore(sqlite_url_for(self.db.parent))
        await store.open()
        try:
            yield store
        finally:
            await store.close()

    async def aged_session(self, *, events: int, age_days: float, text_size: int = 20) -> str:
        async with self.store() as store:
            session = await store.create_session(app_name=APP, user_id=USER)
            for i in range(events):
                text = f"{i} " + "x" * text_size
                await store.append_event(session, ev.user_text(text, invocation_id=f"i{i}"))
            await ev.set_update_time(store, session.id, time.time() - age_days * DAY)
            return session.id

    async def settled(self, i: int, *session_ids: str) -> None:
        """Wait until these sessions' locks are let go and gateway ``i``'s deferred VACUUM
        (started right after a release) has finished."""
        await _until(lambda: _none_locked(self.state(i), session_ids))
        await asyncio.sleep(0.2)
        task = self.state(i).deferred_vacuum
        if task is not None:
            await asyncio.wait_for(asyncio.shield(task), timeout=60)


async def _none_locked(state: GatewayState, session_ids: tuple[str, ...]) -> bool:
    locked = await state.chat_lock.locked_session_ids()
    return not locked.intersection(session_ids)


async def _until(check: Callable[[], Awaitable[bool]], *, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def _pages(db: pathlib.Path) -> tuple[int, int]:
    """(page_count, freelist_count) of the file as it is on disk."""
    conn = sqlite3.connect(db)
    try:
        return (
            conn.execute("PRAGMA page_count").fetchone()[0],
            conn.execute("PRAGMA freelist_count").fetchone()[0],
        )
    finally:
        conn.close()


def _completed(result: tuple[int, Events, Any]) -> None:
    status, evs, error = result
    assert status == 200, error
    assert evs and evs[-1][0] == "done" and evs[-1][1]["status"] == "completed", evs[-1:]
    assert evs[-1][1]["answer"].strip() == ANSWER


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(
    tmp_path_factory: pytest.TempPathFactory,
    redis_url: str,
    cross_encoder: CrossEncoder,
    embedder: Embedder,
) -> AsyncIterator[Stack]:
    zotero = zf.build_zotero_library(
        tmp_path_factory.mktemp("maintenance") / "zotero", files=("lme4__lmer.pdf",)
    )
    gate = threading.Event()
    gate.set()

    def coordinator(body: dict[str, Any]) -> str:
        assert gate.wait(timeout=120), "the test never opened the gate"
        return ANSWER

    prefix = f"zocrates-test-{uuid.uuid4().hex}"
    async with contextlib.AsyncExitStack() as exit_stack:
        monkeypatch = exit_stack.enter_context(pytest.MonkeyPatch.context())
        monkeypatch.setenv(API_KEY_ENV, "sk-zocrates-test")
        exit_stack.callback(gate.set)  # never leave the model server stuck at teardown
        server = exit_stack.enter_context(serve_openai(coordinator))
        reranker = await exit_stack.enter_async_context(
            running_reranker(load_reranker=lambda: cross_encoder, load_embedder=lambda: embedder)
        )
        sessions = await exit_stack.enter_async_context(running_sessions(zotero))
        library = await exit_stack.enter_async_context(
            running_library(zotero, reranker_addr=reranker.runtime.address)
        )
        agent = await exit_stack.enter_async_context(
            running_agent(
                zotero,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
                library_addr=library.runtime.address,
            )
        )
        gateways = [
            await exit_stack.enter_async_context(
                running_gateway(
                    zotero,
                    sessions.runtime.address,
                    agent_addr=agent.runtime.address,
                    library_addr=library.runtime.address,
                    redis_url=redis_url,
                    redis_key_prefix=prefix,
                    **({"maintenance_wait_seconds": SHORT_WAIT} if i == IMPATIENT else {}),
                )
            )
            for i in range(3)
        ]
        for gateway in gateways:
            await gateway.app.state.gateway.startup_done.wait()
        token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
        http = [
            await exit_stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=g.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
                )
            )
            for g in gateways
        ]
        response = await http[0].put(
            "/config",
            json={
                "coordinator_model": "openai/held-model",
                "model_api_base": server.api_base,
                **CAPABLE_MODEL,
            },
        )
        assert response.status_code == 200, response.text
        remote = RemoteSessionService(sessions.runtime.address)
        exit_stack.push_async_callback(remote.close)
        client = SessionsClient(sessions.runtime.address, app_name=APP, user_id=USER)
        exit_stack.push_async_callback(client.close)
        exit_stack.push_async_callback(_delete_keys, redis_url, prefix)
        yield Stack(zotero, gateways, http, remote, client, gate, redis_url, prefix)


async def _delete_keys(redis_url: str, prefix: str) -> None:
    raw = aioredis.Redis.from_url(redis_url, decode_responses=True)
    keys = [key async for key in raw.scan_iter(match=f"{prefix}*", count=500)]
    if keys:
        await raw.delete(*keys)
    await raw.aclose()


@pytest.mark.parametrize(
    ("route", "via"),
    [("/register", 0), ("/sessions/maintenance", 1)],
    ids=["register-same-gateway", "on-demand-other-gateway"],
)
async def test_a_chat_sent_during_maintenance_waits_for_it_then_succeeds(
    stack: Stack, route: str, via: int
) -> None:
    old = await stack.aged_session(events=0, age_days=2)  # empty and old: maintenance deletes it
    session_id = await stack.new_session()
    body = {"zotero_data_dir": str(stack.zotero)} if route == "/register" else None
    blocker = sqlite3.connect(stack.db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # a writer elsewhere: maintenance's delete waits for it
    try:
        maintenance = asyncio.create_task(stack.http[0].post(route, json=body))
        await _until(stack.state(via).chat_lock.maintenance_running)
        chat = asyncio.create_task(stack.chat(session_id, via=via))
        await asyncio.sleep(1.0)
        assert not maintenance.done() and not chat.done()
        # The chat waits without its lock: maintenance does not see it as in flight, and
        # nothing waits in a circle.
        assert not await stack.state(via).chat_lock.is_locked(session_id)
        released_at = time.time()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    response = await maintenance
    assert response.status_code == 200, response.text
    report = response.json()["maintenance"] if route == "/register" else response.json()
    assert old in report["deleted_ids"]
    assert report["vacuum_skipped_reason"] != "chat_in_progress"  # no chat ran meanwhile
    _completed(await chat)
    session = await stack.remote.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None and session.events[0].author == "user"
    # The turn's first event was written after the write lock was let go, so after every
    # delete of that maintenance run: the chat ran after it, not alongside.
    assert session.events[0].timestamp > released_at
    await stack.settled(via, session_id)


async def test_past_the_bound_chats_rewinds_and_deletes_get_503(stack: Stack) -> None:
    session_id = await stack.new_session()
    other_replica = RedisChatLock(stack.redis_url, key_prefix=stack.prefix)
    http = stack.http[IMPATIENT]
    requests = {
        "chat": lambda: post_stream(http, "/chat", {"session_id": session_id, "prompt": "Hi?"}),
        "resume": lambda: post_stream(
            http,
            "/chat/resume",
            {
                "session_id": session_id,
                "invocation_id": "e-1",
                "interrupt_id": "i-1",
                "response": {"action": "synthesize"},
            },
        ),
        "rewind": lambda: _as_stream(
            http.post(f"/sessions/{session_id}/rewind", json={"invocation_id": "e-1"})
        ),
        "delete": lambda: _as_stream(http.delete(f"/sessions/{session_id}")),
    }
    try:
        async with other_replica.hold_maintenance() as mark:
            assert mark is not None
            for name, request in requests.items():
                started = time.monotonic()
                status, _, error = await request()
                waited = time.monotonic() - started
                assert status == 503, (name, error)
                assert error["code"] == "maintenance_running", (name, error)
                assert "maintenance" in error["message"] and "Try again" in error["message"]
                assert SHORT_WAIT - 0.05 <= waited < SHORT_WAIT + 2.0, (name, waited)
                assert not await other_replica.is_locked(session_id)  # nothing left behind
        status, _, error = await requests["delete"]()
        assert status == 200, error  # the mark is gone: the same request goes through
    finally:
        await other_replica.close()


async def _as_stream(request: Awaitable[httpx.Response]) -> tuple[int, Events, Any]:
    response = await request
    return response.status_code, [], response.json() if response.status_code != 200 else None


async def test_a_crashed_holders_mark_expires_and_the_waiting_chat_runs(stack: Stack) -> None:
    session_id = await stack.new_session()
    ttl = 1.0
    with maintenance_mark_holder(stack.redis_url, key_prefix=stack.prefix, ttl_seconds=ttl) as p:
        chat = asyncio.create_task(stack.chat(session_id, via=1))
        await asyncio.sleep(2 * ttl)  # the holder renews its mark: the chat keeps waiting
        assert not chat.done()
        p.kill()  # SIGKILL: the mark is never cleared, only no longer renewed
        p.wait()
        killed_at = time.monotonic()
        _completed(await chat)
        assert time.monotonic() - killed_at < ttl + 5.0
    await stack.settled(1, session_id)


async def test_a_vacuum_deferred_for_chats_runs_when_the_last_one_ends(stack: Stack) -> None:
    kept = [await stack.aged_session(events=10, age_days=1, text_size=300_000) for _ in range(3)]
    doomed = [
        await stack.aged_session(events=10, age_days=400, text_size=300_000) for _ in range(6)
    ]
    held_chat = await stack.new_session()
    elsewhere = await stack.new_session()
    last_chat = await stack.new_session()
    other_replica = RedisChatLock(stack.redis_url, key_prefix=stack.prefix)
    try:
        async with other_replica.hold(elsewhere):  # a chat running on another replica
            stack.gate.clear()
            chat = asyncio.create_task(stack.chat(held_chat))
            await _until(lambda: stack.state(0).chat_lock.is_locked(held_chat))
            response = await stack.http[0].post("/sessions/maintenance")
            assert response.status_code == 200, response.text
            report = response.json()
            assert set(doomed) <= set(report["deleted_ids"])
            assert report["vacuum_skipped_reason"] == "chat_in_progress"
            assert await stack.sessions.vacuum_owed()
            inode, (pages, free) = stack.db.stat().st_ino, _pages(stack.db)
            assert free / pages >= 0.25

            stack.gate.set()
            _completed(await chat)
            await stack.settled(0, held_chat)
            # Another chat still runs: the VACUUM still waits, and is still owed.
            assert (stack.db.stat().st_ino, _pages(stack.db)) == (inode, (pages, free))
            assert await stack.sessions.vacuum_owed()

        # The chat elsewhere has ended; the next one to end, on another gateway, is the last.
        result = await stack.chat(last_chat, via=1)
        # The response is complete before the VACUUM swaps the file (it runs after it).
        assert stack.db.stat().st_ino == inode
        _completed(result)
        await stack.settled(1, last_chat)
        assert stack.db.stat().st_ino != inode  # swapped in by the deferred VACUUM
        after_pages, after_free = _pages(stack.db)
        assert after_free == 0 and after_pages < pages / 2
        assert not await stack.sessions.vacuum_owed()
        stats = (await stack.http[0].get("/sessions/storage_stats")).json()
        assert stats["freelist_count"] == 0
        ids = {s["id"] for s in (await stack.http[0].get("/sessions")).json()["sessions"]}
        assert set(kept) | {held_chat, elsewhere, last_chat} <= ids
        assert not ids & set(doomed)
        for session_id in (held_chat, last_chat):  # the chats' turns survived the swap
            session = await stack.remote.get_session(
                app_name=APP, user_id=USER, session_id=session_id
            )
            assert session is not None and session.events[-1].content is not None
    finally:
        stack.gate.set()
        await other_replica.close()


async def test_a_deferred_vacuum_is_not_run_when_the_rules_say_no(stack: Stack) -> None:
    # An empty old session: deleted, but frees (almost) nothing: under 25% free pages.
    doomed = await stack.aged_session(events=0, age_days=3)
    held_chat = await stack.new_session()
    try:
        stack.gate.clear()
        chat = asyncio.create_task(stack.chat(held_chat, via=1))
        await _until(lambda: stack.state(1).chat_lock.is_locked(held_chat))
        response = await stack.http[1].post("/sessions/maintenance")
        assert response.status_code == 200, response.text
        assert doomed in response.json()["deleted_ids"]
        assert response.json()["vacuum_skipped_reason"] == "chat_in_progress"
        assert await stack.sessions.vacuum_owed()
        inode, (pages, free) = stack.db.stat().st_ino, _pages(stack.db)
        assert free / pages < 0.25
        stack.gate.set()
        _completed(await chat)
        await stack.settled(1, held_chat)
        assert (stack.db.stat().st_ino, _pages(stack.db)) == (inode, (pages, free))
        assert not await stack.sessions.vacuum_owed()  # decided: nothing is owed any more
    finally:
        stack.gate.set()


async def test_a_rewind_that_ends_last_runs_the_deferred_vacuum(stack: Stack) -> None:
    session_id = await stack.new_session()
    status, evs, error = await stack.chat(session_id)
    assert status == 200, error
    invocation_id = evs[-1][1]["invocation_id"]
    await stack.settled(0, session_id)
    await stack.aged_session(events=10, age_days=1, text_size=200_000)
    for _ in range(4):
        await stack.aged_session(events=10, age_days=400, text_size=200_000)
    elsewhere = await stack.new_session()
    other_replica = RedisChatLock(stack.redis_url, key_prefix=stack.prefix)
    try:
        async with other_replica.hold(elsewhere):
            response = await stack.http[0].post("/sessions/maintenance")
            assert response.json()["vacuum_skipped_reason"] == "chat_in_progress"
            await stack.settled(0)
        inode = stack.db.stat().st_ino
        assert await stack.sessions.vacuum_owed()
        response = await stack.http[1].post(
            f"/sessions/{session_id}/rewind", json={"invocation_id": invocation_id}
        )
        assert response.status_code == 200, response.text
        assert stack.db.stat().st_ino == inode  # answered before the VACUUM ran
        await stack.settled(1, session_id)
        assert stack.db.stat().st_ino != inode and _pages(stack.db)[1] == 0
        assert not await stack.sessions.vacuum_owed()
    finally:
        await other_replica.close()
