"""Post-turn compaction through the real services (issue 5's done-criterion): a ten-turn
research conversation that changes topic after turn 4 and again after turn 8, on real papers,
with the offline model, the local decision model and the extractive summarizer.

The coordinator's real prompts are recorded at the model boundary (the offline model's
generate call) to check what turn N+1 sees: the summary, then turns N-1 and N verbatim."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from google.adk.models.llm_request import LlmRequest

from services.agent.research.offline_llm import OfflineLlm
from services.common.metrics import REGISTRY
from services.compactor.summarizer import EXTRACTIVE_HEADER
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.sse import post_stream
from tests.support.stack import (
    running_agent,
    running_compactor,
    running_gateway,
    running_library,
    running_reranker,
    running_sessions,
)
from tests.unit.compactor.decisions_server import DecisionsServer, Reply, answer

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(900)]

FILES = (
    "lme4__lmer.pdf",
    "brms__brms_multilevel.pdf",
    "sandwich__sandwich.pdf",
    "sandwich__sandwich-CL.pdf",
    "glmnet__Coxnet.pdf",
)
CONVERSATION = (
    # Mixed models.
    "How does lmer choose its optimizer?",
    "How are random effects specified in an lmer formula?",
    "How does brms fit multilevel models?",
    "What priors does brms use for random effects by default?",
    # Robust standard errors (the first change of topic).
    "What is a sandwich estimator of the covariance matrix?",
    "How are clustered standard errors computed in the sandwich package?",
    "Which HC types does vcovHC offer?",
    "Which of them does the sandwich package recommend by default?",
    # Regularized Cox regression (the second change).
    "How does glmnet fit a regularized Cox model?",
    "How does glmnet handle ties in survival times?",
    "Can glmnet fit Cox models with time-dependent covariates?",
)


class Recorder:
    """Keeps the coordinator's prompts (the permitted observation point: the model boundary)."""

    def __init__(self) -> None:
        self.coordinator: list[LlmRequest] = []
        self.decisions: DecisionsServer | None = None


def _texts(request: LlmRequest) -> list[tuple[str, str]]:
    return [
        (c.role or "", p.text)
        for c in request.contents
        for p in c.parts or []
        if p.text and not p.thought
    ]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[httpx.AsyncClient, Any, RemoteSessionService, Recorder]]:
    root: pathlib.Path = tmp_path_factory.mktemp("compaction")
    zotero = zf.build_zotero_library(root / "zotero", files=FILES)
    recorder = Recorder()
    original = OfflineLlm.generate_content_async

    async def recording(self: OfflineLlm, llm_request: LlmRequest, stream: bool = False) -> Any:
        if self.role == "coordinator":
            recorder.coordinator.append(llm_request.model_copy(deep=True))
        async for response in original(self, llm_request, stream):
            yield response

    OfflineLlm.generate_content_async = recording  # type: ignore[method-assign]
    try:
        async with contextlib.AsyncExitStack() as stack:
            reranker = await stack.enter_async_context(running_reranker())
            sessions = await stack.enter_async_context(running_sessions(zotero))
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
            assert library.library is not None
            async for _ in library.library.sync(follow_embedding=True):
                pass
            decisions = DecisionsServer()
            stack.callback(decisions.close)
            compactor = await stack.enter_async_context(
                running_compactor(
                    zotero,
                    sessions_addr=sessions.runtime.address,
                    reranker_addr=reranker.runtime.address,
                    decisions_url=decisions.url,
                )
            )
            gateway = await stack.enter_async_context(
                running_gateway(
                    zotero,
                    sessions.runtime.address,
                    agent_addr=agent.runtime.address,
                    library_addr=library.runtime.address,
                    compactor_addr=compactor.runtime.address,
                )
            )
            await gateway.app.state.gateway.startup_done.wait()
            token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
            http = httpx.AsyncClient(
                base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=300
            )
            stack.push_async_callback(http.aclose)
            remote = RemoteSessionService(sessions.runtime.address)
            stack.push_async_callback(remote.close)
            # The offline coordinator's prompts are small (a few thousand tokens), so the floor
            # is lowered the way a user would, through the preferences API.
            response = await http.put("/config", json={"adaptive_compaction_token_floor": 500})
            assert response.status_code == 200, response.text
            recorder.decisions = decisions
            yield http, gateway, remote, recorder
    finally:
        OfflineLlm.generate_content_async = original  # type: ignore[method-assign]


async def _turn(http: httpx.AsyncClient, gateway: Any, session_id: str, prompt: str) -> None:
    status, events, error = await post_stream(
        http, "/chat", {"session_id": session_id, "prompt": prompt}
    )
    assert status == 200, error
    assert events[-1][0] == "done" and events[-1][1]["status"] == "completed", events[-1]
    await _settle(gateway, session_id)


async def _settle(gateway: Any, session_id: str) -> None:
    """Compaction runs after the response, holding the session: wait for it to let go."""
    lock = gateway.app.state.gateway.chat_lock
    for _ in range(600):
        if not await lock.is_locked(session_id):
            return
        await asyncio.sleep(0.05)
    pytest.fail("the session stayed locked after the turn")


