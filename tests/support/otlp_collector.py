"""A local OTLP/gRPC trace collector speaking OTLP's real wire format (opentelemetry-proto's
TraceService): what the services export to in the tracing tests."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


class OtlpCollector(trace_service_pb2_grpc.TraceServiceServicer):
    """Records every exported span as (service.name, span name, trace id, parent span id)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str, bytes, bytes]] = []
        self._lock = threading.Lock()

    def names(self) -> list[tuple[str, str]]:
        """(service, span name) of every span so far, in arrival order."""
        with self._lock:
            return [(service, name) for service, name, _, _ in self.spans]

    def Export(self, request, context):  # type: ignore[no-untyped-def]
        with self._lock:
            for resource_spans in request.resource_spans:
                service = next(
                    (
                        a.value.string_value
                        for a in resource_spans.resource.attributes
                        if a.key == "service.name"
                    ),
                    "",
                )
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.spans.append((service, span.name, span.trace_id, span.parent_span_id))
        return trace_service_pb2.ExportTraceServiceResponse()


@contextlib.contextmanager
def serving(collector: OtlpCollector) -> Iterator[int]:
    """``collector`` served on a free loopback port (yielded) until the block ends."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(grace=None)
