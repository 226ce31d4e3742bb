"""Issue 4's done-criterion, as a user does it: `zocrates run` with no key on a Zotero-shaped
library, `zocrates index`, then over HTTP: a focused question streams a cited answer; a broader
one reaches a checkpoint card; the whole stack is killed (SIGKILL, no clean shutdown) and
started again; the card comes back from `GET /sessions/{id}` and granting the extension
continues the same turn to a cited answer."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx

from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import ROOT
from tests.support.sse import post_stream_sync

ZOCRATES = pathlib.Path(sys.executable).parent / "zocrates"
FILES = ("lme4__lmer.pdf", "brms__brms_multilevel.pdf", "sandwich__sandwich-CL.pdf")
FOCUSED = "How does lmer choose its optimizer, and how does brms fit the same kind of model?"
BROAD = "How does lmer choose its optimizer, and which photonic chips implement its solver?"


def _start(env: dict[str, str], log_path: pathlib.Path) -> subprocess.Popen[bytes]:
    offset = log_path.stat().st_size if log_path.exists() else 0
    log = log_path.open("ab")
    stack = subprocess.Popen(
        [str(ZOCRATES), "run"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    deadline = time.monotonic() + 180
    while "Zocrates is running" not in log_path.read_text(errors="replace")[offset:]:
        assert stack.poll() is None, log_path.read_text(errors="replace")[-4000:]
        assert time.monotonic() < deadline, "stack did not start"
        time.sleep(0.2)
    return stack


def _sse(api: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    status, events, refusal = post_stream_sync(api, path, body)
    assert status == 200, refusal
    return events


def _api(base: int, zotero_dir: pathlib.Path) -> httpx.Client:
    token = (zotero_dir / "zocrates-data" / "gateway.token").read_text().strip()
    return httpx.Client(
        base_url=f"http://127.0.0.1:{base}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=300,
    )


def _kill(stack: subprocess.Popen[bytes], sig: int) -> None:
    os.killpg(stack.pid, sig)
    stack.wait(timeout=60)


def _processes_gone(pgid: int) -> Iterator[int]:
    for _ in range(100):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
        yield pgid


def test_answer_checkpoint_kill_restart_resume(tmp_path: pathlib.Path) -> None:
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero", files=FILES)
    base = free_base_port()
    env = {**os.environ, "ZOCRATES_PORT": str(base), "ZOCRATES_ZOTERO_DIR": str(zotero_dir)}
    for key in list(env):
        if key.endswith("_API_KEY"):
            del env[key]  # no key: the offline model answers
    log_path = tmp_path / "stack.log"
    stack = _start(env, log_path)
    try:
        index = subprocess.run(
            [str(ZOCRATES), "index"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert index.returncode == 0, index.stderr
        with _api(base, zotero_dir) as api:
            session_id = api.post("/sessions", json={"title": "optimizers"}).json()["session"]["id"]
            events = _sse(api, "/chat", {"session_id": session_id, "prompt": FOCUSED})
            kinds = [k for k, _ in events]
            assert kinds[-1] == "done" and "request_input" not in kinds, kinds
            done = events[-1][1]
            assert done["status"] == "completed"
            assert sum(1 for k, d in events if k == "message" and d["partial"]) >= 3  # streamed
            assert "# Cited Sources" in done["answer"]
            cited = {c["item_key"] for c in done["citations"]}
            assert zf.paper_item_key("lme4__lmer.pdf") in cited
            assert zf.paper_item_key("brms__brms_multilevel.pdf") in cited

            events = _sse(api, "/chat", {"session_id": session_id, "prompt": BROAD})
            card = [d for k, d in events if k == "request_input"]
            assert len(card) == 1 and events[-1][1]["status"] == "paused", events[-1]
            assert any("photonic" in g for g in card[0]["payload"]["gaps"])
        pgid = stack.pid
        _kill(stack, signal.SIGKILL)  # no clean shutdown: the supervisor and its children die
        for _ in _processes_gone(pgid):
            pass

        stack = _start(env, log_path)
        with _api(base, zotero_dir) as api:
            session = api.get(f"/sessions/{session_id}").json()["session"]
            pending = session["pending_hitl"]
            assert pending["interrupt_id"] == card[0]["interrupt_id"]
            assert pending["payload"]["gaps"] == card[0]["payload"]["gaps"]
            events = _sse(
                api,
                "/chat/resume",
                {
                    "session_id": session_id,
                    "invocation_id": pending["invocation_id"],
                    "interrupt_id": pending["interrupt_id"],
                    "response": {"action": "extend_budget", "guidance": "photonic hardware"},
                },
            )
            assert {d["invocation_id"] for k, d in events if k == "message"} == {
                pending["invocation_id"]
            }
            # No passage speaks of photonic chips, so the extension leaves that gap open and
            # the second (last) checkpoint is offered: decline it.
            second = [d for k, d in events if k == "request_input"]
            assert len(second) == 1 and events[-1][1]["status"] == "paused", [k for k, _ in events]
            assert second[0]["interrupt_id"] == "interrupt_ext_2"
            assert second[0]["payload"]["extension_number"] == 2
            assert any("photonic" in g for g in second[0]["payload"]["gaps"])
            events = _sse(
                api,
                "/chat/resume",
                {
                    "session_id": session_id,
                    "invocation_id": pending["invocation_id"],
                    "interrupt_id": "interrupt_ext_2",
                    "response": {"action": "synthesize"},
                },
            )
            assert "request_input" not in [k for k, _ in events]
            done = events[-1][1]
            assert events[-1][0] == "done" and done["status"] == "completed", events[-1]
            assert zf.paper_item_key("lme4__lmer.pdf") in {c["item_key"] for c in done["citations"]}
            session = api.get(f"/sessions/{session_id}").json()["session"]
            assert session["pending_hitl"] is None
            users = [m["text"] for m in session["messages"] if m["role"] == "user"]
            assert users == [FOCUSED, BROAD]
            # A reloaded chat has the answer's citations with their checks, as the live one.
            kept = [
                r["citations"]
                for m in session["messages"]
                for r in m.get("tool_results") or []
                if r["name"] == "search_library" and r.get("citations")
            ]
            assert kept[-1] == done["citations"]
            assert all("verified" in c for c in kept[-1])
    finally:
        if stack.poll() is None:
            _kill(stack, signal.SIGINT)
