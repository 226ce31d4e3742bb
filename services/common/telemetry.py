"""OpenTelemetry set up once per process: an OTLP exporter when an endpoint is configured,
nothing at all when not (the API's no-op tracer keeps instrumented code free)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping

from opentelemetry import propagate, trace

logger = logging.getLogger(__name__)
_configured = False


def setup_tracing(*, service_name: str, otlp_endpoint: str | None) -> None:
    """Install a tracer provider for this process; later calls are ignored."""
    global _configured
    if _configured:
        return
    _configured = True
    if not otlp_endpoint:
        return
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(
        resource=Resource.create({"service.name": f"zocrates-{service_name}"})
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint)))
    trace.set_tracer_provider(provider)
    logger.info("tracing: exporting spans to %s", otlp_endpoint)


def shutdown_tracing() -> None:
    provider = trace.get_tracer_provider()
    shutdown = getattr(provider, "shutdown", None)
    if callable(shutdown):
        shutdown()


def inject_context(carrier: MutableMapping[str, str]) -> None:
    """Write the current trace context (W3C traceparent) into ``carrier``."""
    propagate.inject(carrier)


def extract_context(carrier: Mapping[str, str]):  # type: ignore[no-untyped-def]
    """The trace context carried by ``carrier`` (incoming headers or gRPC metadata)."""
    return propagate.extract(carrier)
