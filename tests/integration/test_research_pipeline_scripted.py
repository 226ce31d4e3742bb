"""The search pipeline's rules with scripted models (the permitted stand-in at ADK's BaseLlm
boundary) over the real sessions service, the real library index and the real reranker:
call-budget exhaustion with its soft warning, the proactive extension request, what the
subagent's prompt does and does not contain, turn-end teardown, the bounded audit, the smart
skip when HITL is off, and scope and snippets from the UI."""

from __future__ import annotations

import contextlib
import json
import pathlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner

from services.agent.research import state_keys as sk
from services.agent.research.agents import build_coordinator
from services.agent.research.chat import ChatService, TurnScope
from services.agent.research.harness import Harness
from services.agent.research.pipeline import CHECKPOINT_MESSAGE
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.scripted_llm import ScriptedToolLlm, call, text
from tests.support.stack import running_agent, running_reranker, running_sessions

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]

APP, USER = "zocrates", "local"
FILES = ("lme4__lmer.pdf", "brms__brms_overview.pdf", "sandwich__sandwich.pdf")
LME4 = zf.paper_item_key("lme4__lmer.pdf")
BRMS = zf.paper_item_key("brms__brms_overview.pdf")
NUDGE = "You will not receive any user replies"


class Env:
    def __init__(self, sessions: RemoteSessionService, tools: list[Any], reranker: Any) -> None:
        self.sessions = sessions
        self.tools = tools
        self.reranker = reranker

    def chat(
        self,
        *,
        coordinator: ScriptedToolLlm | None = None,
        subagent: ScriptedToolLlm,
        synthesizer: ScriptedToolLlm | None = None,
        harness: Harness | None = None,
    ) -> ChatService:
        models = {
            "coordinator": coordinator or _coordinator(),
            "search_subagent": subagent,
            "synthesizer": synthesizer or ScriptedToolLlm(fallback=text("Answer [1, p. 2].")),
        }
        agent = build_coordinator(
            models=lambda role: models[role],
            library_tools=self.tools,
            online_tool=None,
            reranker=self.reranker,
            harness=lambda: harness or Harness(),
        )
        runner = Runner(app_name=APP, agent=agent, session_service=self.sessions)
        return ChatService(runner=runner, session_service=self.sessions, app_name=APP)

    async def new_session(self) -> str:
        session = await self.sessions.create_session(app_name=APP, user_id=USER)
        return session.id

    async def state(self, session_id: str) -> dict[str, Any]:
        session = await self.sessions.get_session(app_name=APP, user_id=USER, session_id=session_id)
        assert session is not None
        return dict(session.state)


def _coordinator() -> ScriptedToolLlm:
    """Calls search_library with the latest user text."""

    def reply(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1]
        prompt = " ".join(p.text for p in last.parts or [] if p.text)
        return call("search_library", request=prompt)

    return ScriptedToolLlm(fallback=reply)


async def _collect(stream: Any) -> list[tuple[str, dict[str, Any]]]:
    return [e async for e in await stream]


def _results(request: LlmRequest) -> list[dict[str, Any]]:
    return [
        dict(p.function_response.response or {})
        for c in request.contents
        for p in c.parts or []
        if p.function_response is not None
    ]


def _all_text(request: LlmRequest) -> str:
    parts = [str(request.config.system_instruction or "")]
    for c in request.contents:
        for p in c.parts or []:
            parts.append(p.text or "")
            if p.function_call is not None:
                parts.append(p.function_call.name or "")
            if p.function_response is not None:
                parts.append(p.function_response.name or "")
                parts.append(json.dumps(p.function_response.response, default=str))
    return "\n".join(parts)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    root: pathlib.Path = tmp_path_factory.mktemp("scripted")
    zotero = zf.build_zotero_library(root / "zotero", files=FILES)
    async with contextlib.AsyncExitStack() as stack:
        reranker = await stack.enter_async_context(running_reranker())
        sessions = await stack.enter_async_context(running_sessions(zotero))
        agent = await stack.enter_async_context(
            running_agent(
                zotero,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
            )
        )
        assert agent.library is not None
        async for _ in agent.library.sync():
            pass
        remote = RemoteSessionService(sessions.runtime.address)
        client = RerankerClient(reranker.runtime.address, timeout=120)
        yield Env(remote, agent.library.research_tools(), client)
        await remote.close()
        await client.close()


