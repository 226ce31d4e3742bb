"""JSON log lines carry the trace they were written in, so a collector joins logs to traces."""

from __future__ import annotations

import io
import json
import logging

import pytest
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider

from services.common import logs


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    stream = io.StringIO()
    monkeypatch.setattr(logs.sys, "stderr", stream)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    logs.setup_logging(level="INFO", json_lines=True)
    yield stream
    root.handlers[:], _ = saved
    root.setLevel(saved[1])


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_line_inside_a_span_names_its_trace_and_span(captured: io.StringIO) -> None:
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("work") as span:
        logging.getLogger("zocrates.test").info("inside")
    logging.getLogger("zocrates.test").info("outside")
    inside, outside = _lines(captured)
    context = span.get_span_context()
    assert inside["message"] == "inside"
    assert inside["trace_id"] == format(context.trace_id, "032x")
    assert inside["span_id"] == format(context.span_id, "016x")
    assert "trace_id" not in outside and "span_id" not in outside


def test_json_line_carries_the_callers_trace_without_an_exporter(captured: io.StringIO) -> None:
    # No SDK provider: the API's no-op tracer still carries the incoming traceparent.
    carrier = {"traceparent": "00-5bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b7-01"}
    token = otel_context.attach(propagate.extract(carrier))
    try:
        with trace.NoOpTracer().start_as_current_span("handler"):
            logging.getLogger("zocrates.test").warning("handled")
    finally:
        otel_context.detach(token)
    (line,) = _lines(captured)
    assert line["trace_id"] == "5bf92f3577b34da6a3ce929d0e0e4737"
    assert line["level"] == "WARNING"
