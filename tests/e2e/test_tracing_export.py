"""With ZOCRATES_OTLP_ENDPOINT set, real service processes export their spans over OTLP/gRPC,
and one trace spans the gateway and the sessions service. The collector here is a local gRPC
server speaking OTLP's real wire format (opentelemetry-proto's TraceService)."""

from __future__ import annotations

import pathlib
import time
from concurrent import futures

import grpc
import httpx
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from services.common import ports
from tests.support.otlp_collector import OtlpCollector
from tests.support.ports import free_base_port
from tests.support.processes import service_process, wait_checks, wait_http


def test_services_export_one_trace_across_the_gateway_and_sessions(tmp_path: pathlib.Path) -> None:
    collector = OtlpCollector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    otlp_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    base = free_base_port()
    env = {
        "ZOCRATES_ZOTERO_DIR": str(tmp_path),
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_SESSIONS_ADDR": f"127.0.0.1:{ports.service_port(base, 'sessions')}",
        "ZOCRATES_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
        "ZOCRATES_AGENT_ADDR": "127.0.0.1:9",
        "ZOCRATES_LIBRARY_ADDR": "127.0.0.1:9",
    }
    log = tmp_path / "services.log"
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    try:
        with service_process("services.sessions", env, log=log) as sessions:
            wait_http(
                f"http://127.0.0.1:{ports.admin_port(base, 'sessions')}/readyz", proc=sessions
            )
            with service_process("services.gateway", env, log=log):
                wait_checks(
                    f"http://127.0.0.1:{ports.admin_port(base, 'gateway')}/readyz", sessions=True
                )
                token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
                response = httpx.post(
                    f"http://127.0.0.1:{base}/sessions",
                    json={"title": "traced"},
                    headers={
                        "Authorization": f"Bearer {token}",
                        # A caller's W3C trace context is continued, not replaced.
                        "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01",
                    },
                )
                assert response.status_code == 201
        # Both processes flushed their spans on SIGTERM.
        deadline = time.monotonic() + 10
        while (
            time.monotonic() < deadline
            and len({s[0] for s in collector.spans if s[2].hex() == trace_id}) < 2
        ):
            time.sleep(0.1)
        traced = [s for s in collector.spans if s[2].hex() == trace_id]
        by_service = {(service, name) for service, name, _, _ in traced}
        assert ("zocrates-gateway", "HTTP POST /sessions") in by_service, collector.spans
        assert ("zocrates-sessions", "sessions/CreateChat") in by_service, collector.spans
        assert all(parent for _, _, _, parent in traced)  # every span hangs off the caller's
        assert "traceparent" not in log.read_text()
    finally:
        server.stop(grace=None)
