"""API keys and the gateway token never leave in logs, traces, metrics, error bodies or the
sessions database (issue 16, "Secrets").

`zocrates run` at DEBUG with tracing to a local OTLP collector, recognisable keys in the
environment, every research role on a local server speaking OpenAI's wire format, the decision
model on a local Decisions API (both permitted stand-ins). The keys are used (each server sees
its key arrive), then everything the product wrote or answered is searched for them: the
services' output, every exported span, each service's /metrics, the body of every response
(including failures: a model server that refuses the key, one that is not there), the config
file and sessions.db.
"""

from __future__ import annotations

import pathlib
import threading
import time
import uuid
from concurrent import futures
from typing import Any

import grpc
import httpx
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from services.common import ports
from tests.support import zotero_fixture as zf
from tests.support.load import ANSWER_PREFIX, model_config, responder
from tests.support.openai_server import serve_openai
from tests.support.ports import free_base_port
from tests.support.processes import zocrates_run
from tests.unit.compactor.decisions_server import DecisionsServer, Reply, answer

SERVICES = ("gateway", "sessions", "library", "agent", "reranker", "compactor")


class _RawCollector(trace_service_pb2_grpc.TraceServiceServicer):
    """Keeps every OTLP export request as the bytes that arrived."""

    def __init__(self) -> None:
        self.exports: list[bytes] = []
        self._lock = threading.Lock()

    def Export(self, request, context):  # type: ignore[no-untyped-def]
        with self._lock:
            self.exports.append(request.SerializeToString())
        return trace_service_pb2.ExportTraceServiceResponse()


def _refusing_model(body: dict[str, Any]) -> str:
    raise PermissionError("401: invalid api key")  # the server answers 500 with this


def test_no_secret_leaves_the_product(tmp_path: pathlib.Path) -> None:
    model_key = f"sk-zocrates-model-{uuid.uuid4().hex}"
    openrouter_key = f"sk-or-zocrates-{uuid.uuid4().hex}"
    collector = _RawCollector()
    otlp = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, otlp)
    otlp_port = otlp.add_insecure_port("127.0.0.1:0")
    otlp.start()
    decisions = DecisionsServer()
    decisions.default = Reply(body=answer(0.2))
    zotero = zf.build_zotero_library(tmp_path / "Zotero", files=())
    base = free_base_port()
    env = {
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_ZOTERO_DIR": str(zotero),
        "ZOCRATES_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
        "ZOCRATES_LOG_LEVEL": "DEBUG",
        "ZOCRATES_MODEL_API_KEY": model_key,
        "OPENROUTER_API_KEY": openrouter_key,
        "ZOCRATES_DECISIONS_URL": decisions.url,
        "LITELLM_LOG": "DEBUG",
    }
    log_path = tmp_path / "stack.log"
    bodies: list[bytes] = []
    metrics: list[str] = []
    try:
        with zocrates_run(env, log=log_path):
            token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
            headers = {"Authorization": f"Bearer {token}"}
            with (
                serve_openai(responder) as model,
                serve_openai(_refusing_model) as refusing,
                httpx.Client(
                    base_url=f"http://127.0.0.1:{base}", headers=headers, timeout=60
                ) as api,
            ):

                def keep(response: httpx.Response) -> httpx.Response:
                    bodies.append(response.content)
                    return response

                changes = {
                    **model_config(model.api_base),
                    "adaptive_compaction_decision_model": "inception/mercury-decide",
                    "adaptive_compaction_retention_turns": 0,
                    "adaptive_compaction_min_turns": 1,
                    "adaptive_compaction_token_floor": 1,
                }
                assert keep(api.put("/config", json=changes)).status_code == 200
                session = keep(api.post("/sessions", json={"title": "keys"})).json()["session"]
                chat = {"session_id": session["id"], "prompt": "what do my papers say?"}
                done = keep(api.post("/chat", json=chat))
                assert done.status_code == 200 and ANSWER_PREFIX.encode() in done.content
                # The failures: a server that refuses the key, then one that is not there.
                for api_base in (refusing.api_base, "http://127.0.0.1:9/v1"):
                    keep(api.put("/config", json={"model_api_base": api_base}))
                    failed = keep(api.post("/chat", json={**chat, "prompt": "and now?"}))
                    assert b"event: error" in failed.content, failed.content[-500:]
                for path in ("/config", f"/sessions/{session['id']}", "/sessions", "/healthz"):
                    keep(api.get(path))
                keep(api.get("/sessions", headers={"Authorization": "Bearer wrong"}))
                keep(api.put("/config", json={"model_api_base": 12}))
                for service in SERVICES:
                    admin = f"http://127.0.0.1:{ports.admin_port(base, service)}"
                    metrics.append(httpx.get(f"{admin}/metrics", timeout=5).text)
                    bodies.append(httpx.get(f"{admin}/readyz", timeout=5).content)
                # Each key was really used: the servers saw it arrive.
                auth = [e.headers.get("authorization", "") for e in model.exchanges]
                assert auth and all(a == f"Bearer {model_key}" for a in auth), auth
                assert refusing.exchanges, "the refusing server was never asked"
                time.sleep(1.0)  # the post-turn compaction probe runs after the response
                assert decisions.requests, "the compactor never asked the Decisions API"
                assert decisions.requests[0].headers["Authorization"] == f"Bearer {openrouter_key}"
    finally:
        otlp.stop(grace=None)
        decisions.close()

    output = log_path.read_bytes()
    assert b"DEBUG" in output and b"LiteLLM" in output  # the chattiest level really ran
    assert collector.exports, "no spans were exported"
    places = {
        "the services' output": output,
        "exported spans": b"".join(collector.exports),
        "metrics": "".join(metrics).encode(),
        "response bodies": b"".join(bodies),
        "zocrates_config.json": (zotero / "zocrates-data" / "zocrates_config.json").read_bytes(),
        "sessions.db": (zotero / "zocrates-data" / "sessions.db").read_bytes(),
    }
    secrets = {
        "the model key": model_key,
        "the OpenRouter key": openrouter_key,
        "the gateway token": token,
    }
    leaks = [
        f"{name} in {place}"
        for place, data in places.items()
        for name, value in secrets.items()
        if value.encode() in data
    ]
    assert leaks == [], leaks
    # Not even a recognisable part of one (its last 12 characters).
    partial = [
        f"{name} (start) in {place}"
        for place, data in places.items()
        for name, value in secrets.items()
        if value[-12:].encode() in data
    ]
    assert partial == [], partial
