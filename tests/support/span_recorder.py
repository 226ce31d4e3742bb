"""Every span a test process ends, recorded raw and as the services' enrichment hands it on.

ADK's tracers use the global tracer provider, which a process sets once: :func:`record_spans`
installs an SDK provider if none is set, adds two recorders to it and, on exit, switches them
off (a provider's processors cannot be removed), so later tests in the same process pay nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from services.common import telemetry
from services.common.adk import telemetry as adk_telemetry
from services.common.tracing_enrich import EnrichingSpanProcessor


class _Switchable(SpanProcessor):
    def __init__(self, inner: SpanProcessor) -> None:
        self.inner, self.on = inner, True

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        if self.on:
            self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            self.inner.on_end(span)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class Spans:
    """The spans ended while recording: ``raw`` as ADK and our code made them, ``enriched`` as
    :class:`EnrichingSpanProcessor` passes them to the exporter."""

    def __init__(self) -> None:
        self.raw = InMemorySpanExporter()
        self.enriched = InMemorySpanExporter()

    def clear(self) -> None:
        self.raw.clear()
        self.enriched.clear()

    def named(self, name: str, *, raw: bool = False) -> list[ReadableSpan]:
        exporter = self.raw if raw else self.enriched
        return [s for s in exporter.get_finished_spans() if s.name == name]


@contextlib.contextmanager
def record_spans() -> Iterator[Spans]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider), "another test installed a non-SDK provider"
    recorded = Spans()
    switches = [
        _Switchable(SimpleSpanProcessor(recorded.raw)),
        _Switchable(EnrichingSpanProcessor(SimpleSpanProcessor(recorded.enriched))),
    ]
    for switch in switches:
        provider.add_span_processor(switch)
    # What setup_tracing does when it exports: model-call content on the spans, thoughts kept.
    saved = os.environ.get(telemetry.CAPTURE_CONTENT)
    os.environ[telemetry.CAPTURE_CONTENT] = "SPAN_ONLY"
    adk_telemetry.patch_semconv_thoughts()
    try:
        yield recorded
    finally:
        for switch in switches:
            switch.on = False
        if saved is None:
            os.environ.pop(telemetry.CAPTURE_CONTENT, None)
        else:
            os.environ[telemetry.CAPTURE_CONTENT] = saved
