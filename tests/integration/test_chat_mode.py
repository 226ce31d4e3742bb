"""``POST /chat``'s ``mode`` through the real gateway and agent (ADK Runner over the sessions
service, the built-in offline model): the turn's scope mode lands in the session state as
``active_mode`` (docs/research.md, "Path of a turn") and in the user message's
``context`` that rewind and edit restore from; without ``mode`` the derived one does.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio

from services.common.adk import names
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.sse import post_stream
from tests.support.stack import (
    running_agent,
    running_gateway,
    running_library,
    running_reranker,
    running_sessions,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(300)]

FILE = "lme4__lmer.pdf"
LME4 = {"item_key": zf.paper_item_key(FILE), "title": "lme4"}
COLLECTION = zf.collection_key("Mixed models")
QUESTION = "How does lmer choose its optimizer?"


@dataclass
class Stack:
    http: httpx.AsyncClient
    sessions: RemoteSessionService
    app_name: str
    user_id: str

    async def turn(self, **fields: Any) -> tuple[str, dict[str, Any]]:
        """Ask QUESTION in a new session with ``fields``; the session's state and its user
        message as GET /sessions/{id} shows it."""
        created = await self.http.post("/sessions", json={"title": "Mode"})
        assert created.status_code == 201, created.text
        session_id = str(created.json()["session"]["id"])
        status, evs, error = await post_stream(
            self.http, "/chat", {"session_id": session_id, "prompt": QUESTION, **fields}
        )
        assert status == 200, error
        assert evs and evs[-1][0] == "done" and evs[-1][1]["status"] == "completed", evs[-1:]
        session = await self.sessions.get_session(
            app_name=self.app_name, user_id=self.user_id, session_id=session_id
        )
        assert session is not None
        formatted = (await self.http.get(f"/sessions/{session_id}")).json()["session"]
        (asked,) = [m for m in formatted["messages"] if m["role"] == "user"]
        return session.state[names.ACTIVE_MODE], asked["context"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    zotero = zf.build_zotero_library(tmp_path_factory.mktemp("mode") / "zotero", files=(FILE,))
    async with contextlib.AsyncExitStack() as exit_stack:
        reranker = await exit_stack.enter_async_context(running_reranker())
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
        assert library.library is not None
        async for _ in library.library.sync():  # keyword-searchable is enough
            pass
        gateway = await exit_stack.enter_async_context(
            running_gateway(
                zotero,
                sessions.runtime.address,
                agent_addr=agent.runtime.address,
                library_addr=library.runtime.address,
            )
        )
        await gateway.app.state.gateway.startup_done.wait()
        token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
        http = httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=240
        )
        exit_stack.push_async_callback(http.aclose)
        remote = RemoteSessionService(sessions.runtime.address)
        exit_stack.push_async_callback(remote.close)
        settings = gateway.app.state.gateway.settings
        yield Stack(http, remote, settings.app_name, settings.user_id)


async def test_a_sent_mode_is_stored_as_active_mode(stack: Stack) -> None:
    # The plugin's chips: the collection is chosen although papers are still selected.
    mode, context = await stack.turn(
        mode="collection",
        active_items=[LME4],
        collection_key=COLLECTION,
        collection_name="Mixed models",
    )
    assert mode == "collection"
    assert context[names.ACTIVE_MODE] == "collection"
    assert context[names.ACTIVE_COLLECTION] == {"key": COLLECTION, "name": "Mixed models"}
    assert context[names.ACTIVE_CONTEXT_ITEMS] is None  # not the turn's scope

    mode, context = await stack.turn(mode="library", active_items=[LME4])
    assert mode == "library" and context[names.ACTIVE_MODE] == "library"


@pytest.mark.parametrize(
    ("fields", "derived"),
    [
        ({"active_items": [LME4]}, "items"),
        ({"collection_key": COLLECTION}, "collection"),
        ({}, "library"),
    ],
)
async def test_without_mode_the_derived_one_is_stored(
    stack: Stack, fields: dict[str, Any], derived: str
) -> None:
    mode, context = await stack.turn(**fields)
    assert mode == derived and context[names.ACTIVE_MODE] == derived


async def test_a_bad_mode_is_refused_before_the_turn(stack: Stack) -> None:
    created = await stack.http.post("/sessions", json={"title": "Mode"})
    session_id = created.json()["session"]["id"]
    for fields in ({"mode": "papers"}, {"mode": "items"}):
        response = await stack.http.post(
            "/chat", json={"session_id": session_id, "prompt": QUESTION, **fields}
        )
        assert response.status_code == 422, response.text
        body = response.json()
        assert body["status"] == "error" and body["code"] == "invalid_request", body
    assert (await stack.http.get(f"/sessions/{session_id}")).json()["session"]["messages"] == []
