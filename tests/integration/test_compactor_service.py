"""The compactor service over the real sessions service (and the real reranker for the local
decision model): the steps of docs/compaction.md at the service level (closed gate, token
floor, a pivot compacted keeping K turns, the backstop, the Decisions API, a concurrent write
failing open), with its spans."""

from __future__ import annotations

import contextlib
import json
import math
import pathlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import types
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from services.common.app_config import ConfigStore
from services.compactor.client import CompactorClient
from services.compactor.decision import RUBRIC_INSTRUCTIONS
from services.compactor.service import Compactor
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support.stack import running_compactor, running_reranker, running_sessions
from tests.unit.compactor.decisions_server import DecisionsServer, Reply, answer
from tests.unit.compactor.dialogues import DIALOGUES
from tests.unit.compactor.session_events import SessionEvents

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(300)]

APP, USER = "zocrates", "local"


class Env:
    def __init__(self, root: pathlib.Path, remote: RemoteSessionService, reranker: Any) -> None:
        self.root = root
        self.data_dir = root / "zotero" / "zocrates-data"
        self.remote = remote
        self.reranker = reranker
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.decisions = DecisionsServer()
        self.compactor = Compactor(
            session_service=remote,
            embed=reranker.embed,
            data_dir=self.data_dir,
            decisions_url=self.decisions.url,
            tracer=provider.get_tracer("test"),
        )
        self.grpc: CompactorClient | None = None

    def configure(self, **changes: Any) -> None:
        ConfigStore(self.data_dir).update(changes)

    async def session_with(self, events: list[Event]) -> Session:
        session = await self.remote.create_session(app_name=APP, user_id=USER)
        for event in events:
            await self.remote.append_event(session, event)
        return session

    async def compactions(self, session_id: str) -> list[Event]:
        session = await self.remote.get_session(app_name=APP, user_id=USER, session_id=session_id)
        assert session is not None
        return [e for e in session.events if e.actions and e.actions.compaction]

    def spans(self) -> dict[str, Any]:
        return {s.name: s for s in self.exporter.get_finished_spans()}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    root = tmp_path_factory.mktemp("compactor")
    async with contextlib.AsyncExitStack() as stack:
        reranker = await stack.enter_async_context(running_reranker())
        sessions = await stack.enter_async_context(running_sessions(root / "zotero"))
        remote = RemoteSessionService(sessions.runtime.address)
        client = RerankerClient(reranker.runtime.address)
        e = Env(root, remote, client)
        server = await stack.enter_async_context(
            running_compactor(
                root / "zotero",
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
                decisions_url=e.decisions.url,
            )
        )
        e.grpc = CompactorClient(server.runtime.address)
        yield e
        await e.grpc.close()
        await e.compactor.aclose()
        await remote.close()
        await client.close()
        e.decisions.close()


@pytest.fixture(autouse=True)
def _defaults(env: Env) -> None:
    env.exporter.clear()
    env.decisions.replies.clear()
    env.decisions.requests.clear()
    env.configure(
        adaptive_compaction_decision_model="local",
        adaptive_compaction_min_turns=4,
        adaptive_compaction_token_floor=30000,
        adaptive_compaction_token_ceiling=100000,
    )


def _pivot_dialogue(tokens: int) -> list[Event]:
    """A labelled 'compress' dialogue of the calibration set as chat turns."""
    dialogue = next(d for d in DIALOGUES if d.label == "compress" and len(d.turns) >= 4)
    s = SessionEvents()
    for question, reply in dialogue.turns:
        s.chat_turn(question, reply, prompt_tokens=tokens)
    return s.events


async def test_a_closed_gate_is_a_fast_exit_without_spans(env: Env) -> None:
    s = SessionEvents()
    s.chat_turn("What is a sandwich estimator?", "A robust covariance estimator.", prompt_tokens=90)
    session = await env.session_with(s.events)
    result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert result["outcome"] == "skipped" and result["reason"] == "few_turns"
    assert result["probed"] is False and math.isnan(result["probability"])
    assert env.spans() == {} and env.decisions.requests == []


async def test_below_the_token_floor_nothing_is_asked(env: Env) -> None:
    session = await env.session_with(_pivot_dialogue(tokens=2000))
    result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert (result["outcome"], result["reason"]) == ("skipped", "below_floor")
    assert env.spans() == {}


async def test_a_pivot_is_compacted_over_grpc_keeping_k_turns(env: Env) -> None:
    events = _pivot_dialogue(tokens=40_000)
    session = await env.session_with(events)
    assert env.grpc is not None
    result = await env.grpc.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert result["outcome"] == "compacted", result
    assert result["probed"] and result["probability"] >= 0.75 and result["verdict"] == "COMPRESS"
    (compaction,) = await env.compactions(session.id)
    users = [e for e in events if e.author == "user"]
    # Turns N-1 and N are after the range; the last summarized turn is inside it.
    assert compaction.actions.compaction.end_timestamp < users[-2].timestamp
    assert compaction.actions.compaction.end_timestamp >= users[-3].timestamp
    assert result["compaction_event_id"] == compaction.id