async def test_budget_exhaustion_warns_blocks_and_pauses_then_extension_and_teardown(
    env: Env,
) -> None:
    def keep_searching(request: LlmRequest) -> LlmResponse:
        results = _results(request)
        if results and results[-1].get("status") == "blocked":
            return text("I ran out of budget.")  # no conclude_search: the auto report takes over
        return call("search_corpus", query=f"mixed models optimizer {len(results)}", k=3)

    subagent = ScriptedToolLlm(fallback=keep_searching)
    chat = env.chat(subagent=subagent)
    session_id = await env.new_session()
    evs = await _collect(
        chat.chat(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            prompt="Which optimizer does lmer use?",
            scope=TurnScope(),
        )
    )
    pause = [d for k, d in evs if k == "request_input"]
    assert len(pause) == 1 and evs[-1] == ("done", evs[-1][1]) and evs[-1][1]["status"] == "paused"
    payload = pause[0]["payload"]
    assert pause[0]["message"] == CHECKPOINT_MESSAGE
    assert payload["trigger"] == "budget_exhausted" and payload["tool_calls_used"] == 10
    assert payload["gaps"], "the automatic completion report keeps the question open"

    results = _results(subagent.requests[-1])
    assert "1 retrieval call left" in results[8].get("budget_notice", "")  # the 9th call
    assert results[10]["status"] == "blocked"  # the 11th call is refused
    first = _all_text(subagent.requests[0])
    assert NUDGE not in first and "Which optimizer does lmer use?" in first  # node_input only
    state = await env.state(session_id)
    snapshot = state[sk.HITL_SNAPSHOT]
    assert snapshot["tool_count"] == 10 and snapshot["ceilings"]["budget"] == 10
    assert len(snapshot["evidence"]) >= 3 and snapshot["invocation_id"] == pause[0]["invocation_id"]
    assert not any(k.startswith("temp:") for k in state)  # nothing transient was persisted

    # Grant: the extension pass has 5 more calls, sees no checkpoint chatter, then concludes.
    subagent.replies = [
        call("search_corpus", query="BOBYQA Nelder-Mead", k=3),
        call("conclude_search", summary="lme4 p. 25 names BOBYQA.", gaps=[]),
    ]
    synthesizer = ScriptedToolLlm(fallback=text("lmer uses BOBYQA [1, p. 25]."))
    chat = env.chat(subagent=subagent, synthesizer=synthesizer)
    before = len(subagent.requests)
    evs = await _collect(
        chat.resume(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            invocation_id=pause[0]["invocation_id"],
            interrupt_id=pause[0]["interrupt_id"],
            response={"action": "extend_budget", "guidance": "the default optimizer"},
        )
    )
    assert evs[-1][1]["status"] == "completed", evs[-1]
    extension = _all_text(subagent.requests[before])
    assert "Deep research extension 1" in extension and "the default optimizer" in extension
    assert "adk_request_input" not in extension and NUDGE not in extension
    assert "15 retrieval calls in total (10 used)" in extension
    synth_prompt = _all_text(synthesizer.requests[0])
    assert "[1]" in synth_prompt and "Cite every claim" in synth_prompt
    state = await env.state(session_id)
    assert state[sk.HITL_SNAPSHOT] is None
    audit = state[sk.RETRIEVED_EVIDENCE]
    assert len(audit) == 1 and audit[0]["invocation_id"] == pause[0]["invocation_id"]
    assert audit[0]["citations"] and audit[0]["citations"][0]["page"] == 25


