"""A real Arize Phoenix receives a research turn and shows the span tree of the design's
section 8.1, with OpenInference kinds.

Phoenix runs from its own venv (``requirements/phoenix.txt``; its pins conflict with ours) on
free ports. ``zocrates run`` is started *without* ``ZOCRATES_OTLP_ENDPOINT``: each service finds
Phoenix's collector at its default address (127.0.0.1, ``PHOENIX_GRPC_PORT``) by itself. A broad
question pauses at checkpoint 0, "synthesize now" resumes it into the rerank and the answer, and
the spans are read back with Phoenix's own client (``arize-phoenix-client``, run from that venv).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import ROOT, ZOCRATES, zocrates_run

pytestmark = pytest.mark.timeout(900)

PHOENIX_VENV = pathlib.Path(os.environ.get("ZOCRATES_PHOENIX_VENV") or ROOT / ".venv-phoenix")
CREATE_VENV = (
    "python3.11 -m venv .venv-phoenix && .venv-phoenix/bin/pip install -r requirements/phoenix.txt"
)
BROAD = (
    "How does lmer choose its optimizer, and how do quantum annealers schedule their "
    "qubit couplers?"
)
PAUSED_TRACE = "6bf92f3577b34da6a3ce929d0e0e4738"
RESUMED_TRACE = "7bf92f3577b34da6a3ce929d0e0e4739"

# Run by the Phoenix venv's Python: every span of the given traces, as JSON on stdout.
_READ_SPANS = """
import json, sys
from phoenix.client import Client
client = Client(base_url=sys.argv[1])
spans = client.spans.get_spans(project_identifier="default", trace_ids=sys.argv[2:], limit=5000)
print(json.dumps(spans, default=str))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _phoenix_bin() -> pathlib.Path:
    phoenix = PHOENIX_VENV / "bin" / "phoenix"
    if not phoenix.exists():
        pytest.fail(
            f"Phoenix's venv is missing ({PHOENIX_VENV}): create it from the repository root "
            f"with `{CREATE_VENV}` (or point ZOCRATES_PHOENIX_VENV at one)."
        )
    return phoenix


@contextlib.contextmanager
def running_phoenix(work: pathlib.Path) -> Iterator[tuple[str, int]]:
    """``phoenix serve`` on free ports with its data in ``work``: (UI/API URL, gRPC port)."""
    http_port, grpc_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    work.mkdir(parents=True, exist_ok=True)
    log = work / "phoenix.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [str(_phoenix_bin()), "serve"], env=env, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"Phoenix did not start; see {log}"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            time.sleep(0.5)
        yield url, grpc_port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _read_spans(url: str, *trace_ids: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(PHOENIX_VENV / "bin" / "python"), "-c", _READ_SPANS, url, *trace_ids],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout))


def _sse(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in response.iter_lines() if line[:5] == "data:"]


class Tree:
    """Spans of one trace as Phoenix returns them, navigable by name and parent."""

    def __init__(self, spans: list[dict[str, Any]]) -> None:
        self.spans = spans
        self.by_id = {s["context"]["span_id"]: s for s in spans}

    def named(self, name: str) -> list[dict[str, Any]]:
        return [s for s in self.spans if s["name"] == name]

    def one(self, name: str) -> dict[str, Any]:
        found = self.named(name)
        assert len(found) == 1, (name, sorted(s["name"] for s in self.spans))
        return found[0]

    def parent(self, span: dict[str, Any]) -> dict[str, Any]:
        return self.by_id[span["parent_id"]]

    def children(self, span: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for s in self.spans if s.get("parent_id") == span["context"]["span_id"]]

    def ancestors(self, span: dict[str, Any]) -> list[str]:
        names = []
        while span.get("parent_id") in self.by_id:
            span = self.parent(span)
            names.append(span["name"])
        return names


def _label(span: dict[str, Any]) -> Any:
    return (span.get("attributes") or {}).get("zocrates.span.kind")


