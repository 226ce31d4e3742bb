"""SIGKILL in the middle of a streamed turn (issue 16, "Faults"): the agent, the sessions
service, the compactor and Redis, each its own process as `zocrates run` starts them, with a
private Redis (so killing it harms nobody else): :class:`tests.support.fault_stack.FaultStack`.
The reranker mid-turn and the kills mid library sync are in ``test_faults_library.py``, the
kills while a deep-research checkpoint is written in ``test_faults_checkpoint.py``.

For each: the client hears an ``error`` event with a code (or, for the compactor, whose work
comes after the answer, the turn completes) within a bounded time; no chat lock outlives its
TTL; once the process is back the session reads back consistent (every answer after its own
question, nothing from the killed turn half-shown as an answer) and the next turn works.

Also on the same stack: the session's lock key deleted under a running turn (``lock_lost``),
and ``/register`` while a chat runs (409, nothing created).

The research roles run on a local server speaking OpenAI's wire format (the permitted
stand-in); a message marked ``[slow]`` keeps its turn in flight for a few seconds, which is
when the process is killed.
"""

from __future__ import annotations

import pathlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.fault_stack import FaultStack
from tests.support.load import ANSWER_PREFIX, SLOW, model_config, responder
from tests.support.openai_server import serve_openai
from tests.support.processes import wait_checks
from tests.support.sse import post_stream_sync

pytestmark = [pytest.mark.timeout(400)]

LOCK_TTL_SECONDS = 6.0
STREAM_BOUND_SECONDS = 45.0  # the killed turn must end (error or done) within this


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FaultStack, httpx.Client]]:
    s = FaultStack(tmp_path_factory.mktemp("faults"), lock_ttl_seconds=LOCK_TTL_SECONDS)
    with serve_openai(responder, keep_alive=True) as model:
        try:
            s.start_all()
            api = s.api()
            assert api.put("/config", json=model_config(model.api_base)).status_code == 200
            yield s, api
            api.close()
        finally:
            s.stop_all()
            print(s.log_tail())


def _turn(api: httpx.Client, session_id: str, prompt: str) -> tuple[int, list[Any], bytes]:
    return post_stream_sync(api, "/chat", {"session_id": session_id, "prompt": prompt})


def _killed_mid_turn(
    stack: FaultStack, api: httpx.Client, session_id: str, target: str
) -> tuple[int, list[Any], float]:
    """A slow turn; ``target`` SIGKILLed a second into it. (status, events, seconds)."""
    out: dict[str, Any] = {}

    # Three seconds a marker; a turn that must outlive its lock's lease (Redis gone, nothing
    # can renew it) takes longer than the TTL.
    slow = SLOW * (3 if target == "redis" else 1)

    def run() -> None:
        started = time.monotonic()
        status, events, _ = _turn(api, session_id, f"{slow} what happens if {target} dies?")
        out.update(status=status, events=events, seconds=time.monotonic() - started)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(1.0)  # the turn is in flight: the model is still writing
    stack.kill(target)
    thread.join(STREAM_BOUND_SECONDS)
    assert not thread.is_alive(), f"the turn did not end within {STREAM_BOUND_SECONDS} s"
    return out["status"], out["events"], out["seconds"]


def _consistent(api: httpx.Client, session_id: str) -> list[tuple[str, str]]:
    """The session as the plugin reads it: every answer right after its own question."""
    response = api.get(f"/sessions/{session_id}")
    assert response.status_code == 200, response.text
    messages = response.json()["session"]["messages"]
    rows = [(m["role"], m.get("text") or "") for m in messages]
    for index, (role, text) in enumerate(rows):
        if role != "user" and text.startswith(ANSWER_PREFIX):
            question = next(t for r, t in reversed(rows[:index]) if r == "user")
            assert text == ANSWER_PREFIX + question, rows
    return rows


