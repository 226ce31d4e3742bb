"""Traces as Phoenix reads them, on real ADK runs and real spans (an in-memory exporter behind
the same processors the services install): the thought flag kept through ADK's semconv,
consolidated input messages, merged tool spans without session state, the OpenInference kinds,
and where a service sends its spans when nothing is configured. The ``checkpoint_N`` and
``rerank_evidence`` spans of a research turn: ``tests/integration/test_research_telemetry.py``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan

from services.common import telemetry
from services.common.adk import telemetry as adk_telemetry
from services.common.tracing_enrich import (
    INPUT_MESSAGES,
    INPUT_VALUE,
    OI_KIND,
)
from tests.support.otlp_collector import OtlpCollector, serving
from tests.support.scripted_llm import ScriptedToolLlm, text, thinking
from tests.support.span_recorder import Spans, record_spans

APP, USER = "zocrates", "local"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


@pytest.fixture(scope="module")
def spans() -> Iterator[Spans]:
    with record_spans() as recorded:
        yield recorded


def _attr_json(span: ReadableSpan, key: str) -> Any:
    assert span.attributes is not None and key in span.attributes, (span.name, span.attributes)
    return json.loads(str(span.attributes[key]))


def _agent(model: ScriptedToolLlm, name: str = "helper") -> LlmAgent:
    return LlmAgent(name=name, model=model, instruction="Answer briefly.")


async def _run(agent: LlmAgent, sessions: InMemorySessionService, session_id: str, prompt: str):
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    return [
        e async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=message)
    ]


THOUGHT = "The optimizer is chosen by lmerControl."
ANSWER = "lmer uses BOBYQA by default."


async def test_patch_adk_semconv_to_part_preserves_thoughts(spans: Spans) -> None:
    spans.clear()
    adk_telemetry.patch_semconv_thoughts()  # a second application changes nothing
    thought, answer = types.Part(text=THOUGHT, thought=True), types.Part(text=ANSWER)
    assert adk_telemetry.to_part(thought, 0) == {
        "type": "text",
        "content": THOUGHT,
        "thought": True,
    }
    assert adk_telemetry.to_part(answer, 1) == {"type": "text", "content": ANSWER}

    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=APP, user_id=USER)
    model = ScriptedToolLlm(replies=[thinking(THOUGHT, ANSWER), text("Yes.")])
    await _run(_agent(model), sessions, session.id, "Which optimizer does lmer use?")
    # The output of the first model call: the thought keeps its flag, the answer has none.
    (first, *_) = spans.named("generate_content scripted-tools", raw=True)
    (output,) = _attr_json(first, "gen_ai.output.messages")
    assert output["parts"] == [
        {"type": "text", "content": THOUGHT, "thought": True},
        {"type": "text", "content": ANSWER},
    ]
    # The same serialiser writes the inputs: a replayed thought part keeps its flag there too.
    (message,) = adk_telemetry.to_input_messages(
        [types.Content(role="model", parts=[thought, answer])]
    )
    assert message["parts"][0].get("thought") is True and "thought" not in message["parts"][1]


async def test_phoenix_enrichment_span_processor_consolidates_input_messages(
    spans: Spans,
) -> None:
    spans.clear()
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=APP, user_id=USER)
    # A streamed earlier answer as a model that does not aggregate leaves it: one event per
    # chunk, thoughts first; the question itself in two text parts.
    await sessions.append_event(
        session,
        Event(
            author="user",
            content=types.Content(
                role="user",
                parts=[types.Part(text="Compare lme4 and brms."), types.Part(text="Be brief.")],
            ),
        ),
    )
    chunks = [("Look", True), ("ing at both.", True), ("lme4 is ", False), ("frequentist.", False)]
    for chunk, is_thought in chunks:
        part = types.Part(text=chunk, thought=True) if is_thought else types.Part(text=chunk)
        await sessions.append_event(
            session, Event(author="helper", content=types.Content(role="model", parts=[part]))
        )
    model = ScriptedToolLlm(replies=[text("brms is Bayesian.")])
    await _run(_agent(model), sessions, session.id, "And brms?")

    (raw,) = spans.named("generate_content scripted-tools", raw=True)
    (enriched,) = spans.named("generate_content scripted-tools")
    # ADK replays no thought parts; each streamed response chunk is a message of its own.
    before = _attr_json(raw, INPUT_MESSAGES)
    assert [m["role"] for m in before] == ["user", "assistant", "assistant", "user"]
    after = _attr_json(enriched, INPUT_MESSAGES)
    assert after == [
        {
            "role": "user",
            "parts": [{"type": "text", "content": "Compare lme4 and brms.\nBe brief."}],
        },
        {"role": "assistant", "parts": [{"type": "text", "content": "lme4 is frequentist."}]},
        {"role": "user", "parts": [{"type": "text", "content": "And brms?"}]},
    ]
    assert enriched.attributes is not None
    assert enriched.attributes[INPUT_VALUE] == (
        "[user] Compare lme4 and brms.\nBe brief.\n[assistant] lme4 is frequentist.\n"
        "[user] And brms?"
    )
    assert enriched.attributes[OI_KIND] == "LLM"

    # Contents that do carry streamed thoughts (ADK's serialiser, patched): one Thought and one
    # Response part, labelled apart in input.value.
    spans.clear()
    contents = [
        types.Content(role="model", parts=[types.Part(text=chunk, thought=is_thought)])
        for chunk, is_thought in chunks
    ] + [
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="c1", name="search_corpus", args={"query": "brms"}
                    )
                )
            ],
        )
    ]
    with trace.get_tracer("test").start_as_current_span("generate_content replayed") as span:
        span.set_attribute(INPUT_MESSAGES, json.dumps(adk_telemetry.to_input_messages(contents)))
    (replayed,) = spans.named("generate_content replayed")
    assert _attr_json(replayed, INPUT_MESSAGES) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Looking at both.", "thought": True},
                {"type": "text", "content": "lme4 is frequentist."},
            ],
        },
        {
            "role": "assistant",
            "parts": [
                {
                    "id": "c1",
                    "name": "search_corpus",
                    "arguments": {"query": "brms"},
                    "type": "tool_call",
                }
            ],
        },
    ]
    assert replayed.attributes is not None
    assert replayed.attributes[INPUT_VALUE] == (
        "[assistant] Thought: Looking at both.\nResponse: lme4 is frequentist.\n"
        '[assistant] tool_call search_corpus({"query": "brms"})'
    )


async def test_merged_tool_spans_carry_only_function_responses(
    spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADK 2.13 already leaves the event's actions (and the evidence in its state_delta) out of
    a merged tool span, so Zocrates has nothing to strip; this guards that on an upgrade."""
    spans.clear()
    bloat = [{"id": f"c{i}", "text": "passage " * 200} for i in range(50)]
    merged = Event(
        author="search_subagent",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=f"call-{name}", name=name, response={"status": "success"}
                    )
                )
                for name in ("search_corpus", "read_document")
            ],
        ),
        actions=EventActions(state_delta={"temp:retrieved_evidence": bloat}),
    )
    tracer = trace.get_tracer("test")
    for schema in ("1", "2"):  # legacy attributes, and the semconv-aligned default
        monkeypatch.setenv("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", schema)
        with tracer.start_as_current_span(f"execute_tool (merged) v{schema}"):
            adk_telemetry.trace_merged_tool_calls(merged.id, merged)
    (legacy,) = spans.named("execute_tool (merged) v1", raw=True)
    (aligned,) = spans.named("execute_tool (merged) v2", raw=True)
    responses = _attr_json(legacy, "gcp.vertex.agent.tool_response")
    assert [(r["name"], r["response"]) for r in responses] == [
        ("search_corpus", {"status": "success"}),
        ("read_document", {"status": "success"}),
    ]
    for span in (legacy, aligned):
        assert span.attributes is not None
        assert "passage" not in json.dumps(dict(span.attributes))  # no state_delta anywhere
    assert aligned.attributes is not None and "gcp.vertex.agent.tool_response" not in (
        aligned.attributes
    )
    (kind,) = {s.attributes[OI_KIND] for s in spans.enriched.get_finished_spans() if s.attributes}
    assert kind == "TOOL"