async def _compactions(remote: RemoteSessionService, session_id: str) -> list[Any]:
    session = await remote.get_session(app_name="zocrates", user_id="local", session_id=session_id)
    assert session is not None
    return [e for e in session.events if e.actions and e.actions.compaction]


async def test_a_change_of_topic_is_compacted_keeping_the_last_two_turns_verbatim(
    env: tuple[httpx.AsyncClient, Any, RemoteSessionService, Recorder],
) -> None:
    http, gateway, remote, recorder = env
    response = await http.post("/sessions", json={"title": "Long research chat"})
    session_id = response.json()["session"]["id"]
    after: dict[int, int] = {}
    prompts_at: dict[int, int] = {}
    for number, prompt in enumerate(CONVERSATION, start=1):
        prompts_at[number] = len(recorder.coordinator)
        await _turn(http, gateway, session_id, prompt)
        after[number] = len(await _compactions(remote, session_id))
    print("compaction events after each turn:", after)

    # Nothing while the conversation stays on mixed models (turns 1-4).
    assert [after[n] for n in (1, 2, 3, 4)] == [0, 0, 0, 0]
    # The change of topic in turn 5 is compacted right after it: turns 1-3 summarized.
    assert after[5] == 1
    first = (await _compactions(remote, session_id))[0].actions.compaction
    summary = first.compacted_content.parts[0].text
    assert summary.startswith(EXTRACTIVE_HEADER)
    assert CONVERSATION[0] in summary and CONVERSATION[2] in summary
    assert CONVERSATION[3] not in summary  # turn 4 (N-1) stays verbatim

    # Turn 6's prompt: the summary, then turns 4 and 5 verbatim, then the new question.
    texts = _texts(recorder.coordinator[prompts_at[6]])
    users = [t for role, t in texts if role == "user"]
    assert users == [CONVERSATION[3], CONVERSATION[4], CONVERSATION[5]], users
    assert sum(1 for _, t in texts if t.startswith(EXTRACTIVE_HEADER)) == 1

    # Turns are counted since the compaction happened (turn 4, then 8; docs/compaction.md): the
    # gate stays shut for turns 6-8, and the second change (turn 9) is compacted again, the new
    # summary subsuming the first.
    assert [after[n] for n in (6, 7, 8)] == [1, 1, 1]
    assert after[9] == 2
    texts = _texts(recorder.coordinator[prompts_at[10]])
    summaries = [t for _, t in texts if t.startswith(EXTRACTIVE_HEADER)]
    assert len(summaries) == 1, "the earlier compaction is subsumed, not shown twice"
    assert CONVERSATION[0] in summaries[0] and CONVERSATION[6] in summaries[0]
    users = [t for role, t in texts if role == "user"]
    assert users == [CONVERSATION[7], CONVERSATION[8], CONVERSATION[9]], users

    # The history the UI shows is untouched: every question and every answer.
    session = (await http.get(f"/sessions/{session_id}")).json()["session"]
    asked = [m["text"] for m in session["messages"] if m["role"] == "user"]
    assert asked == list(CONVERSATION)
    answers = [m for m in session["messages"] if m["author"] == "synthesizer"]
    assert len(answers) == len(CONVERSATION)


def _evaluations() -> float:
    """EvaluateAndCompact calls the compactor has answered (its server's request counter)."""
    value = REGISTRY.get_sample_value(
        "zocrates_grpc_server_requests_total",
        {"service": "compactor", "method": "EvaluateAndCompact", "code": "OK"},
    )
    return value or 0.0


async def test_a_turn_that_cannot_open_the_gate_costs_no_call_to_the_compactor(
    env: tuple[httpx.AsyncClient, Any, RemoteSessionService, Recorder],
) -> None:
    """The gateway applies the envelope gate from the figures in ``done``: turns 1-3 (fewer
    than min_turns) never reach the compactor; turn 4 does, and the compactor's own gate
    agrees with the gateway's."""
    http, gateway, remote, _recorder = env
    session_id = (await http.post("/sessions", json={"title": "gate"})).json()["session"]["id"]
    calls = []
    for prompt in CONVERSATION[:4]:
        before = _evaluations()
        status, events, _ = await post_stream(
            http, "/chat", {"session_id": session_id, "prompt": prompt}
        )
        assert status == 200 and events[-1][0] == "done"
        assert "compaction" not in events[-1][1], "the gate's figures are not relayed"
        await _settle(gateway, session_id)
        calls.append(_evaluations() - before)
    assert calls == [0, 0, 0, 1]
    # Turn 4 was asked about and stayed on mixed models: nothing compacted.
    assert await _compactions(remote, session_id) == []


