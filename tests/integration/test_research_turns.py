"""Research turns through the real services: gateway -> agent (ADK Runner over the sessions
service) -> reranker, on a Zotero-shaped library of real papers, with the built-in offline model.

Covers docs/research.md's path of a turn through HTTP: a focused question answered with citations,
a broad one reaching a checkpoint, extension then synthesis, immediate synthesis, a second
extension then the hard stop, the 409s, a restart of every service while paused followed by a
successful resume, rewind of a paused turn, a second research turn running its own initial
search, and a client that disconnects mid-turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from services.library.client import LibraryClient
from tests.support import zotero_fixture as zf
from tests.support.sse import events, post_stream
from tests.support.stack import (
    running_agent,
    running_compactor,
    running_gateway,
    running_library,
    running_reranker,
    running_sessions,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]

FILES = (
    "lme4__lmer.pdf",
    "brms__brms_multilevel.pdf",
    "brms__brms_overview.pdf",
    "glmnet__Coxnet.pdf",
    "sandwich__sandwich.pdf",
    "ordinal__clm_article.pdf",
)
FOCUSED = "How does lmer choose its optimizer, and how does brms fit the same kind of model?"
# The second aspect is in none of the papers: the offline subagent reports it as a gap.
BROAD = (
    "How does lmer choose its optimizer, and how do quantum annealers schedule their "
    "qubit couplers?"
)
LME4 = zf.paper_item_key("lme4__lmer.pdf")


class Stack:
    """Every service of the product, in-process on free ports, restartable."""

    def __init__(self, root: pathlib.Path, reranker_addr: str) -> None:
        self.root = root
        self.zotero = root / "zotero"
        self.reranker_addr = reranker_addr
        self.reranker: Any = None  # the reranker server (in-process)
        self._exit: contextlib.AsyncExitStack | None = None
        self.http: httpx.AsyncClient

    async def start(self) -> None:
        stack = contextlib.AsyncExitStack()
        sessions = await stack.enter_async_context(running_sessions(self.zotero))
        library = await stack.enter_async_context(
            running_library(self.zotero, reranker_addr=self.reranker_addr)
        )
        agent = await stack.enter_async_context(
            running_agent(
                self.zotero,
                sessions_addr=sessions.runtime.address,
                reranker_addr=self.reranker_addr,
                library_addr=library.runtime.address,
            )
        )
        self.agent_addr = agent.runtime.address
        self.library_addr = library.runtime.address
        self.agent_server = agent
        self.sessions_addr = sessions.runtime.address
        compactor = await stack.enter_async_context(
            running_compactor(
                self.zotero,
                sessions_addr=sessions.runtime.address,
                reranker_addr=self.reranker_addr,
            )
        )
        gateway = await stack.enter_async_context(
            running_gateway(
                self.zotero,
                sessions.runtime.address,
                agent_addr=agent.runtime.address,
                library_addr=library.runtime.address,
                compactor_addr=compactor.runtime.address,
            )
        )
        await gateway.app.state.gateway.startup_done.wait()
        token = (self.zotero / "zocrates-data" / "gateway.token").read_text().strip()
        self.gateway = gateway
        self.http = httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=300
        )
        stack.push_async_callback(self.http.aclose)
        self._exit = stack

    async def stop(self) -> None:
        assert self._exit is not None
        await self._exit.aclose()
        self._exit = None

    async def new_session(self) -> str:
        response = await self.http.post("/sessions", json={"title": "Research"})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["id"])

    async def session(self, session_id: str) -> dict[str, Any]:
        response = await self.http.get(f"/sessions/{session_id}")
        assert response.status_code == 200, response.text
        return dict(response.json()["session"])

    async def chat(self, session_id: str, prompt: str, **extra: Any) -> Any:
        return await post_stream(
            self.http, "/chat", {"session_id": session_id, "prompt": prompt, **extra}
        )

    async def resume(self, session_id: str, pending: dict[str, Any], **response: Any) -> Any:
        return await post_stream(
            self.http,
            "/chat/resume",
            {
                "session_id": session_id,
                "invocation_id": pending["invocation_id"],
                "interrupt_id": pending["interrupt_id"],
                "response": response,
            },
        )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    root = tmp_path_factory.mktemp("research")
    zf.build_zotero_library(root / "zotero", files=FILES)
    async with running_reranker() as reranker:
        s = Stack(root, reranker.runtime.address)
        s.reranker = reranker
        await s.start()
        library = LibraryClient(s.library_addr)
        async for progress in library.sync(follow_embedding=True):
            last = progress
        await library.close()
        assert last["phase"] == "done" and last["failed"] == 0, last
        yield s
        await s.stop()


def _kinds(evs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [k for k, _ in evs]


def _tool_calls(evs: list[tuple[str, dict[str, Any]]], name: str) -> list[dict[str, Any]]:
    return [
        p["function_call"]
        for k, d in evs
        if k == "message" and not d["partial"]
        for p in d["parts"]
        if "function_call" in p and p["function_call"]["name"] == name
    ]


def _done(evs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    assert evs and evs[-1][0] == "done", _kinds(evs)
    return evs[-1][1]


def _request_input(evs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    found = [d for k, d in evs if k == "request_input"]
    assert len(found) == 1, _kinds(evs)
    return found[0]


async def _pause(stack: Stack, session_id: str) -> dict[str, Any]:
    status, evs, _ = await stack.chat(session_id, BROAD)
    assert status == 200
    assert _done(evs)["status"] == "paused"
    assert _done(evs)["usage"] is None  # the offline model costs nothing and reports no usage
    return _request_input(evs)


async def test_focused_question_streams_a_cited_answer(stack: Stack) -> None:
    session_id = await stack.new_session()
    status, evs, _ = await stack.chat(session_id, FOCUSED)
    assert status == 200, evs
    done = _done(evs)
    assert done["status"] == "completed"
    # The answer streamed: several partial chunks of the synthesizer's text, then the whole.
    partial = [d for k, d in evs if k == "message" and d["partial"] and d["kind"] == "answer"]
    assert len(partial) >= 3
    assert _tool_calls(evs, "search_corpus"), "the subagent searched the library"
    answer = done["answer"]
    assert "# Cited Sources" in answer and "Offline extractive answer" in answer
    assert any(c["item_key"] == LME4 for c in done["citations"]), done["citations"]
    assert all(c["page"] >= 1 for c in done["citations"])
    # The offline model's token estimates (kept for compaction) are no usage: none, no cost.
    assert done["usage"] is None
    # What the UI reloads: the question, one answer, no pending checkpoint, no usage.
    session = await stack.session(session_id)
    assert session["pending_hitl"] is None
    assert not [m for m in session["messages"] if "usage" in m]
    main = [m for m in session["messages"] if not m["intermediate"] and m["text"]]
    assert main[0]["role"] == "user" and main[0]["text"] == FOCUSED
    assert any(m["author"] == "synthesizer" and "# Cited Sources" in m["text"] for m in main)


async def test_broad_question_pauses_and_an_extension_continues_the_same_turn(
    stack: Stack,
) -> None:
    session_id = await stack.new_session()
    pending = await _pause(stack, session_id)
    payload = pending["payload"]
    assert pending["interrupt_id"] == "interrupt_ext_1"
    assert payload["extension_number"] == 1 and payload["max_extensions"] == 2
    assert any("quantum" in g for g in payload["gaps"]), payload["gaps"]
    assert payload["next_ceilings"] == {"budget": 15, "word_ceiling": 11250, "max_chunks": 20}
    session = await stack.session(session_id)
    assert session["pending_hitl"]["interrupt_id"] == "interrupt_ext_1"
    assert session["pending_hitl"]["invocation_id"] == pending["invocation_id"]

    # While paused: a new question is refused with a hint, so is a stale interrupt id.
    status, _, error = await stack.chat(session_id, "Something else?")
    assert status == 409 and error["code"] == "checkpoint_pending", error
    assert "resume" in error["message"] and "rewind" in error["message"]
    stale = {**pending, "interrupt_id": "interrupt_ext_7"}
    status, _, error = await stack.resume(session_id, stale, action="extend_budget")
    assert status == 409 and error["code"] == "stale_interrupt", error

    status, evs, _ = await stack.resume(
        session_id, pending, action="extend_budget", guidance="look for annealing schedules"
    )
    assert status == 200
    # The extension searched the gap with the guidance, in the same invocation.
    queries = [c["args"]["query"] for c in _tool_calls(evs, "search_corpus")]
    assert queries and all("annealing schedules" in q for q in queries), queries
    assert {d["invocation_id"] for k, d in evs if k == "message"} == {pending["invocation_id"]}
    second = _request_input(evs)  # the gap is still open: a second checkpoint
    assert second["interrupt_id"] == "interrupt_ext_2"
    assert second["payload"]["ceilings"] == {"budget": 15, "word_ceiling": 11250, "max_chunks": 20}

    status, evs, _ = await stack.resume(session_id, second, action="extend_budget")
    assert status == 200
    # Hard stop: after the second extension no third checkpoint, straight to synthesis.
    assert "request_input" not in _kinds(evs)
    done = _done(evs)
    assert done["status"] == "completed" and done["invocation_id"] == pending["invocation_id"]
    assert "quantum" in done["answer"].lower()  # named as not found in the library
    session = await stack.session(session_id)
    assert session["pending_hitl"] is None


async def test_synthesize_now_answers_from_the_first_pass(stack: Stack) -> None:
    session_id = await stack.new_session()
    pending = await _pause(stack, session_id)
    status, evs, _ = await stack.resume(session_id, pending, action="synthesize")
    assert status == 200
    assert not _tool_calls(evs, "search_corpus"), "no further retrieval after 'synthesize'"
    done = _done(evs)
    assert done["status"] == "completed"
    assert any(c["item_key"] == LME4 for c in done["citations"])
    # The uncovered aspect is named as not found, and nothing is quoted for it.
    assert "Not found in your library:** how do quantum annealers" in done["answer"]
    assert "**how do quantum annealers" not in done["answer"]
    # Resuming twice is refused: the checkpoint is answered.
    status, _, error = await stack.resume(session_id, pending, action="synthesize")
    assert status == 409 and error["code"] == "stale_interrupt"


async def test_second_research_turn_runs_its_own_initial_search(stack: Stack) -> None:
    session_id = await stack.new_session()
    status, evs, _ = await stack.chat(session_id, FOCUSED)
    assert _done(evs)["status"] == "completed"
    question = "What does the sandwich package estimate?"
    status, evs, _ = await stack.chat(session_id, question)
    assert status == 200
    queries = [c["args"]["query"] for c in _tool_calls(evs, "search_corpus")]
    assert queries and queries[0] == question, queries
    done = _done(evs)
    assert done["status"] == "completed"
    assert any(
        c["item_key"] == zf.paper_item_key("sandwich__sandwich.pdf") for c in done["citations"]
    )


async def test_a_follow_up_is_searched_with_the_subject_of_the_conversation(
    stack: Stack,
) -> None:
    sandwich = zf.paper_item_key("sandwich__sandwich.pdf")
    session_id = await stack.new_session()
    first = "What is the difference between HC0 and HC3 in sandwich estimators?"
    status, evs, _ = await stack.chat(session_id, first)
    assert _done(evs)["status"] == "completed"
    follow_up = "Which of them does the package recommend by default?"
    status, evs, _ = await stack.chat(session_id, follow_up)
    assert status == 200
    request = _tool_calls(evs, "search_library")[0]["args"]["request"]
    assert request.startswith(follow_up) and first in request, request
    done = _done(evs)
    assert done["status"] == "completed"
    assert {c["item_key"] for c in done["citations"]} == {sandwich}, done["citations"]
    # Every quote of the offline answer is on the page it cites (a citation that only the
    # list of sources makes quotes nothing and is not checked).
    quoted = [c for c in done["citations"] if c["quote"]]
    assert quoted and all(c["verified"] is True for c in quoted), [
        (c["page"], c["verified"], c.get("found_on_page"), c["quote"][:60])
        for c in done["citations"]
    ]


async def test_rewind_discards_a_paused_turn(stack: Stack) -> None:
    session_id = await stack.new_session()
    pending = await _pause(stack, session_id)
    response = await stack.http.post(
        f"/sessions/{session_id}/rewind", json={"invocation_id": pending["invocation_id"]}
    )
    assert response.status_code == 200, response.text
    session = response.json()["session"]
    assert session["pending_hitl"] is None and session["messages"] == []
    # Unknown invocation: 404 with a code.
    response = await stack.http.post(
        f"/sessions/{session_id}/rewind", json={"invocation_id": "e-nope"}
    )
    assert response.status_code == 404 and response.json()["code"] == "invocation_not_found"
    # The session is usable again, and the new question reaches the coordinator unscoped.
    _status, evs, _ = await stack.chat(session_id, FOCUSED)
    assert _done(evs)["status"] == "completed"
    calls = _tool_calls(evs, "search_library")
    assert calls and calls[0]["args"]["request"] == FOCUSED


async def test_a_restart_of_every_service_while_paused_loses_nothing(stack: Stack) -> None:
    session_id = await stack.new_session()
    pending = await _pause(stack, session_id)
    await stack.stop()
    await stack.start()
    session = await stack.session(session_id)
    assert session["pending_hitl"]["interrupt_id"] == pending["interrupt_id"]
    status, evs, _ = await stack.resume(session_id, pending, action="synthesize")
    assert status == 200, evs
    done = _done(evs)
    assert done["status"] == "completed"
    # The evidence of the first pass survived the restart through hitl_snapshot.
    assert any(c["item_key"] == LME4 for c in done["citations"]), done


async def test_busy_session_and_disconnect(stack: Stack) -> None:
    session_id = await stack.new_session()
    # The turn is held in flight: the reranker's one inference thread runs a job that waits
    # for the test, so the turn's scoring queues behind it (a fast turn, or one whose scores
    # the reranker kept, would otherwise end before the second request arrives).
    held = threading.Event()
    stack.reranker.service._executor.submit(held.wait, 60)
    try:
        async with stack.http.stream(
            "POST", "/chat", json={"session_id": session_id, "prompt": FOCUSED}
        ) as response:
            assert response.status_code == 200
            stream = events(response)
            first = await anext(stream)
            assert first[0] == "message"
            status, _, error = await stack.chat(session_id, "A second question at once?")
            assert status == 409 and error["code"] == "session_busy", error
    finally:
        held.set()
    # The client went away mid-turn: the lock is released and the session stays usable.
    for _ in range(100):
        if not await stack.gateway.app.state.gateway.chat_lock.is_locked(session_id):
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("the chat lock was not released after the client disconnected")
    status, evs, error = await stack.chat(session_id, "What does the sandwich package estimate?")
    assert status == 200 and _done(evs)["status"] == "completed", (status, error, evs)
    calls = _tool_calls(evs, "search_library")
    assert calls and calls[0]["args"]["request"] == "What does the sandwich package estimate?"


async def test_bad_requests_get_clear_errors(stack: Stack) -> None:
    session_id = await stack.new_session()
    status, _, error = await stack.chat("no-such-session", FOCUSED)
    assert status == 404 and error["code"] == "session_not_found", error
    response = await stack.http.post("/chat", json={"session_id": session_id, "prompt": ""})
    assert response.status_code == 422
    response = await stack.http.post(
        "/chat/resume",
        json={
            "session_id": session_id,
            "invocation_id": "x",
            "interrupt_id": "y",
            "response": {"action": "delete_everything"},
        },
    )
    assert response.status_code == 422
    status, _, error = await stack.resume(
        session_id, {"invocation_id": "x", "interrupt_id": "y"}, action="synthesize"
    )
    assert status == 409 and error["code"] == "stale_interrupt"
    assert (await stack.session(session_id))["messages"] == []