def test_phoenix_shows_a_research_turn_as_the_span_tree(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = time.monotonic()
    _phoenix_bin()  # fail at once, before anything starts, when the venv is missing
    monkeypatch.delenv("ZOCRATES_OTLP_ENDPOINT", raising=False)  # Phoenix is to be found
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero", files=["lme4__lmer.pdf"])
    with running_phoenix(tmp_path / "phoenix") as (phoenix_url, grpc_port):
        base = free_base_port()
        env = {
            "ZOCRATES_PORT": str(base),
            "ZOCRATES_ZOTERO_DIR": str(zotero_dir),
            "PHOENIX_GRPC_PORT": str(grpc_port),
        }
        log_path = tmp_path / "stack.log"
        with zocrates_run(env, log=log_path):
            index = subprocess.run(
                [str(ZOCRATES), "index"], cwd=ROOT, env={**os.environ, **env},
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert index.returncode == 0, index.stderr
            token = (zotero_dir / "zocrates-data" / "gateway.token").read_text().strip()
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(
                base_url=f"http://127.0.0.1:{base}", headers=headers, timeout=300
            ) as api:
                session_id = api.post("/sessions", json={"title": "traced"}).json()["session"]["id"]
                paused_headers = {
                    **headers,
                    "traceparent": f"00-{PAUSED_TRACE}-00f067aa0ba902b7-01",
                }
                with api.stream(
                    "POST",
                    "/chat",
                    json={"session_id": session_id, "prompt": BROAD},
                    headers=paused_headers,
                ) as response:
                    assert response.status_code == 200
                    data = _sse(response)
                assert data[-1]["status"] == "paused", data[-1]
                pending = next(d for d in data if d.get("interrupt_id"))
                resumed_headers = {
                    **headers,
                    "traceparent": f"00-{RESUMED_TRACE}-00f067aa0ba902b7-01",
                }
                body = {
                    "session_id": session_id,
                    "invocation_id": pending["invocation_id"],
                    "interrupt_id": pending["interrupt_id"],
                    "response": {"action": "synthesize"},
                }
                with api.stream(
                    "POST", "/chat/resume", json=body, headers=resumed_headers
                ) as response:
                    assert response.status_code == 200
                    data = _sse(response)
                assert data[-1]["status"] == "completed", data[-1]
        assert "found Phoenix's collector" in log_path.read_text(errors="replace")
        # The services flushed on the way out; Phoenix ingests asynchronously.
        deadline = time.monotonic() + 60
        while True:
            spans = _read_spans(phoenix_url, PAUSED_TRACE, RESUMED_TRACE)
            names = {s["name"] for s in spans}
            if {"checkpoint_0", "rerank_evidence"} <= names or time.monotonic() > deadline:
                break
            time.sleep(1)
    paused = Tree([s for s in spans if s["context"]["trace_id"] == PAUSED_TRACE])
    resumed = Tree([s for s in spans if s["context"]["trace_id"] == RESUMED_TRACE])

    # POST /chat -> coordinator [AGENT] -> ... -> search_library_pipeline -> checkpoint_0.
    assert paused.named("HTTP POST /chat"), sorted(s["name"] for s in paused.spans)
    coordinator = paused.one("invoke_agent coordinator")
    assert coordinator["span_kind"] == "AGENT"
    assert paused.one("execute_tool search_library")["span_kind"] == "TOOL"
    pipeline = paused.one("invoke_node search_library_pipeline")
    assert pipeline["span_kind"] == "CHAIN"
    assert "invoke_agent coordinator" in paused.ancestors(pipeline)
    assert "HTTP POST /chat" in paused.ancestors(pipeline)  # one trace from the gateway down
    subagent = paused.one("invoke_agent search_subagent")
    assert subagent["span_kind"] == "AGENT" and paused.parent(subagent) is pipeline
    model_calls = [s for s in paused.children(subagent) if s["name"].startswith("generate_content")]
    assert model_calls and {s["span_kind"] for s in model_calls} == {"LLM"}
    searches = paused.named("execute_tool search_corpus")
    assert searches and all(paused.parent(s) is subagent for s in searches)
    assert {s["span_kind"] for s in searches} == {"TOOL"}
    checkpoint = paused.one("checkpoint_0")
    assert checkpoint["span_kind"] == "CHAIN" and _label(checkpoint) == "WORKFLOW"
    assert paused.parent(checkpoint) is pipeline
    assert checkpoint["status_code"] != "ERROR"  # a pause is not a failure
    assert "invoke_node search_budget_checkpoint" in {
        s["name"] for s in paused.children(checkpoint)
    }

    # Resumed: the pipeline reranks (the reranker's RPC under it), then the synthesizer writes.
    pipeline = resumed.one("invoke_node search_library_pipeline")
    rerank = resumed.one("rerank_evidence")
    assert rerank["span_kind"] == "CHAIN" and _label(rerank) == "TASK"
    assert resumed.parent(rerank) is pipeline
    attributes = rerank["attributes"]
    assert attributes["zocrates.rerank.passages"] >= 1
    assert attributes["zocrates.rerank.fallback"] is False
    rpcs = [s for s in resumed.children(rerank) if s["name"] == "reranker/Rerank"]
    assert rpcs and {s["span_kind"] for s in rpcs} == {"RERANKER"}
    synthesizer = resumed.one("invoke_agent synthesizer")
    assert synthesizer["span_kind"] == "AGENT" and resumed.parent(synthesizer) is pipeline
    assert synthesizer["start_time"] >= rerank["end_time"]
    # Model calls carry their messages, consolidated into one readable input per call.
    writes = [s for s in resumed.children(synthesizer) if s["name"].startswith("generate_content")]
    assert writes and all(s["span_kind"] == "LLM" for s in writes)
    for write in writes:
        assert str(write["attributes"].get("input.value", "")).startswith("[user] "), write
    # Every span has a kind Phoenix knows.
    unknown = [s["name"] for s in paused.spans + resumed.spans if s["span_kind"] == "UNKNOWN"]
    assert not unknown, unknown
    print(f"phoenix e2e: {len(spans)} spans, {time.monotonic() - started:.0f} s")
