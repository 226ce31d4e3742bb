"""A research turn's spans where Phoenix shows them (docs/operations.md, "Traces"): a turn that
pauses at a checkpoint and is resumed has ``checkpoint_0`` [WORKFLOW] under the paused pipeline
node and ``rerank_evidence`` [TASK] under the resumed one, with the reranker's spans under it;
every span has an OpenInference kind. Real sessions, reranker and agent servers, a real PDF, a
scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from services.agent.research.agents import build_coordinator
from services.agent.research.chat import ChatService
from services.agent.research.harness import Harness
from services.agent.research.library_tools import make_library_tools
from services.common.tracing_enrich import OI_KIND, ZOCRATES_KIND
from services.common.turn_scope import TurnScope
from services.library.client import LibraryClient
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.scripted_llm import ScriptedToolLlm, call, thinking
from tests.support.span_recorder import Spans, record_spans
from tests.support.stack import running_indexed_stack

APP, USER = "zocrates", "local"


@pytest.fixture
def spans() -> Iterator[Spans]:
    with record_spans() as recorded:
        yield recorded


THOUGHT = "The optimizer is chosen by lmerControl."
ANSWER = "lmer uses BOBYQA by default."


class Research:
    def __init__(self, sessions: RemoteSessionService, tools: list[Any], reranker: Any) -> None:
        self.sessions, self.tools, self.reranker = sessions, tools, reranker

    def chat(self, subagent: ScriptedToolLlm, synthesizer: ScriptedToolLlm) -> ChatService:
        def coordinator(request: Any) -> LlmResponse:
            last = request.contents[-1]
            return call("search_library", request=" ".join(p.text or "" for p in last.parts))

        models = {
            "coordinator": ScriptedToolLlm(fallback=coordinator),
            "search_subagent": subagent,
            "synthesizer": synthesizer,
        }
        agent = build_coordinator(
            models=lambda role: models[role],
            library_tools=self.tools,
            online_tool=None,
            reranker=self.reranker,
            harness=Harness,
        )
        runner = Runner(app_name=APP, agent=agent, session_service=self.sessions)
        return ChatService(runner=runner, session_service=self.sessions, app_name=APP)


@pytest_asyncio.fixture
async def research(tmp_path: Any) -> AsyncIterator[Research]:
    zotero = zf.build_zotero_library(tmp_path / "zotero", files=("lme4__lmer.pdf",))
    async with running_indexed_stack(zotero, gateway=False) as indexed:
        reranker, sessions = indexed.reranker, indexed.sessions
        remote = RemoteSessionService(sessions.runtime.address)
        client = RerankerClient(reranker.runtime.address, timeout=120)
        library_client = LibraryClient(indexed.library.runtime.address)
        yield Research(remote, make_library_tools(library_client), client)
        await remote.close()
        await client.close()
        await library_client.close()


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def _kind(span: ReadableSpan) -> tuple[Any, Any]:
    assert span.attributes is not None
    return span.attributes.get(OI_KIND), span.attributes.get(ZOCRATES_KIND)


@pytest.mark.timeout(600)
async def test_a_paused_then_reranked_turn_has_its_checkpoint_and_rerank_spans(
    spans: Spans, research: Research
) -> None:
    spans.clear()
    subagent = ScriptedToolLlm(
        replies=[
            call("search_corpus", query="lmer optimizer", k=3),
            call(
                "request_search_extension",
                justification="The optimizer section needs a full read.",
                covered_summary="One search.",
                missing_aspects=["optimizer defaults"],
            ),
        ]
    )
    synthesizer = ScriptedToolLlm(fallback=thinking(THOUGHT, ANSWER))
    session = await research.sessions.create_session(app_name=APP, user_id=USER)
    chat = research.chat(subagent, synthesizer)
    first = [
        e
        async for e in await chat.chat(
            app_name=APP,
            user_id=USER,
            session_id=session.id,
            prompt="Which optimizer does lmer use?",
            scope=TurnScope(),
        )
    ]
    pause = next(d for k, d in first if k == "request_input")
    resumed = [
        e
        async for e in await research.chat(subagent, synthesizer).resume(
            app_name=APP,
            user_id=USER,
            session_id=session.id,
            invocation_id=pause["invocation_id"],
            interrupt_id=pause["interrupt_id"],
            response={"action": "synthesize"},
        )
    ]
    assert resumed[-1][1]["status"] == "completed", resumed[-1]

    exported = list(spans.enriched.get_finished_spans())
    by_id = {s.context.span_id: s for s in exported}
    pipelines = spans.named("invoke_node search_library_pipeline")
    assert len(pipelines) == 2  # the paused run, and the resumed one

    (checkpoint,) = spans.named("checkpoint_0")
    assert _kind(checkpoint) == ("CHAIN", "WORKFLOW")
    assert checkpoint.parent is not None and by_id[checkpoint.parent.span_id] is pipelines[0]
    assert checkpoint.attributes is not None
    assert checkpoint.attributes["zocrates.paused"] is True
    assert checkpoint.attributes["zocrates.checkpoint.trigger"] == "agent_request"
    assert checkpoint.attributes["zocrates.checkpoint.interrupt_id"] == pause["interrupt_id"]
    assert checkpoint.status.status_code is not StatusCode.ERROR  # a pause is not a failure
    # ADK makes no adk_request_input span: the node that yields RequestInput is under ours.
    assert {s.name for s in _children(exported, checkpoint)} == {
        "invoke_node persist_hitl_snapshot",
        "invoke_node search_budget_checkpoint",
    }

    (rerank,) = spans.named("rerank_evidence")
    assert _kind(rerank) == ("CHAIN", "TASK")
    assert rerank.parent is not None and by_id[rerank.parent.span_id] is pipelines[1]
    assert rerank.attributes is not None
    assert rerank.attributes["zocrates.rerank.passages"] >= 1  # type: ignore[operator]
    assert rerank.attributes["zocrates.rerank.groups"] == 1  # one query found them all
    assert rerank.attributes["zocrates.rerank.fallback"] is False
    assert [(s.name, _kind(s)[0]) for s in _children(exported, rerank)] == [
        ("reranker/Rerank", "RERANKER")
    ]
    # The synthesizer runs after the rerank, beside it under the pipeline.
    (synth,) = spans.named("invoke_agent synthesizer")
    assert synth.parent is not None and synth.parent.span_id == pipelines[1].context.span_id
    assert synth.start_time is not None and rerank.end_time is not None
    assert synth.start_time >= rerank.end_time

    # Every span, ADK's and ours, reaches the exporter with a kind.
    assert all(_kind(s)[0] for s in exported), [s.name for s in exported if not _kind(s)[0]]
    kinds = {s.name.split(" ")[0]: _kind(s) for s in exported}
    assert kinds["invoke_agent"] == ("AGENT", None)
    assert kinds["generate_content"] == ("LLM", None)
    assert kinds["execute_tool"] == ("TOOL", None)
    assert kinds["invoke_workflow"] == ("CHAIN", "WORKFLOW")
