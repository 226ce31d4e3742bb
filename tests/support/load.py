"""Many users chatting at once through the real stack, and what the database holds afterwards.

:func:`load_stack` starts every service in-process on free ports (sessions on the given
database, reranker, agent, compactor, gateway with the Redis chat lock) with every research
role on a local server speaking OpenAI's wire format (:func:`serve_openai`, the permitted
stand-in for a hosted model). The coordinator answers each message directly, ``Answer to:
<the message>``, so a turn exercises the gateway, the lock, the agent's runner, LiteLLM, the
sessions service and the post-turn gate, but not retrieval (the research pipeline has its own
tests and benchmarks).

:func:`run_load` drives ``sessions`` x ``turns`` chats at once and returns per-route latencies
and every failure; :func:`count_events` reads the events table itself (not through our code)
so a lost or duplicated event shows; :func:`one_session_at_once` sends several chats to one
session together. ``bench/bench_load.py`` and ``tests/integration/test_load.py`` use them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import statistics
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support import zotero_fixture as zf
from tests.support.openai_server import CAPABLE_MODEL, OpenAIServer, message_text, serve_openai
from tests.support.sse import post_stream
from tests.support.stack import (
    running_agent,
    running_compactor,
    running_gateway,
    running_library,
    running_reranker,
    running_sessions,
)

MODEL = "openai/load-test"
ANSWER_PREFIX = "Answer to: "
SLOW = "[slow]"  # in a message: the model takes SLOW_SECONDS longer to answer it, per marker
SLOW_SECONDS = 3.0
API_KEY_ENV = "ZOCRATES_MODEL_API_KEY"


def model_config(api_base: str) -> dict[str, Any]:
    """The preferences that put every research role on the local model at ``api_base``."""
    return {
        "coordinator_model": MODEL,
        "subagent_model": MODEL,
        "synthesizer_model": MODEL,
        "model_api_base": api_base,
        **CAPABLE_MODEL,
    }


def responder(body: dict[str, Any]) -> str:
    """Every role answers the latest user message directly."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    question = message_text(users[-1]) if users else ""
    # SLOW_SECONDS per marker, in the server's own thread (that holds every other request too:
    # slow turns are for tests of one turn at a time).
    time.sleep(SLOW_SECONDS * question.count(SLOW))
    return ANSWER_PREFIX + question


@dataclass
class LoadStack:
    http: httpx.AsyncClient
    model: OpenAIServer
    database_url: str
    gateway: Any


@contextlib.asynccontextmanager
async def load_stack(
    root: pathlib.Path, *, database_url: str | None, redis_url: str, key_prefix: str
) -> AsyncIterator[LoadStack]:
    """The whole stack on an empty library; ``database_url`` None: SQLite under ``root``."""
    zotero = root / "zotero"
    zf.build_zotero_library(zotero, files=())
    overrides = {"database_url": database_url} if database_url else {}
    previous_key = os.environ.get(API_KEY_ENV)
    os.environ[API_KEY_ENV] = "sk-load-test"
    try:
        async with contextlib.AsyncExitStack() as stack:
            model = stack.enter_context(serve_openai(responder, keep_alive=True))
            reranker = await stack.enter_async_context(running_reranker())
            sessions = await stack.enter_async_context(running_sessions(zotero, **overrides))
            library = await stack.enter_async_context(
                running_library(zotero, reranker_addr=reranker.runtime.address)
            )
            agent = await stack.enter_async_context(
                running_agent(
                    zotero,
                    sessions_addr=sessions.runtime.address,
                    reranker_addr=reranker.runtime.address,
                    library_addr=library.runtime.address,
                )
            )
            compactor = await stack.enter_async_context(
                running_compactor(
                    zotero,
                    sessions_addr=sessions.runtime.address,
                    reranker_addr=reranker.runtime.address,
                )
            )
            gateway = await stack.enter_async_context(
                running_gateway(
                    zotero,
                    sessions.runtime.address,
                    agent_addr=agent.runtime.address,
                    library_addr=library.runtime.address,
                    compactor_addr=compactor.runtime.address,
                    redis_url=redis_url,
                    redis_key_prefix=key_prefix,
                )
            )
            await gateway.app.state.gateway.startup_done.wait()
            token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
            http = await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=gateway.url,
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=120,
                    limits=httpx.Limits(max_connections=200, max_keepalive_connections=200),
                )
            )
            response = await http.put("/config", json=model_config(model.api_base))
            assert response.status_code == 200, response.text
            url = database_url or f"sqlite+aiosqlite:///{zotero / 'zocrates-data' / 'sessions.db'}"
            yield LoadStack(http=http, model=model, database_url=url, gateway=gateway)
    finally:
        if previous_key is None:
            os.environ.pop(API_KEY_ENV, None)
        else:
            os.environ[API_KEY_ENV] = previous_key


