"""OpenTelemetry set up once per process: an OTLP exporter when there is somewhere to send spans,
nothing at all when not (the API's no-op tracer keeps instrumented code free).

Where spans go (:func:`resolve_endpoint`):

- ``ZOCRATES_OTLP_ENDPOINT`` set to a URL: there;
- set to ``off`` (or ``none``, ``false``, ``0``, or empty): nowhere, even with Phoenix running;
- unset: to Arize Phoenix's collector if one listens at its default address, 127.0.0.1 on
  Phoenix's OTLP/gRPC port (``PHOENIX_GRPC_PORT``, 4317 by default), found by one local TCP
  connect at start-up (refused at once when nothing listens; at most
  :data:`PROBE_TIMEOUT_S`); otherwise nowhere.

With an exporter, spans pass through :class:`~services.common.tracing_enrich.EnrichingSpanProcessor`
(OpenInference kinds, consolidated messages), ADK's model-call spans carry their messages
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` defaults to ``SPAN_ONLY`` here; an
explicit value wins), and, in a process that runs ADK, thought parts keep ``thought: true``
(:func:`services.common.adk.telemetry.patch_semconv_thoughts`).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Callable, Mapping, MutableMapping

from opentelemetry import propagate, trace

logger = logging.getLogger(__name__)
_configured = False

OFF_VALUES = frozenset({"off", "none", "false", "0", ""})
PHOENIX_HOST = "127.0.0.1"
PHOENIX_GRPC_PORT = 4317  # Phoenix's default OTLP/gRPC collector port
PROBE_TIMEOUT_S = 0.2
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def listening(host: str, port: int, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether something accepts TCP connections at ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def phoenix_default_endpoint(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    port = int(env.get("PHOENIX_GRPC_PORT") or PHOENIX_GRPC_PORT)
    return f"http://{PHOENIX_HOST}:{port}"


def resolve_endpoint(
    configured: str | None,
    *,
    environ: Mapping[str, str] | None = None,
    probe: Callable[[str, int], bool] = listening,
) -> str | None:
    """The OTLP/gRPC endpoint to export to, or ``None`` for no tracing (rules above)."""
    if configured is not None:
        value = configured.strip()
        return None if value.lower() in OFF_VALUES else value
    endpoint = phoenix_default_endpoint(environ)
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    return endpoint if probe(host, int(port)) else None


def setup_tracing(*, service_name: str, otlp_endpoint: str | None) -> None:
    """Install a tracer provider for this process; later calls are ignored.

    ``otlp_endpoint`` is the setting as given (``None`` when unset): see :func:`resolve_endpoint`.
    """
    global _configured
    if _configured:
        return
    _configured = True
    endpoint = resolve_endpoint(otlp_endpoint)
    if endpoint is None:
        return
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from services.common.tracing_enrich import EnrichingSpanProcessor

    os.environ.setdefault(CAPTURE_CONTENT, "SPAN_ONLY")
    if "google.adk" in sys.modules:  # a process that runs agents imported ADK by now
        from services.common.adk.telemetry import patch_semconv_thoughts

        patch_semconv_thoughts()
    provider = TracerProvider(
        resource=Resource.create({"service.name": f"zocrates-{service_name}"})
    )
    provider.add_span_processor(
        EnrichingSpanProcessor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    )
    trace.set_tracer_provider(provider)
    how = "as configured" if otlp_endpoint is not None else "found Phoenix's collector"
    logger.info("tracing: exporting spans to %s (%s)", endpoint, how)


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
