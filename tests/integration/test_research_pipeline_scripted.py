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
from google.genai import types

from services.agent.research import state_keys as sk
from services.agent.research.agents import build_coordinator
from services.agent.research.chat import ChatService
from services.agent.research.harness import Harness
from services.agent.research.library_tools import make_library_tools
from services.agent.research.pipeline_nodes import CHECKPOINT_MESSAGE
from services.common.turn_scope import TurnScope
from services.library.client import LibraryClient
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.scripted_llm import ScriptedToolLlm, call, text
from tests.support.stack import (
    running_library,
    running_reranker,
    running_sessions,
)

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
        library = await stack.enter_async_context(
            running_library(zotero, reranker_addr=reranker.runtime.address)
        )
        assert library.library is not None
        async for _ in library.library.sync(follow_embedding=True):
            pass
        remote = RemoteSessionService(sessions.runtime.address)
        client = RerankerClient(reranker.runtime.address, timeout=120)
        library_client = LibraryClient(library.runtime.address)
        yield Env(remote, make_library_tools(library_client), client)
        await remote.close()
        await client.close()
        await library_client.close()


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


async def test_second_extension_runs_with_the_documented_ceilings(env: Env) -> None:
    def pass_with_gap(request: LlmRequest) -> LlmResponse:
        if not _results(request):
            return call("search_corpus", query="random effects variance", k=2)
        return call("conclude_search", summary="partial", gaps=["still missing"])

    subagent = ScriptedToolLlm(fallback=pass_with_gap)
    synthesizer = ScriptedToolLlm(fallback=text("Partial answer [1, p. 1]."))
    chat = env.chat(subagent=subagent, synthesizer=synthesizer)
    session_id = await env.new_session()
    evs = await _collect(
        chat.chat(app_name=APP, user_id=USER, session_id=session_id, prompt="Q?", scope=TurnScope())
    )
    first = next(d for k, d in evs if k == "request_input")
    evs = await _collect(
        chat.resume(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            invocation_id=first["invocation_id"],
            interrupt_id=first["interrupt_id"],
            response={"action": "extend_budget"},
        )
    )
    second = next(d for k, d in evs if k == "request_input")
    assert second["payload"]["ceilings"] == {"budget": 15, "word_ceiling": 11250, "max_chunks": 20}
    assert second["payload"]["next_ceilings"] == {
        "budget": 20,
        "word_ceiling": 15000,
        "max_chunks": 25,
    }
    before = len(subagent.requests)
    evs = await _collect(
        chat.resume(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            invocation_id=second["invocation_id"],
            interrupt_id=second["interrupt_id"],
            response={"action": "extend_budget"},
        )
    )
    assert evs[-1][1]["status"] == "completed"  # the hard stop: no third checkpoint
    prompt = _all_text(subagent.requests[before])
    assert "Deep research extension 2" in prompt
    assert "20 retrieval calls in total" in prompt and "15000 words" in prompt
    assert "Queries already run:" in prompt and "random effects variance" in prompt


async def test_a_subagent_that_ignores_the_block_is_stopped(env: Env) -> None:
    subagent = ScriptedToolLlm(fallback=call("search_corpus", query="again and again", k=1))
    chat = env.chat(subagent=subagent)
    session_id = await env.new_session()
    evs = await _collect(
        chat.chat(
            app_name=APP, user_id=USER, session_id=session_id, prompt="Loop?", scope=TurnScope()
        )
    )
    assert evs[-1][1]["status"] == "paused"  # the automatic report left the question open
    assert len(subagent.requests) == 12  # 10 allowed calls, 2 blocked, then the pass ended


