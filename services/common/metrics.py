"""Prometheus metrics shared by the gRPC frame and the gateway (one registry per process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

GRPC_SERVER_REQUESTS = Counter(
    "zocrates_grpc_server_requests_total",
    "gRPC requests handled, by service, method and status code.",
    ["service", "method", "code"],
    registry=REGISTRY,
)
GRPC_SERVER_LATENCY = Histogram(
    "zocrates_grpc_server_request_duration_seconds",
    "gRPC request handling time in seconds (to the last message for streams).",
    ["service", "method"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
HTTP_REQUESTS = Counter(
    "zocrates_http_requests_total",
    "HTTP requests served by the gateway, by method, route template and status.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_LATENCY = Histogram(
    "zocrates_http_request_duration_seconds",
    "Gateway HTTP handling time in seconds (to the end of the body for streams).",
    ["method", "route"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)

# The sample names a metric family of each type exposes (prometheus_client's text format).
_SAMPLE_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
    "info": ("_info",),
    "stateset": ("",),
    "gaugehistogram": ("_bucket", "_gcount", "_gsum"),
    "unknown": ("",),
}


def exported_names(registry: CollectorRegistry = REGISTRY) -> set[str]:
    """Every sample name ``registry`` can expose (``x_total``, ``x_bucket``, ...), whether or
    not a labelled metric has a series yet: what a PromQL expression may name."""
    names: set[str] = set()
    for family in registry.collect():
        names.update(family.name + s for s in _SAMPLE_SUFFIXES.get(family.type, ("",)))
    return names
