"""The ``compact_session_history`` span records the token counts the summarizer's model
reported (docs/compaction.md, "Spans"), here a LiteLLM model talking to a local server that
speaks OpenAI's wire format; the offline summarizer, which reports none, gets an estimate."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from services.compactor.service import _ModelOnFirstUse, _TracedSummarizer
from services.compactor.summarizer import CompactionPlan, ExtractiveSummarizer, plan_compaction
from tests.support.openai_server import serve_openai
from tests.unit.compactor.session_events import SessionEvents

SUMMARY = "## Conversation summary\nThe user compared HC0 and HC3 and settled on HC3."


def _plan() -> CompactionPlan:
    s = SessionEvents()
    for n in range(1, 5):
        s.chat_turn(f"Question {n} about sandwich estimators?", f"Answer {n}. " * 30)
    plan = plan_compaction(s.events, 2)
    assert plan is not None
    return plan


def _span_of(exporter: InMemorySpanExporter) -> dict[str, object]:
    (span,) = exporter.get_finished_spans()
    assert span.name == "compact_session_history" and span.attributes is not None
    return dict(span.attributes)


async def test_the_summary_span_carries_the_models_reported_token_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ZOCRATES_MODEL_API_KEY", "sk-test")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with serve_openai(lambda body: SUMMARY) as server:
        inner = _ModelOnFirstUse("openai/summarizer-test", server.api_base)
        traced = _TracedSummarizer(inner, "openai/summarizer-test", provider.get_tracer("t"))
        summary = await traced.summarize(_plan())

    assert summary.text == SUMMARY
    [exchange] = server.exchanges
    attributes = _span_of(exporter)
    # The server's own usage figures, not 4-characters-a-token guesses.
    assert attributes["llm.token_count.prompt"] == exchange.usage["prompt_tokens"]
    assert attributes["llm.token_count.completion"] == exchange.usage["completion_tokens"]
    assert attributes["compaction.summarize.token_counts"] == "reported"
    guessed = len(str(attributes["input.value"])) // 4
    assert attributes["llm.token_count.prompt"] != guessed


async def test_the_offline_summary_span_estimates_its_token_counts() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = _TracedSummarizer(ExtractiveSummarizer(), "offline", provider.get_tracer("t"))
    summary = await traced.summarize(_plan())

    attributes = _span_of(exporter)
    assert attributes["compaction.summarize.token_counts"] == "estimated"
    assert attributes["llm.token_count.completion"] == max(1, len(summary.text) // 4)
    assert attributes["llm.token_count.prompt"] == max(1, len(str(attributes["input.value"])) // 4)