async def test_two_search_library_calls_in_one_response_run_one_after_the_other(env: Env) -> None:
    both = LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        name="search_library", args={"request": "What is lme4?"}
                    )
                ),
                types.Part(
                    function_call=types.FunctionCall(
                        name="search_library", args={"request": "What is brms?"}
                    )
                ),
            ],
        )
    )

    def by_request(request: LlmRequest) -> LlmResponse:
        prompt = _all_text(request)
        topic = "lme4" if "What is lme4?" in prompt else "brms"
        if not _results(request):
            return call("search_corpus", query=f"{topic} package", k=2)
        return call("conclude_search", summary=f"{topic} found", gaps=[])

    subagent = ScriptedToolLlm(fallback=by_request)
    synthesizer = ScriptedToolLlm(fallback=lambda r: text(f"About {_all_text(r)[-40:]}"))
    chat = env.chat(
        coordinator=ScriptedToolLlm(replies=[both]), subagent=subagent, synthesizer=synthesizer
    )
    session_id = await env.new_session()
    evs = await _collect(
        chat.chat(
            app_name=APP, user_id=USER, session_id=session_id, prompt="Both?", scope=TurnScope()
        )
    )
    assert evs[-1][1]["status"] == "completed"
    queries = [
        p["function_call"]["args"]["query"]
        for k, d in evs
        if k == "message" and d["author"] == "search_subagent"
        for p in d["parts"]
        if "function_call" in p and p["function_call"]["name"] == "search_corpus"
    ]
    assert sorted(queries) == ["brms package", "lme4 package"]
    audit = (await env.state(session_id))[sk.RETRIEVED_EVIDENCE]
    assert sorted(a["request"] for a in audit) == ["What is brms?", "What is lme4?"]
    for entry in audit:  # each pipeline kept its own evidence
        topic = "lme4" if "lme4" in entry["request"] else "brms"
        assert entry["queries"] == [f"{topic} package"]


class _FailingLlm(ScriptedToolLlm):
    async def generate_content_async(  # type: ignore[override]
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Any:
        self.requests.append(llm_request)
        if len(self.requests) >= 2:
            raise RuntimeError("the model provider went away")
        yield call("search_corpus", query="anything", k=1)


async def test_a_failed_run_leaves_the_session_usable(env: Env) -> None:
    session_id = await env.new_session()
    chat = env.chat(subagent=_FailingLlm())
    with pytest.raises(RuntimeError, match="went away"):
        await _collect(
            chat.chat(
                app_name=APP,
                user_id=USER,
                session_id=session_id,
                prompt="First question",
                scope=TurnScope(),
            )
        )
    coordinator = _coordinator()
    subagent = ScriptedToolLlm(
        replies=[
            call("search_corpus", query="sandwich", k=1),
            call("conclude_search", summary="ok", gaps=[]),
        ]
    )
    chat = env.chat(coordinator=coordinator, subagent=subagent)
    evs = await _collect(
        chat.chat(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            prompt="Second question",
            scope=TurnScope(),
        )
    )
    assert evs[-1][1]["status"] == "completed"
    # The coordinator saw the new question, unscoped, and the subagent ran a fresh pass for it.
    assert "Second question" in _all_text(coordinator.requests[-1])
    assert "Second question" in _all_text(subagent.requests[0])


@pytest.mark.parametrize("cut_after", ["a call", "a finished pass"])
async def test_a_run_cut_off_mid_pass_is_sealed_before_the_next_question(
    env: Env, cut_after: str
) -> None:
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions

    session_id = await env.new_session()
    session = await env.sessions.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None
    dead = "e-dead-invocation"
    scope = "search_pipeline:adk-dead-call"
    for event in (
        Event(
            invocation_id=dead,
            author="user",
            content=types.Content(role="user", parts=[types.Part(text="Old question")]),
        ),
        Event(
            invocation_id=dead,
            author="coordinator",
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            id="adk-dead-call", name="search_library", args={"request": "Old"}
                        )
                    )
                ],
            ),
        ),
        Event(
            invocation_id=dead,
            author="search_subagent",
            isolation_scope=scope,
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            id="adk-dead-search", name="search_corpus", args={"query": "old"}
                        )
                    )
                ],
            ),
        ),
    ):
        await env.sessions.append_event(session, event)
    if cut_after == "a finished pass":
        # The subagent concluded (a scoped final reply: ADK's own abort sealing writes
        # nothing for such an invocation) and the run died during rerank or synthesis.
        await env.sessions.append_event(
            session,
            Event(
                invocation_id=dead,
                author="search_subagent",
                isolation_scope=scope,
                content=types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id="adk-dead-search", name="search_corpus", response={}
                            )
                        )
                    ],
                ),
                actions=EventActions(skip_summarization=True),
            ),
        )
    # The agent died here.
    coordinator = _coordinator()
    subagent = ScriptedToolLlm(
        replies=[
            call("search_corpus", query="new", k=1),
            call("conclude_search", summary="ok", gaps=[]),
        ]
    )
    chat = env.chat(coordinator=coordinator, subagent=subagent)
    evs = await _collect(
        chat.chat(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            prompt="New question",
            scope=TurnScope(),
        )
    )
    assert evs[-1][1]["status"] == "completed"
    assert evs[-1][1]["invocation_id"] != dead
    assert "New question" in _all_text(coordinator.requests[-1])
