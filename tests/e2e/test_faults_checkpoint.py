"""SIGKILL while a deep-research checkpoint is being written (issue 16, "Faults": "a crash
during a checkpoint leaves nothing half-written").

A research turn that pauses writes its checkpoint to sessions.db through the sessions service
in two appends, in this order: the paused turn's snapshot (``hitl_snapshot`` in the session's
state: evidence, ceilings, what the resume needs) and the checkpoint itself (the
``adk_request_input`` call, the card the plugin draws). The agent reaches the sessions service
through a relay (:class:`tests.support.wire_tap.WireTap`) that recognises the second append on
the wire and holds it, so each kill lands at an exact point of the write, every run:

- ``agent`` / ``before``: the agent dies with the checkpoint's append still in its hands (the
  snapshot is stored, the call never reaches the sessions service);
- ``sessions`` / ``before``: the sessions service dies holding the append, inside its write
  transaction: the test holds sessions.db's write lock meanwhile, so the append is delivered
  and cannot commit;
- ``agent`` / ``after`` and ``sessions`` / ``after``: the append is committed (read back from
  sessions.db) and the reply held back: the writer dies before the agent hears it was stored.

Each time: the client's stream ends with an ``error`` event within a bounded time, no chat lock
outlives its TTL, and once the process is back the session is in one of two whole states,
never between. Committed: ``GET /sessions/{id}`` shows the whole card (``pending_hitl`` with
its interrupt, invocation, message, gaps) and "synthesize now" answers from the stored
snapshot. Not committed: no card, no answer, the question once, and the next question reaches
its own checkpoint and answers (the dead turn's snapshot is never mistaken for the new one's).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from services.common import ports
from tests.support.fault_stack import FAST_MODELS, FaultStack
from tests.support.openai_server import serve_openai
from tests.support.processes import wait_checks
from tests.support.research_model import ANSWER_OPENING, MISSING, Model
from tests.support.sse import post_stream_sync
from tests.support.wire_tap import WireTap

pytestmark = [pytest.mark.timeout(300)]

FILES = ("lme4__lmer.pdf", "brms__brms_multilevel.pdf", "sandwich__sandwich-CL.pdf")
QUESTION = "How does lmer choose its optimizer?"
NEXT_QUESTION = "Which optimizer does lmer use by default?"
LOCK_TTL_SECONDS = 6.0
STREAM_BOUND_SECONDS = 30.0  # the killed turn must end (with its error) within this
CHECKPOINT_CALL = b"adk_request_input"  # only the checkpoint's append carries it to sessions


@dataclass
class Faults:
    stack: FaultStack
    api: httpx.Client
    tap: WireTap


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Faults]:
    stack = FaultStack(
        tmp_path_factory.mktemp("checkpoint-faults"),
        files=FILES,
        lock_ttl_seconds=LOCK_TTL_SECONDS,
        service_env={"reranker": FAST_MODELS},
    )
    tap = WireTap(ports.service_port(stack.base, "sessions"))
    tap.start()
    stack.service_env["agent"] = {"ZOCRATES_SESSIONS_ADDR": f"127.0.0.1:{tap.port}"}
    with serve_openai(Model(extend=True), keep_alive=True) as model:
        try:
            api = stack.start_indexed(model.api_base)
            yield Faults(stack, api, tap)
            api.close()
        finally:
            stack.stop_all()
            tap.close()
            print(stack.log_tail())


def _turn(api: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    status, events, refusal = post_stream_sync(api, path, body)
    assert status == 200, refusal
    return events


def _in_background(api: httpx.Client, session_id: str) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        out["status"], out["events"], _ = post_stream_sync(
            api, "/chat", {"session_id": session_id, "prompt": QUESTION}
        )
        out["ended"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@contextlib.contextmanager
def _write_locked(db: Any) -> Iterator[None]:
    """sessions.db's write lock (SQLite's RESERVED lock), held from another process's view:
    every other writer waits in SQLite's busy handler until it is let go (rolled back)."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def _stored(stack: FaultStack, session_id: str) -> tuple[int, dict[str, Any] | None]:
    """What sessions.db holds, read with SQLite itself: the session's checkpoint calls, and
    its paused-turn snapshot."""
    with contextlib.closing(sqlite3.connect(stack.sessions_db, timeout=10)) as conn:
        (calls,) = conn.execute(
            "SELECT count(*) FROM events WHERE session_id = ? AND event_data LIKE ?",
            (session_id, f"%{CHECKPOINT_CALL.decode()}%"),
        ).fetchone()
        (state,) = conn.execute("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
    snapshot = json.loads(state).get("hitl_snapshot")
    return int(calls), snapshot


def _wait_stored(stack: FaultStack, session_id: str, *, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while _stored(stack, session_id)[0] == 0:
        assert time.monotonic() < deadline, "the checkpoint's append never committed"
        time.sleep(0.01)


def _synthesize(api: httpx.Client, session_id: str, pending: dict[str, Any]) -> dict[str, Any]:
    events = _turn(
        api,
        "/chat/resume",
        {
            "session_id": session_id,
            "invocation_id": pending["invocation_id"],
            "interrupt_id": pending["interrupt_id"],
            "response": {"action": "synthesize"},
        },
    )
    kind, done = events[-1]
    assert kind == "done" and done["status"] == "completed", events[-1]
    assert ANSWER_OPENING in done["answer"] and done["citations"], done
    return dict(done)


def _whole_card(pending: dict[str, Any] | None) -> dict[str, Any]:
    assert pending is not None, "no checkpoint card"
    assert pending["interrupt_id"] == "interrupt_ext_1" and pending["invocation_id"], pending
    assert pending["message"] and MISSING in pending["payload"]["gaps"], pending
    return pending


CASES = [("agent", "before"), ("sessions", "before"), ("agent", "after"), ("sessions", "after")]


@pytest.mark.parametrize(("target", "moment"), CASES, ids=[f"{t}-{m}" for t, m in CASES])
def test_killed_while_the_checkpoint_is_written(faults: Faults, target: str, moment: str) -> None:
    stack, api, tap = faults.stack, faults.api, faults.tap
    session_id = api.post("/sessions", json={"title": f"{target} {moment}"}).json()["session"]["id"]
    hit = tap.arm(CHECKPOINT_CALL, hold_request=moment == "before", hold_replies=moment == "after")
    thread, out = _in_background(api, session_id)
    try:
        assert hit.seen.wait(60), "the turn never reached its checkpoint"
        # The snapshot's append precedes the checkpoint's and was answered before it was sent.
        calls, snapshot = _stored(stack, session_id)
        assert snapshot is not None and (calls == 0 or moment == "after"), (calls, snapshot)
        if moment == "before" and target == "agent":
            killed = time.monotonic()
            stack.kill("agent")
            tap.release(deliver=False)
        elif moment == "before":
            with _write_locked(stack.sessions_db):
                tap.release()
                assert hit.delivered.wait(10)
                # Delivered and stuck: the append cannot commit while the lock is held.
                thread.join(1.0)
                assert thread.is_alive(), out
                killed = time.monotonic()
                stack.kill("sessions")
        else:
            assert hit.delivered.wait(10)
            _wait_stored(stack, session_id)  # committed; its reply is held on the wire
            killed = time.monotonic()
            stack.kill(target)
        thread.join(STREAM_BOUND_SECONDS)
        assert not thread.is_alive(), f"the turn did not end within {STREAM_BOUND_SECONDS} s"
    finally:
        tap.disarm()
    kinds = [k for k, _ in out["events"]]
    assert out["status"] == 200 and kinds[-1] == "error", kinds
    assert "request_input" not in kinds and "done" not in kinds, kinds
    code = out["events"][-1][1]["code"]
    assert code == f"{target}_unavailable", out["events"][-1]
    reported = out["ended"] - killed

    stack.start(target)
    wait_checks(stack.gateway_ready, timeout=60, sessions=True, agent=True, chat_lock=True)
    unlocked = stack.wait_unlocked(session_id, within=LOCK_TTL_SECONDS + 2)

    calls, snapshot = _stored(stack, session_id)
    assert snapshot is not None
    session = api.get(f"/sessions/{session_id}").json()["session"]
    users = [m["text"] for m in session["messages"] if m["role"] == "user"]
    assert users == [QUESTION], users
    answers = [m for m in session["messages"] if ANSWER_OPENING in (m.get("text") or "")]
    assert not answers, "an answer of the killed turn"
    if moment == "after":
        # Committed: the whole card, and the paused turn goes on from its stored snapshot.
        assert calls == 1
        pending = _whole_card(session["pending_hitl"])
        assert pending["invocation_id"] == snapshot["invocation_id"]
        _synthesize(api, session_id, pending)
    else:
        # Not committed: no card (nothing waits), and the next question works.
        assert calls == 0 and session["pending_hitl"] is None, session["pending_hitl"]
        events = _turn(api, "/chat", {"session_id": session_id, "prompt": NEXT_QUESTION})
        cards = [d for k, d in events if k == "request_input"]
        assert len(cards) == 1 and events[-1][1]["status"] == "paused", events[-1]
        pending = _whole_card(api.get(f"/sessions/{session_id}").json()["session"]["pending_hitl"])
        assert pending["invocation_id"] != snapshot["invocation_id"]  # its own, not the dead one
        _synthesize(api, session_id, pending)
        users = [QUESTION, NEXT_QUESTION]
    session = api.get(f"/sessions/{session_id}").json()["session"]
    assert session["pending_hitl"] is None
    assert [m["text"] for m in session["messages"] if m["role"] == "user"] == users
    assert _stored(stack, session_id)[1] is None  # the finished turn tore its snapshot down
    print(
        f"{target} killed {moment} the checkpoint's commit: {code} {reported:.2f} s after the "
        f"kill; lock gone {unlocked:.1f} s after the restart"
    )