@pytest.mark.parametrize("target", ["agent", "sessions", "compactor", "redis"])
def test_a_service_killed_mid_turn(stack: tuple[FaultStack, httpx.Client], target: str) -> None:
    s, api = stack
    session_id = api.post("/sessions", json={"title": f"{target} dies"}).json()["session"]["id"]
    status, events, _ = _turn(api, session_id, "first question")
    assert status == 200 and events[-1][1]["answer"] == ANSWER_PREFIX + "first question"

    status, events, seconds = _killed_mid_turn(s, api, session_id, target)
    kinds = [k for k, _ in events]
    print(f"{target} killed: status {status}, events {kinds}, {seconds:.1f} s")
    if target == "compactor":
        # Compaction comes after the answer: the turn completes, the lock is let go.
        assert status == 200 and events[-1][0] == "done", kinds
        assert events[-1][1]["status"] == "completed"
    elif target == "redis":
        # The lease ran out with nobody able to renew it: the turn is stopped, never finished
        # by a holder that may no longer hold the session.
        assert status == 200 and events and events[-1][0] == "error", kinds
        assert events[-1][1]["code"] == "lock_lost", events[-1]
    else:
        assert status == 200 and events and events[-1][0] == "error", kinds
        assert events[-1][1]["code"], events[-1]

    # Back up: the lock store first (nothing to restore: it held only leases).
    s.start(target)
    wait_checks(s.gateway_ready, timeout=60, sessions=True, agent=True, chat_lock=True)
    deadline = time.monotonic() + LOCK_TTL_SECONDS + 2
    while session_id in s.locked():
        assert time.monotonic() < deadline, "the chat lock outlived its TTL"
        time.sleep(0.2)

    rows = _consistent(api, session_id)
    assert rows[:2] == [("user", "first question"), ("assistant", ANSWER_PREFIX + "first question")]
    status, events, error = _turn(api, session_id, "after the restart")
    assert status == 200, error
    assert (
        events[-1][0] == "done" and events[-1][1]["answer"] == ANSWER_PREFIX + "after the restart"
    )
    rows = _consistent(api, session_id)
    assert rows[-2:] == [
        ("user", "after the restart"),
        ("assistant", ANSWER_PREFIX + "after the restart"),
    ]
    assert rows.count(("user", "first question")) == 1  # nothing written twice


def _slow_turn_in_background(
    api: httpx.Client, session_id: str, prompt: str
) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        status, events, _ = _turn(api, session_id, prompt)
        out.update(status=status, events=events)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(1.0)
    return thread, out


def test_a_lock_deleted_under_a_running_turn_stops_it(
    stack: tuple[FaultStack, httpx.Client],
) -> None:
    """Someone deletes the session's lock key mid-turn (an operator, a flushed Redis): the
    next renewal finds it gone, and the turn ends with ``lock_lost`` instead of running on
    beside whoever takes the session next."""
    import redis

    s, api = stack
    session_id = api.post("/sessions", json={"title": "lock deleted"}).json()["session"]["id"]
    thread, out = _slow_turn_in_background(api, session_id, f"{SLOW * 2} a long turn")
    raw = redis.Redis.from_url(s.redis_url)
    deleted = [k for k in raw.scan_iter(f"{s.prefix}*") if session_id.encode() in k]
    assert deleted and raw.delete(*deleted) >= 1, deleted
    thread.join(STREAM_BOUND_SECONDS)
    assert not thread.is_alive()
    kinds = [k for k, _ in out["events"]]
    assert out["status"] == 200 and kinds[-1] == "error", kinds
    assert out["events"][-1][1]["code"] == "lock_lost"
    assert session_id not in s.locked()
    status, events, _ = _turn(api, session_id, "after the lock was lost")
    assert status == 200 and events[-1][1]["answer"] == ANSWER_PREFIX + "after the lock was lost"


def test_register_while_a_chat_runs_is_409(
    stack: tuple[FaultStack, httpx.Client], tmp_path: pathlib.Path
) -> None:
    _stack, api = stack
    other = tmp_path / "OtherZotero"
    other.mkdir()
    (other / "zotero.sqlite").write_bytes(b"")
    session_id = api.post("/sessions", json={"title": "register"}).json()["session"]["id"]
    thread, out = _slow_turn_in_background(api, session_id, f"{SLOW} hold on")
    refused = api.post("/register", json={"zotero_data_dir": str(other)})
    thread.join(STREAM_BOUND_SECONDS)
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "chat_in_progress"
    assert not (other / "zocrates-data").exists(), "a refused /register created its folder"
    assert out["status"] == 200 and out["events"][-1][0] == "done"  # the chat was not harmed
