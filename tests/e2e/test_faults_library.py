"""SIGKILL of the agent, the sessions service, the compactor and Redis in the middle of a
library sync, of the reranker in the middle of a research turn (issue 16, "Faults"), and of the
library service mid-sync and mid-turn (issue 26). The library service and the reranker killed
mid-embedding are also in ``tests/e2e/test_embedding_resume.py``.

A sync (``POST /library/sync``, as `zocrates index` streams it, embedding phase followed) goes
through the gateway to the library service, which reads Zotero and writes the library index,
with the reranker embedding: no agent, no session, no chat lock, no compaction. So each of the
four is killed
once the sync's progress shows it part way (items indexed, not all; read back from
``GET /library/status`` after the kill), and the test proves what that means for a user:

- the sync keeps going and ends with ``done``, never an ``error``: every new paper added, every
  passage embedded, the library's counts right, with the killed process still dead;
- meanwhile a chat answers at once with a status that says what is down (503
  ``sessions_unavailable`` or ``redis_unavailable``), or, with the compactor dead, completes
  (compaction comes after the answer and fails open);
- once the process is back, a research turn on the same session answers with citations and no
  chat lock is left behind.

Each kill has a sync of its own: papers that start in the Zotero trash are restored (Zotero's
"Restore to Library"), so each sync indexes five new papers.

The reranker (the query's embedding, the cross-encoder) is killed by the model server the
moment the search subagent is first asked for its move, so the turn's search and rerank both
meet it dead: the turn still answers from the library with citations (keyword retrieval, the
retrieval order), and answers as before once the reranker is back.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from services.agent.research.agents import SEARCH_SUBAGENT
from tests.support import zotero_fixture as zf
from tests.support.fault_stack import FAST_MODELS, FaultStack
from tests.support.openai_server import Reply, serve_openai
from tests.support.processes import wait_checks
from tests.support.research_model import ANSWER_OPENING, Model, role_of
from tests.support.sse import post_stream_sync

pytestmark = [pytest.mark.timeout(300)]

FIRST = ("lme4__lmer.pdf", "brms__brms_multilevel.pdf", "sandwich__sandwich-CL.pdf")
TARGETS = ("agent", "sessions", "compactor", "redis")
PER_SYNC = 5
_OTHERS = [p.file for p in zf.read_manifest() if p.file not in FIRST and p.file != zf.TRASHED_FILE]
ADDED = {
    t: tuple(_OTHERS[i * PER_SYNC : (i + 1) * PER_SYNC])
    for i, t in enumerate((*TARGETS, "library"))
}
QUESTION = "How does lmer choose its optimizer?"
LOCK_TTL_SECONDS = 6.0
SYNC_BOUND_SECONDS = 120.0


class Responder:
    """The research model, which runs ``before_search`` (once) when the search subagent is
    first asked for its move in a turn: the turn is then in flight, its search not begun."""

    def __init__(self) -> None:
        self.model = Model()
        self.before_search: Callable[[], None] | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        hook = self.before_search
        if hook is not None and role_of(body) == SEARCH_SUBAGENT:
            self.before_search = None
            hook()
        return self.model(body)


@dataclass
class Faults:
    stack: FaultStack
    api: httpx.Client
    model: Responder
    indexed: list[str]  # the papers indexed so far


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Faults]:
    added = [f for files in ADDED.values() for f in files]
    stack = FaultStack(
        tmp_path_factory.mktemp("sync-faults"),
        files=FIRST + tuple(added),
        trashed=(*added, zf.TRASHED_FILE),
        lock_ttl_seconds=LOCK_TTL_SECONDS,
        service_env={"reranker": FAST_MODELS},
    )
    responder = Responder()
    with serve_openai(responder, keep_alive=True) as model:
        try:
            api = stack.start_indexed(model.api_base)
            # A first turn, so the figures below do not include the agent's first-chat set-up.
            warm = api.post("/sessions", json={"title": "warm-up"}).json()["session"]["id"]
            _answers(_chat(api, warm)[1])
            yield Faults(stack, api, responder, list(FIRST))
            api.close()
        finally:
            stack.stop_all()
            print(stack.log_tail())


def _part_way(progress: dict[str, Any]) -> bool:
    """Some of the sync done and some left: items indexed, or else passages embedded."""
    if progress.get("phase") == "indexing":
        return 0 < progress["items_done"] < progress["items_total"]
    embedding = progress.get("embedding") or {}
    return (
        progress.get("phase") in ("searchable", "embedding")
        and embedding.get("chunks_pending", 0) > 0
    )


class SyncStream:
    """``POST /library/sync`` read in a thread as it streams; ``midway`` is set at the first
    progress that shows the sync part way (:func:`_part_way`)."""

    def __init__(self, api: httpx.Client) -> None:
        self.api = api
        self.events: list[tuple[float, str, dict[str, Any]]] = []
        self.midway = threading.Event()
        self.status = 0
        self.thread = threading.Thread(target=self._read)
        self.thread.start()

    def _read(self) -> None:
        body = {"follow_embedding": True}
        with self.api.stream("POST", "/library/sync", json=body, timeout=None) as response:
            self.status = response.status_code
            kind = "message"
            for line in response.iter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:])
                    self.events.append((time.monotonic(), kind, data))
                    if _part_way(data):
                        self.midway.set()
        self.midway.set()  # never hang the test on a sync that ended early

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"the sync did not end within {timeout} s"


def _chat(api: httpx.Client, session_id: str) -> tuple[int, list[Any], dict[str, Any], float]:
    started = time.monotonic()
    status, events, refusal = post_stream_sync(
        api, "/chat", {"session_id": session_id, "prompt": QUESTION}
    )
    return status, events, json.loads(refusal) if refusal else {}, time.monotonic() - started


def _answers(events: list[Any]) -> dict[str, Any]:
    kind, done = events[-1]
    assert kind == "done" and done["status"] == "completed", events[-1:]
    assert ANSWER_OPENING in done["answer"] and done["citations"], done
    return dict(done)


@pytest.mark.parametrize("target", TARGETS)
def test_a_service_killed_mid_sync(faults: Faults, target: str) -> None:
    stack, api = faults.stack, faults.api
    session_id = api.post("/sessions", json={"title": f"{target} dies"}).json()["session"]["id"]
    for paper in ADDED[target]:
        zf.restore_item(stack.zotero, zf.paper_item_key(paper))

    sync = SyncStream(api)
    assert sync.midway.wait(60), "the sync never started indexing"
    killed = time.monotonic()
    stack.kill(target)
    # Killed part way: the sync was still running after the kill.
    progress = api.get("/library/status").json()
    keyword, embedding = progress["keyword_phase"], progress["embedding_phase"]
    assert sync.thread.is_alive() and (
        (keyword["running"] and keyword["items_done"] < keyword["items_total"])
        or embedding["chunks_pending"] > 0
    ), progress
    phase = "keyword" if keyword["running"] else "embedding"

    # While it is down, a chat says so at once (or, for the compactor, is not harmed).
    down_status, events, refusal, chat_seconds = _chat(api, session_id)
    if target == "compactor":
        assert down_status == 200, refusal
        _answers(events)
    else:
        assert down_status == 503, refusal
        assert refusal["code"] == f"{target}_unavailable", refusal
    assert chat_seconds < 10, chat_seconds

    sync.join(SYNC_BOUND_SECONDS)
    assert target not in stack.procs  # still dead: the sync finished without it
    kinds = [kind for _, kind, _ in sync.events]
    assert sync.status == 200 and kinds[-1] == "done" and "error" not in kinds, kinds
    done = sync.events[-1][2]
    assert done["added"] == PER_SYNC and done["failed"] == 0, done
    assert done["embedding"]["chunks_pending"] == 0, done["embedding"]
    faults.indexed += ADDED[target]
    library = api.get("/library/status").json()
    assert library["items"] == len(faults.indexed), library
    assert library["chunks"] == library["embedding_phase"]["chunks_embedded"], library
    assert library["embedding_phase"]["chunks_pending"] == 0

    stack.start(target)
    wait_checks(stack.gateway_ready, timeout=60, sessions=True, agent=True, chat_lock=True)
    status, events, refusal, _ = _chat(api, session_id)
    assert status == 200, refusal
    _answers(events)
    stack.wait_unlocked(session_id, within=LOCK_TTL_SECONDS + 2)
    session = api.get(f"/sessions/{session_id}").json()["session"]
    users = [m["text"] for m in session["messages"] if m["role"] == "user"]
    assert users == [QUESTION] * (2 if target == "compactor" else 1), users
    print(
        f"{target} killed mid-sync ({phase} phase): chat {down_status} in {chat_seconds:.2f} s "
        f"while down; sync done {sync.events[-1][0] - killed:.1f} s after the kill, "
        f"{done['added']} added, {library['chunks']} passages embedded"
    )


def test_the_reranker_killed_mid_turn(faults: Faults) -> None:
    stack, api = faults.stack, faults.api
    session_id = api.post("/sessions", json={"title": "reranker dies"}).json()["session"]["id"]
    killed: list[float] = []

    def kill_the_reranker() -> None:
        killed.append(time.monotonic())
        stack.kill("reranker")

    faults.model.before_search = kill_the_reranker
    status, events, refusal, _ = _chat(api, session_id)
    assert killed, "the turn never reached its search"
    assert status == 200, refusal
    done = _answers(events)  # from the library, without embeddings or the cross-encoder
    cited = {c["item_key"] for c in done["citations"]}
    assert cited <= {zf.paper_item_key(f) for f in faults.indexed}, cited
    answered = time.monotonic() - killed[0]
    assert answered < 30, answered

    stack.start("reranker")
    status, events, refusal, _ = _chat(api, session_id)
    assert status == 200, refusal
    _answers(events)
    stack.wait_unlocked(session_id, within=LOCK_TTL_SECONDS + 2)
    session = api.get(f"/sessions/{session_id}").json()["session"]
    assert [m["text"] for m in session["messages"] if m["role"] == "user"] == [QUESTION] * 2
    print(f"reranker killed mid-turn: the turn answered {answered:.1f} s after the kill")


def test_the_library_killed_mid_sync_resumes_at_its_restart(faults: Faults) -> None:
    """The sync's own process dies: its stream ends with an error event (never hangs), and the
    restarted library service finishes what was cut off without being asked again."""
    stack, api = faults.stack, faults.api
    for paper in ADDED["library"]:
        zf.restore_item(stack.zotero, zf.paper_item_key(paper))
    sync = SyncStream(api)
    assert sync.midway.wait(60), "the sync never started indexing"
    stack.kill("library")
    sync.join(30)
    kinds = [kind for _, kind, _ in sync.events]
    assert sync.status == 200 and kinds[-1] == "error", kinds
    assert sync.events[-1][2]["code"] == "library_unavailable", sync.events[-1]

    stack.start("library")
    faults.indexed += ADDED["library"]
    deadline = time.monotonic() + SYNC_BOUND_SECONDS
    while True:
        library = api.get("/library/status").json()
        embedding = library["embedding_phase"]
        finished = library["items"] == len(faults.indexed) and not library["syncing"]
        if finished and embedding["chunks_pending"] == 0:
            break
        assert time.monotonic() < deadline, library
        time.sleep(0.5)
    assert library["attachment_states"].get("failed", 0) == 0, library
    assert library["chunks"] == embedding["chunks_embedded"], library


def test_the_library_killed_mid_turn(faults: Faults) -> None:
    """The index's process dies as the turn's search begins: the turn ends (an answer from what
    it has, or an error event with a code) instead of hanging, and the next turn, once the
    library service is back, answers with citations."""
    stack, api = faults.stack, faults.api
    session_id = api.post("/sessions", json={"title": "library dies"}).json()["session"]["id"]
    killed: list[float] = []

    def kill_the_library() -> None:
        killed.append(time.monotonic())
        stack.kill("library")

    faults.model.before_search = kill_the_library
    status, events, refusal, _ = _chat(api, session_id)
    assert killed, "the turn never reached its search"
    assert status == 200, refusal
    kind, last = events[-1]
    assert kind in ("done", "error"), events[-1:]
    if kind == "error":
        assert last["code"], last
    else:
        assert last["status"] == "completed", last
        assert not last["citations"], last  # nothing was read: nothing can be cited
    ended = time.monotonic() - killed[0]
    assert ended < 30, ended

    stack.start("library")
    wait_checks(stack.gateway_ready, timeout=60, library=True, agent=True)
    status, events, refusal, _ = _chat(api, session_id)
    assert status == 200, refusal
    _answers(events)
    stack.wait_unlocked(session_id, within=LOCK_TTL_SECONDS + 2)
    print(f"library killed mid-turn: the turn ended ({kind}) {ended:.1f} s after the kill")