async def test_spans_of_the_probe_and_the_summary(env: Env) -> None:
    session = await env.session_with(_pivot_dialogue(tokens=40_000))
    result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert result["outcome"] == "compacted"
    spans = env.spans()
    probe = spans["compaction_decision_probe"].attributes
    assert probe["openinference.span.kind"] == "EVALUATOR"
    assert probe["compaction.decision.model"] == "local"
    assert probe["compaction.decision.verdict"] == "COMPRESS"
    probe_input = json.loads(probe["input.value"])
    assert set(probe_input) == {"earlier_discussion", "latest_turn", "rubric"}
    assert probe_input["rubric"] == RUBRIC_INSTRUCTIONS
    assert '"probability"' in probe["output.value"]
    assert '"prompt_tokens": 40000' in probe["metadata"]
    summary = spans["compact_session_history"].attributes
    assert summary["openinference.span.kind"] == "LLM"
    assert summary["llm.model_name"] == "offline-extractive"
    assert summary["llm.token_count.prompt"] > 0 and summary["llm.token_count.completion"] > 0
    start, end = summary["compaction.summarize.range"]
    assert start < end


async def test_the_backstop_forces_compaction_without_the_probe(env: Env) -> None:
    s = SessionEvents()
    for i in range(5):  # the same topic throughout: the probe would say CONTINUE
        s.chat_turn(f"More about random slopes, part {i}?", "Random slopes vary by group.")
    s.chat_turn("And their variance?", "It is estimated.", prompt_tokens=120_000)
    session = await env.session_with(s.events)
    result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert result["outcome"] == "compacted" and result["forced"] and not result["probed"]
    assert "compaction_decision_probe" not in env.spans()


async def test_the_decisions_api_from_the_config(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    env.configure(adaptive_compaction_decision_model="inception/mercury-decide")
    env.decisions.replies = [
        Reply(status=429, headers={"Retry-After": "0"}),
        Reply(body=answer(0.2)),
    ]
    session = await env.session_with(_pivot_dialogue(tokens=40_000))
    result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert (result["outcome"], result["probability"]) == ("continue", 0.2)
    assert len(env.decisions.requests) == 2  # the 429 was retried
    seen = env.decisions.requests[-1]
    assert seen.headers["Authorization"] == "Bearer sk-or-test"
    assert seen.body["model"] == "inception/mercury-decide"
    assert set(seen.body["state"]) == {"earlier_discussion", "latest_turn"}
    assert await env.compactions(session.id) == []
    # A dead decisions service fails open: CONTINUE, nothing written.
    env.decisions.replies = [Reply(status=500, body={"error": "down"})] * 3
    result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    assert result["outcome"] == "continue" and math.isnan(result["probability"])
    assert await env.compactions(session.id) == []


class _RacingSessions(RemoteSessionService):
    """The real sessions service, plus a second writer that appends between load and append."""

    def __init__(self, address: str, other: RemoteSessionService) -> None:
        super().__init__(address)
        self.other = other

    async def get_session(self, **kwargs: Any) -> Session | None:  # type: ignore[override]
        session = await super().get_session(**kwargs)
        assert session is not None
        theirs = await self.other.get_session(**kwargs)
        assert theirs is not None
        await self.other.append_event(
            theirs,
            Event(
                author="user",
                invocation_id="e-concurrent",
                content=types.Content(role="user", parts=[types.Part(text="a new question")]),
            ),
        )
        return session


async def test_a_concurrent_write_fails_open_and_loses_nothing(env: Env) -> None:
    session = await env.session_with(_pivot_dialogue(tokens=40_000))
    racing = _RacingSessions(env.remote._client.address, env.remote)
    compactor = Compactor(session_service=racing, embed=env.reranker.embed, data_dir=env.data_dir)
    try:
        result = await compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
    finally:
        await racing.close()
    assert (result["outcome"], result["reason"]) == ("failed_open", "stale_session")
    stored = await env.remote.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert stored is not None
    assert stored.events[-1].invocation_id == "e-concurrent"  # the other writer's event is kept
    assert await env.compactions(session.id) == []


async def test_a_bad_summarizer_model_costs_nothing_until_needed_then_fails_open(
    env: Env,
) -> None:
    env.configure(compaction_summarizer_model="nonsense-model")
    try:
        s = SessionEvents()
        s.chat_turn("What is a sandwich estimator?", "A robust covariance.", prompt_tokens=90)
        session = await env.session_with(s.events)
        result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
        assert (result["outcome"], result["reason"]) == ("skipped", "few_turns")
        s = SessionEvents()
        for i in range(5):
            s.chat_turn(f"Random slopes, part {i}?", "They vary.", prompt_tokens=120_000)
        session = await env.session_with(s.events)
        result = await env.compactor.evaluate(app_name=APP, user_id=USER, session_id=session.id)
        assert (result["outcome"], result["reason"]) == ("failed_open", "invalid_model")
        assert await env.compactions(session.id) == []
    finally:
        env.configure(compaction_summarizer_model="offline")
