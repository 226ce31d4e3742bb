"""The ``compaction_decision_probe`` span records what the probe was asked: the decision state
and the rubric (docs/compaction.md, "Spans"), here around the Decisions API client talking to a
local server that speaks the wire format."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from services.compactor.decision import QUESTION_ID, RUBRIC_INSTRUCTIONS, DecisionsApiClient
from services.compactor.service import _TracedDecision
from tests.unit.compactor.decisions_server import DecisionsServer, Reply, answer
from tests.unit.compactor.test_compactor_decisions_api import STATE


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[DecisionsServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = DecisionsServer()
    yield server
    server.close()


async def test_the_probe_span_input_holds_the_state_and_the_rubric(api: DecisionsServer) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = DecisionsApiClient(api.url, api_key="k", timeout=2.0)
    traced = _TracedDecision(client, client.model, provider.get_tracer("test"))
    api.replies = [Reply(body=answer(0.82))]
    try:
        decision = await traced.decide(STATE, threshold=0.75)
    finally:
        await client.aclose()

    assert decision.verdict == "COMPRESS"
    (span,) = exporter.get_finished_spans()
    assert span.name == "compaction_decision_probe"
    assert span.attributes is not None
    recorded = json.loads(str(span.attributes["input.value"]))
    assert recorded == {
        "earlier_discussion": STATE.earlier_discussion,
        "latest_turn": STATE.latest_turn,
        "rubric": RUBRIC_INSTRUCTIONS,
    }
    # The rubric on the span is the one the model was asked.
    [request] = api.requests
    assert recorded["rubric"] == request.body["questions"][QUESTION_ID]["instructions"]