@dataclass
class LoadResult:
    sessions: dict[str, list[str]] = field(default_factory=dict)  # id -> prompts sent, in order
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def percentiles(self) -> dict[str, tuple[int, float, float]]:
        """Route -> (requests, p50 ms, p99 ms)."""
        out = {}
        for route, values in sorted(self.latencies.items()):
            ordered = sorted(values)
            p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
            out[route] = (len(ordered), statistics.median(ordered) * 1000, p99 * 1000)
        return out


async def _timed(result: LoadResult, route: str, call: Any) -> Any:
    started = time.perf_counter()
    try:
        return await call
    finally:
        result.latencies[route].append(time.perf_counter() - started)


async def run_load(http: httpx.AsyncClient, *, sessions: int, turns: int) -> LoadResult:
    """``sessions`` users at once, each creating a session and chatting ``turns`` turns, then
    reading it back and listing the sessions. Every failure is recorded, none raised."""
    result = LoadResult()
    started = time.perf_counter()

    async def user(n: int) -> None:
        response = await _timed(
            result, "POST /sessions", http.post("/sessions", json={"title": f"load {n}"})
        )
        if response.status_code != 201:
            result.failures.append(f"user {n}: POST /sessions {response.status_code}")
            return
        session_id = response.json()["session"]["id"]
        sent = result.sessions[session_id] = []
        for t in range(turns):
            prompt = f"user {n} turn {t}: what does paper {n}-{t} say?"
            status, events, error = await _timed(
                result,
                "POST /chat",
                post_stream(http, "/chat", {"session_id": session_id, "prompt": prompt}),
            )
            sent.append(prompt)
            done = events[-1][1] if events and events[-1][0] == "done" else None
            if status != 200 or done is None or done.get("status") != "completed":
                result.failures.append(f"user {n} turn {t}: {status} {error or events[-1:]}")
                return
            if done.get("answer") != ANSWER_PREFIX + prompt:
                result.failures.append(f"user {n} turn {t}: answer {done.get('answer')!r}")
        response = await _timed(result, "GET /sessions/{id}", http.get(f"/sessions/{session_id}"))
        if response.status_code != 200:
            result.failures.append(f"user {n}: GET /sessions/{{id}} {response.status_code}")
        response = await _timed(result, "GET /sessions", http.get("/sessions"))
        if response.status_code != 200:
            result.failures.append(f"user {n}: GET /sessions {response.status_code}")

    await asyncio.gather(*(user(n) for n in range(sessions)))
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class Counted:
    """What the events table holds for one session."""

    prompts: list[str]  # user texts, in timestamp order
    answers: list[str]  # the coordinator's final texts, in timestamp order
    events: int


async def count_events(database_url: str, session_ids: list[str]) -> dict[str, Counted]:
    """Read the events table directly (SQLAlchemy Core, the database's own rows)."""
    engine = create_async_engine(database_url)
    counted = {sid: Counted([], [], 0) for sid in session_ids}
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT session_id, event_data FROM events ORDER BY timestamp, id")
            )
            for session_id, raw in rows:
                if session_id not in counted:
                    continue
                data = json.loads(raw) if isinstance(raw, str | bytes) else raw
                entry = counted[session_id]
                entry.events += 1
                parts = ((data or {}).get("content") or {}).get("parts") or []
                texts = "".join(p.get("text") or "" for p in parts if not p.get("thought"))
                if not texts or data.get("partial"):
                    continue
                if data.get("author") == "user":
                    entry.prompts.append(texts)
                elif texts.startswith(ANSWER_PREFIX):
                    entry.answers.append(texts)
    finally:
        await engine.dispose()
    return counted


def lost_or_duplicated(result: LoadResult, counted: dict[str, Counted]) -> list[str]:
    """Every session holds each prompt it was sent once, in order, each with its answer."""
    problems = []
    for session_id, sent in result.sessions.items():
        got = counted[session_id]
        if got.prompts != sent:
            problems.append(f"{session_id}: prompts {got.prompts} != sent {sent}")
        wanted = [ANSWER_PREFIX + p for p in sent]
        if got.answers != wanted:
            problems.append(f"{session_id}: {len(got.answers)} answers for {len(sent)} prompts")
    return problems


async def one_session_at_once(http: httpx.AsyncClient, *, requests: int) -> list[int]:
    """``requests`` chats sent together to one new session, the first one slow: the statuses,
    in order of sending."""
    response = await http.post("/sessions", json={"title": "one at a time"})
    assert response.status_code == 201, response.text
    session_id = response.json()["session"]["id"]
    first = asyncio.create_task(
        post_stream(http, "/chat", {"session_id": session_id, "prompt": f"{SLOW} first"})
    )
    await asyncio.sleep(0.3)  # the first holds the lock
    others = [
        post_stream(http, "/chat", {"session_id": session_id, "prompt": f"second {n}"})
        for n in range(requests - 1)
    ]
    results = await asyncio.gather(first, *others)
    return [status for status, _, _ in results]