# --- Where a service sends its spans when ZOCRATES_OTLP_ENDPOINT is unset.


@pytest.fixture
def collector() -> Iterator[_Served]:
    served = _Served(OtlpCollector())
    with serving(served.collector) as served.port:
        yield served


class _Served:
    def __init__(self, collector: OtlpCollector) -> None:
        self.collector, self.port = collector, 0

    @property
    def spans(self) -> list[tuple[str, str]]:
        return self.collector.names()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_phoenix_at_its_default_address_is_found_and_a_setting_wins(
    collector: _Served,
) -> None:
    phoenix = {"PHOENIX_GRPC_PORT": str(collector.port)}
    found = f"http://127.0.0.1:{collector.port}"
    assert telemetry.resolve_endpoint(None, environ=phoenix) == found
    assert telemetry.phoenix_default_endpoint({}) == "http://127.0.0.1:4317"  # Phoenix's default
    for off in ("off", "OFF", "none", "false", "0", "", "  "):
        assert telemetry.resolve_endpoint(off, environ=phoenix) is None, off
    assert (
        telemetry.resolve_endpoint("http://collector:4317", environ=phoenix)
        == "http://collector:4317"
    )
    nothing = {"PHOENIX_GRPC_PORT": str(_closed_port())}
    assert telemetry.resolve_endpoint(None, environ=nothing) is None


_PROCESS = """
import sys
from opentelemetry import trace
from services.common.telemetry import setup_tracing, shutdown_tracing
setting = None if sys.argv[1] == "unset" else sys.argv[1]
setup_tracing(service_name="probe", otlp_endpoint=setting)
trace.get_tracer("probe").start_span("probe-span").end()
shutdown_tracing()
"""


def _service_process(setting: str, phoenix_port: int) -> None:
    env = {**os.environ, "PHOENIX_GRPC_PORT": str(phoenix_port), "PYTHONPATH": ROOT}
    done = subprocess.run(
        [sys.executable, "-c", _PROCESS, setting],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_a_process_exports_to_phoenix_unless_told_otherwise(collector: _Served) -> None:
    _service_process("unset", collector.port)
    assert collector.spans == [("zocrates-probe", "probe-span")]  # flushed at shutdown

    _service_process("off", collector.port)
    assert collector.spans == [("zocrates-probe", "probe-span")]  # nothing more

    other = OtlpCollector()
    with serving(other) as other_port:
        _service_process(f"http://127.0.0.1:{other_port}", collector.port)
    assert other.names() == [("zocrates-probe", "probe-span")]
    assert len(collector.spans) == 1
