"""Issue 24's done-criterion, as a new user does it: `zocrates run`, a local llama.cpp server
(SmolLM2-135M-Instruct, a real model) set in the preferences for every role (coordinator,
search subagent, synthesizer) and the compactor's summarizer, through ``model_api_base`` with
no key. Then over HTTP:

- the preferences pane's helpers: the server's model list and a "Test model" run;
- the ARIMA question: the model cannot call tools (the probe finds it), so the fixed search
  policy searches and the model writes the answer: completed, every citation checked against
  its page, at least one on its page, the server's own token counts in ``usage``;
- a follow-up in the same chat works;
- a broad question pauses at the checkpoint and "synthesize now" answers it;
- the conversation is compacted with the model's own summary (not the extractive one);
- a server that went away gives an ``error`` event and leaves the chat usable.
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import time
from typing import Any

import httpx
import pytest

from tests.support import zotero_fixture as zf
from tests.support.local_llm import CONTEXT, MODEL, MODEL_ALIAS, llama_server
from tests.support.ports import free_base_port
from tests.support.processes import ROOT, ZOCRATES, zocrates_run
from tests.support.sse import post_stream_sync

pytestmark = pytest.mark.timeout(900)

FILES = ("forecast__JSS2008.pdf", "lme4__lmer.pdf", "sandwich__sandwich-CL.pdf")
ARIMA = "In automatic seasonal ARIMA selection, how is the number of seasonal differences chosen?"
FOLLOW_UP = "And how are the critical values obtained for seasonal periods larger than 12?"
BROAD = "How does lmer choose its optimizer, and which photonic chips implement its solver?"
EXTRACTIVE_HEADER = "Summary of the earlier conversation (extractive):"


def _turn(api: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    started = time.monotonic()
    status, events, refusal = post_stream_sync(api, path, body)
    assert status == 200, refusal
    print(f"{path} {body.get('prompt', '')[:40]!r}: {time.monotonic() - started:.1f} s")
    return events


def _done(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    kinds = [k for k, _ in events]
    print(json.dumps(events[-1][1])[:3000])
    assert kinds and kinds[-1] == "done", [d for k, d in events if k == "error"] or kinds[-3:]
    done = events[-1][1]
    assert done["status"] == "completed", done
    return done


def _checked(done: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's citations: each that quotes a sentence is checked against its page (a
    line of '# Cited Sources' quotes nothing), and at least one is on it."""
    citations = done["citations"]
    assert citations, done["answer"]
    assert all(c["verified"] in (True, False) for c in citations if c["quote"]), citations
    assert any(c["verified"] is True for c in citations), (done["answer"], citations)
    return [c for c in citations if c["verified"]]


def _real_usage(done: dict[str, Any]) -> None:
    usage = done["usage"]
    assert usage is not None and MODEL in usage["model"], usage
    assert usage["input_tokens"] > 500 and usage["output_tokens"] > 0, usage