async def test_proactive_extension_request_pauses_with_its_gaps(env: Env) -> None:
    subagent = ScriptedToolLlm(
        replies=[
            call(
                "request_search_extension",
                justification="Two packages need full section comparisons.",
                covered_summary="Nothing read yet.",
                missing_aspects=["lme4 section 4", "brms model fitting"],
            )
        ]
    )
    chat = env.chat(subagent=subagent)
    session_id = await env.new_session()
    evs = await _collect(
        chat.chat(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            prompt="Compare lme4 and brms",
            scope=TurnScope(),
        )
    )
    pause = next(d for k, d in evs if k == "request_input")
    assert pause["payload"]["trigger"] == "agent_request"
    assert pause["payload"]["gaps"] == ["lme4 section 4", "brms model fitting"]
    assert pause["payload"]["justification"].startswith("Two packages")
    assert len(subagent.requests) == 1  # the request ended the pass at once
    synthesizer = ScriptedToolLlm(fallback=text("The library lacks this comparison."))
    chat = env.chat(subagent=subagent, synthesizer=synthesizer)
    evs = await _collect(
        chat.resume(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            invocation_id=pause["invocation_id"],
            interrupt_id=pause["interrupt_id"],
            response={"action": "synthesize"},
        )
    )
    assert evs[-1][1]["status"] == "completed"
    assert len(subagent.requests) == 1  # synthesize now: no further retrieval
    assert "brms model fitting" in _all_text(synthesizer.requests[0])  # gaps reach the writer


async def test_smart_skip_without_gaps_and_with_hitl_off(env: Env) -> None:
    for harness, gaps in ((Harness(), []), (Harness(enabled=False), ["everything else"])):
        subagent = ScriptedToolLlm(
            replies=[
                call("search_corpus", query="sandwich covariance", k=3),
                call("conclude_search", summary="sandwich p. 1", gaps=gaps),
            ]
        )
        chat = env.chat(subagent=subagent, harness=harness)
        session_id = await env.new_session()
        evs = await _collect(
            chat.chat(
                app_name=APP,
                user_id=USER,
                session_id=session_id,
                prompt="What is a sandwich estimator?",
                scope=TurnScope(),
            )
        )
        assert "request_input" not in [k for k, _ in evs]
        assert evs[-1][1]["status"] == "completed"


async def test_audit_keeps_the_last_five_turns_and_turns_do_not_contaminate(env: Env) -> None:
    session_id = await env.new_session()
    for turn in range(6):
        subagent = ScriptedToolLlm(
            replies=[
                call("search_corpus", query=f"random effects {turn}", k=2),
                call("conclude_search", summary="ok", gaps=[]),
            ]
        )
        chat = env.chat(subagent=subagent)
        evs = await _collect(
            chat.chat(
                app_name=APP,
                user_id=USER,
                session_id=session_id,
                prompt=f"Question {turn} about random effects",
                scope=TurnScope(),
            )
        )
        assert evs[-1][1]["status"] == "completed"
        # Each turn ran its own initial pass, with a fresh budget.
        assert len(subagent.requests) == 2
        assert f"Question {turn} about random effects" in _all_text(subagent.requests[0])
    audit = (await env.state(session_id))[sk.RETRIEVED_EVIDENCE]
    assert [a["request"] for a in audit] == [
        f"Question {t} about random effects" for t in range(1, 6)
    ]


async def test_selected_items_bound_the_search_and_snippets_lose_their_keys(env: Env) -> None:
    subagent = ScriptedToolLlm(
        replies=[
            call("search_corpus", query="optimizer for mixed models", scope="library", k=8),
            call("conclude_search", summary="brms only", gaps=[]),
        ]
    )
    coordinator = _coordinator()
    synthesizer = ScriptedToolLlm(fallback=text("From brms [1, p. 1]."))
    chat = env.chat(coordinator=coordinator, subagent=subagent, synthesizer=synthesizer)
    session_id = await env.new_session()
    scope = TurnScope(
        items=[{"item_key": BRMS, "title": "brms overview"}],
        snippets=[{"text": "Stan is used to fit", "item_key": BRMS, "page": 3, "title": "brms"}],
    )
    evs = await _collect(
        chat.chat(
            app_name=APP, user_id=USER, session_id=session_id, prompt="Optimizers?", scope=scope
        )
    )
    assert evs[-1][1]["status"] == "completed"
    results = _results(subagent.requests[1])[0]["results"]
    assert results and {r["item_key"] for r in results} == {BRMS}  # the user's scope won
    coordinator_prompt = _all_text(coordinator.requests[0])
    assert "brms overview" in coordinator_prompt and "Stan is used to fit" in coordinator_prompt
    assert f'key="{BRMS}"' not in coordinator_prompt
    synth_prompt = _all_text(synthesizer.requests[0])
    assert "Stan is used to fit" in synth_prompt and f'key="{BRMS}"' not in synth_prompt
    state = await env.state(session_id)
    assert state[sk.SEARCH_SCOPE] == [BRMS]