async def test_the_next_question_waits_for_compaction_instead_of_failing(
    env: tuple[httpx.AsyncClient, Any, RemoteSessionService, Recorder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    http, gateway, remote, recorder = env
    assert recorder.decisions is not None
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    # A slow remote decision model (1.5 s) that says COMPRESS, from the third turn on.
    recorder.decisions.requests.clear()
    recorder.decisions.default = Reply(body=answer(0.95), delay=1.5)
    changes = {
        "adaptive_compaction_decision_model": "inception/mercury-decide",
        "adaptive_compaction_min_turns": 3,
    }
    assert (await http.put("/config", json=changes)).status_code == 200
    try:
        session_id = (await http.post("/sessions", json={"title": "fast typist"})).json()[
            "session"
        ]["id"]
        for prompt in CONVERSATION[:2]:
            await _turn(http, gateway, session_id, prompt)
        status, events, _ = await post_stream(
            http, "/chat", {"session_id": session_id, "prompt": CONVERSATION[4]}
        )
        answered_at = time.time()
        assert status == 200 and events[-1][1]["status"] == "completed"
        # The user sends the next question at once, while compaction is still probing.
        status, events, error = await post_stream(
            http, "/chat", {"session_id": session_id, "prompt": CONVERSATION[5]}
        )
        assert status == 200, error  # waited for the compaction, no 409
        session = await remote.get_session(
            app_name="zocrates", user_id="local", session_id=session_id
        )
        assert session is not None
        (compaction,) = [e for e in session.events if e.actions and e.actions.compaction]
        question = next(e for e in session.events if _user_text(e) == CONVERSATION[5])
        # The third answer streamed before compaction started; the fourth question started
        # only after the compaction event was written.
        assert answered_at < compaction.timestamp < question.timestamp
        # One probe before the fourth question; the fourth turn's own compaction may already
        # have sent its probe by now, so count by when each request arrived.
        to_wall = time.time() - time.monotonic()
        before = [r for r in recorder.decisions.requests if r.at + to_wall < question.timestamp]
        assert len(before) == 1, before
        await _settle(gateway, session_id)  # the fourth turn's own compaction
    finally:
        recorder.decisions.default = Reply()
        await http.put(
            "/config",
            json={
                "adaptive_compaction_decision_model": "local",
                "adaptive_compaction_min_turns": 4,
            },
        )


async def test_a_question_as_compaction_lets_go_is_not_refused(
    env: tuple[httpx.AsyncClient, Any, RemoteSessionService, Recorder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 'compacting' note is cleared just before the lock is released: a question that
    arrives in between waits a moment for the release instead of getting 409."""
    http, gateway, _remote, _recorder = env
    state = gateway.app.state.gateway
    lock = state.chat_lock
    real_set_phase = lock.set_phase
    session_id = (await http.post("/sessions", json={"title": "quick"})).json()["session"]["id"]
    asked: list[asyncio.Task[Any]] = []

    async def set_phase(held_id: str, phase: str | None, *, ttl_seconds: float) -> None:
        await real_set_phase(held_id, phase, ttl_seconds=ttl_seconds)
        if phase is None and held_id == session_id and not asked:
            # A client asking at this instant: the note is gone, the lock not yet released.
            assert await lock.is_locked(session_id)
            asked.append(asyncio.create_task(state.acquire_session(session_id)))

    monkeypatch.setattr(lock, "set_phase", set_phase)
    await _turn(http, gateway, session_id, CONVERSATION[0])
    assert len(asked) == 1
    held = await asked[0]  # SessionBusy (409) before the grace
    await lock.release(held)


def _user_text(event: Any) -> str:
    if event.author != "user" or not event.content:
        return ""
    return "".join(p.text or "" for p in event.content.parts or [])


async def test_rewind_right_after_an_answer_waits_for_compaction(
    env: tuple[httpx.AsyncClient, Any, RemoteSessionService, Recorder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    http, gateway, _remote, recorder = env
    assert recorder.decisions is not None
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    recorder.decisions.requests.clear()
    recorder.decisions.default = Reply(body=answer(0.1), delay=1.0)  # slow, and says CONTINUE
    changes = {
        "adaptive_compaction_decision_model": "inception/mercury-decide",
        "adaptive_compaction_min_turns": 3,
    }
    assert (await http.put("/config", json=changes)).status_code == 200
    try:
        session_id = (await http.post("/sessions", json={"title": "edit"})).json()["session"]["id"]
        for prompt in CONVERSATION[:2]:
            await _turn(http, gateway, session_id, prompt)
        status, events, _ = await post_stream(
            http, "/chat", {"session_id": session_id, "prompt": CONVERSATION[2]}
        )
        assert status == 200
        invocation = events[-1][1]["invocation_id"]
        # The user edits the question they just asked, while compaction is still probing.
        response = await http.post(
            f"/sessions/{session_id}/rewind", json={"invocation_id": invocation}
        )
        assert response.status_code == 200, response.text  # waited, no 409
        asked = [m["text"] for m in response.json()["session"]["messages"] if m["role"] == "user"]
        assert asked == list(CONVERSATION[:2])
        assert len(recorder.decisions.requests) == 1  # the probe ran, before the rewind
        await _settle(gateway, session_id)
    finally:
        recorder.decisions.default = Reply()
        await http.put(
            "/config",
            json={
                "adaptive_compaction_decision_model": "local",
                "adaptive_compaction_min_turns": 4,
            },
        )