def test_local_model_every_role(tmp_path: pathlib.Path) -> None:
    zotero = zf.build_zotero_library(tmp_path / "Zotero", files=FILES)
    base = free_base_port()
    env = {
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_ZOTERO_DIR": str(zotero),
        # A 135M model on 2 busy cores summarizes in 30-90 s (docs/local-models.md): the
        # gateway's default of 60 s would abandon the compaction on a loaded CI machine, and a
        # turn asked meanwhile would give up waiting for it (409 session_busy).
        "ZOCRATES_COMPACTION_TIMEOUT_SECONDS": "300",
        "ZOCRATES_COMPACTION_WAIT_SECONDS": "300",
    }
    forecast = zf.paper_item_key("forecast__JSS2008.pdf")
    with (
        llama_server(tmp_path / "llama.log") as api_base,
        zocrates_run(env, log=tmp_path / "stack.log"),
    ):
        token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
        with httpx.Client(
            base_url=f"http://127.0.0.1:{base}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=600,
        ) as api:
            index = subprocess.run(
                [str(ZOCRATES), "index"], cwd=ROOT, env={**os.environ, **env},
                capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert index.returncode == 0, index.stderr[-2000:]
            # The preferences pane: the server's models, then one tiny completion.
            listed = api.get("/models/local", params={"api_base": api_base})
            assert listed.status_code == 200, listed.text
            assert [m["model"] for m in listed.json()["models"]] == [MODEL]
            tested = api.post("/models/test", json={"model": MODEL, "api_base": api_base})
            assert tested.status_code == 200, tested.text
            result = tested.json()
            assert result["reply"] and result["completion_tokens"] > 0, result
            assert result["tool_calling"] is False  # llama-cpp-python's chatml: no tools
            gone = api.post(
                "/models/test", json={"model": MODEL, "api_base": "http://127.0.0.1:9/v1"}
            )
            assert gone.status_code == 503 and gone.json()["code"] == "model_server_unreachable"

            changes = {
                "coordinator_model": MODEL,
                "subagent_model": MODEL,
                "synthesizer_model": MODEL,
                "compaction_summarizer_model": MODEL,
                "model_api_base": api_base,
                "model_context_window": CONTEXT,  # llama-cpp-python's server does not say it
                "adaptive_compaction_min_turns": 2,
                "adaptive_compaction_retention_turns": 1,
                "adaptive_compaction_token_floor": 0,
                "adaptive_compaction_token_ceiling": 1,  # compact at once, without the probe
            }
            assert api.put("/config", json=changes).status_code == 200, "config refused"

            session = api.post("/sessions", json={"title": "ARIMA"}).json()["session"]["id"]
            done = _done(_turn(api, "/chat", {"session_id": session, "prompt": ARIMA}))
            on_page = _checked(done)
            assert forecast in {c["item_key"] for c in on_page}, done["citations"]
            _real_usage(done)

            done = _done(_turn(api, "/chat", {"session_id": session, "prompt": FOLLOW_UP}))
            assert forecast in {c["item_key"] for c in _checked(done)}, done["citations"]

            events = _turn(api, "/chat", {"session_id": session, "prompt": BROAD})
            cards = [d for k, d in events if k == "request_input"]
            assert len(cards) == 1 and events[-1][1]["status"] == "paused", [k for k, _ in events]
            done = _done(
                _turn(
                    api,
                    "/chat/resume",
                    {
                        "session_id": session,
                        "invocation_id": cards[0]["invocation_id"],
                        "interrupt_id": cards[0]["interrupt_id"],
                        "response": {"action": "synthesize"},
                    },
                )
            )
            assert zf.paper_item_key("lme4__lmer.pdf") in {c["item_key"] for c in _checked(done)}

            summary = _wait_compaction(zotero / "zocrates-data" / "sessions.db", session)
            assert summary.strip() and not summary.startswith(EXTRACTIVE_HEADER), summary
            # The chat goes on after the compaction.
            done = _done(_turn(api, "/chat", {"session_id": session, "prompt": FOLLOW_UP}))
            assert done["citations"]

            # The server goes away: a clear error, and nothing half-written.
            assert api.put("/config", json={"model_api_base": "http://127.0.0.1:9/v1"}).is_success
            events = _turn(api, "/chat", {"session_id": session, "prompt": ARIMA})
            errors = [d for k, d in events if k == "error"]
            assert errors and "127.0.0.1:9" in errors[0]["message"], events[-3:]
            messages = api.get(f"/sessions/{session}").json()["session"]["messages"]
            assert messages[-1]["role"] == "assistant", messages[-1]
    log = (tmp_path / "llama.log").read_text(errors="replace")
    assert MODEL_ALIAS in log or "llama" in log.lower()


def _wait_compaction(db: pathlib.Path, session: str, timeout: float = 240) -> str:
    """The newest compaction summary stored for ``session`` (the compactor runs after the
    turn's answer, so it is waited for)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT event_data FROM events WHERE session_id = ? ORDER BY timestamp",
                (session,),
            ).fetchall()
        for (data,) in reversed(rows):
            event = json.loads(data) if isinstance(data, str) else {}
            compaction = (event.get("actions") or {}).get("compaction")
            if compaction:
                parts = (compaction.get("compacted_content") or {}).get("parts") or []
                return "".join(p.get("text") or "" for p in parts)
        time.sleep(2)
    raise AssertionError("no compaction was stored")
