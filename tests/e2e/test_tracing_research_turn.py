"""One research turn is one trace across every service: `zocrates run` with
ZOCRATES_OTLP_ENDPOINT set, a chat sent with a caller's W3C traceparent, and a local collector
speaking OTLP's real wire format receives spans from the gateway, the agent (its gRPC handler
and ADK's own agent/LLM/tool spans), the sessions service, the library service (the search
tool's calls), the reranker and the compactor (its envelope gate opened for the test), all in
the caller's trace. Every span reaches the collector
with an OpenInference kind, and the pipeline's ``rerank_evidence`` span holds the reranker
service's spans of its calls."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import time
from concurrent import futures

import grpc
import httpx
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.support import zotero_fixture as zf
from tests.support.otlp_collector import OtlpCollector
from tests.support.ports import free_base_port
from tests.support.processes import ROOT, ZOCRATES, zocrates_run

TRACE_ID = "5bf92f3577b34da6a3ce929d0e0e4737"


class _KindCollector(OtlpCollector):
    """Also keeps each span by id: (service, name, trace id, parent id, OpenInference kind)."""

    def __init__(self) -> None:
        super().__init__()
        self.details: dict[bytes, tuple[str, str, bytes, bytes, str]] = {}

    def Export(self, request, context):  # type: ignore[no-untyped-def]
        for resource_spans in request.resource_spans:
            service = next(
                a.value.string_value
                for a in resource_spans.resource.attributes
                if a.key == "service.name"
            )
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    self.details[span.span_id] = (
                        service, span.name, span.trace_id, span.parent_span_id, _kind(span)
                    )  # fmt: skip
        return super().Export(request, context)


def _kind(span: trace_pb2.Span) -> str:
    return next(
        (a.value.string_value for a in span.attributes if a.key == "openinference.span.kind"), ""
    )


def test_a_research_turn_is_one_trace_across_the_services(tmp_path: pathlib.Path) -> None:
    collector = _KindCollector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    otlp_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero", files=["lme4__lmer.pdf"])
    base = free_base_port()
    env = {
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_ZOTERO_DIR": str(zotero_dir),
        "ZOCRATES_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
    }
    log_path = tmp_path / "stack.log"
    with zocrates_run(env, log=log_path):
        index = subprocess.run(
            [str(ZOCRATES), "index"],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert index.returncode == 0, index.stderr
        token = (zotero_dir / "zocrates-data" / "gateway.token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{base}", headers=headers, timeout=120) as api:
            # The gateway calls the compactor only when the envelope gate opens: open it at the
            # first turn, as a user would through the preferences API.
            opened = api.put(
                "/config",
                json={
                    "adaptive_compaction_retention_turns": 0,
                    "adaptive_compaction_min_turns": 1,
                    "adaptive_compaction_token_floor": 1,
                },
            )
            assert opened.status_code == 200, opened.text
            session_id = api.post("/sessions", json={"title": "traced"}).json()["session"]["id"]
            body = {"session_id": session_id, "prompt": "How does lmer choose its optimizer?"}
            traced = {**headers, "traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"}
            with api.stream("POST", "/chat", json=body, headers=traced) as response:
                assert response.status_code == 200
                data = [
                    json.loads(line[5:]) for line in response.iter_lines() if line[:5] == "data:"
                ]
            assert data[-1]["status"] == "completed", data[-1]
            time.sleep(1.0)  # the post-turn compaction call runs after the response
    deadline = time.monotonic() + 15
    wanted = {
        "zocrates-gateway",
        "zocrates-agent",
        "zocrates-sessions",
        "zocrates-library",
        "zocrates-reranker",
        "zocrates-compactor",
    }
    while time.monotonic() < deadline:
        services = {s[0] for s in collector.spans if s[2].hex() == TRACE_ID}
        if wanted <= services:
            break
        time.sleep(0.2)
    server.stop(grace=None)
    spans = [s for s in collector.spans if s[2].hex() == TRACE_ID]
    services = {service for service, _, _, _ in spans}
    assert wanted <= services, sorted({(s, n) for s, n, _, _ in spans})
    names = {(service, name) for service, name, _, _ in spans}
    assert ("zocrates-gateway", "HTTP POST /chat") in names
    assert ("zocrates-agent", "agent/Chat") in names
    assert ("zocrates-library", "library/SearchLibrary") in names  # search_corpus's call
    agent_spans = {name for service, name in names if service == "zocrates-agent"}
    # ADK's own spans ride in the same trace: the agents, the model calls, the tools.
    assert any("search_library" in name for name in agent_spans), agent_spans
    assert any("search_corpus" in name for name in agent_spans), agent_spans
    assert all(parent for _, _, _, parent in spans)  # every span hangs off the caller's
    # Every span of ours and ADK's has a kind; the rerank is a span of its own in the pipeline.
    details = {i: d for i, d in collector.details.items() if d[2].hex() == TRACE_ID}
    assert all(d[4] for d in details.values()), [(d[0], d[1]) for d in details.values() if not d[4]]
    kinds = {(d[0], d[1].split(" ")[0]): d[4] for d in details.values()}
    assert kinds[("zocrates-agent", "invoke_agent")] == "AGENT"
    assert kinds[("zocrates-agent", "generate_content")] == "LLM"
    assert kinds[("zocrates-agent", "execute_tool")] == "TOOL"
    (rerank_id,) = [i for i, d in details.items() if d[1] == "rerank_evidence"]
    assert details[details[rerank_id][3]][1] == "invoke_node search_library_pipeline"
    # The reranker service's own spans continue the rerank_evidence span's calls.
    calls = [d for d in details.values() if d[3] == rerank_id]
    assert calls and {(d[0], d[1], d[4]) for d in calls} == {
        ("zocrates-reranker", "reranker/Rerank", "RERANKER")
    }
