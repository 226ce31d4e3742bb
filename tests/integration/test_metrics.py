"""The Prometheus metrics of docs/operations.md, scraped over HTTP from every service's admin
port while the real services do real work: a library index of real PDFs, a research turn that
pauses at checkpoints (granted, then "synthesize now"), a busy session and a client that goes
away, a compaction, a rerank and a maintenance run. Each figure must move as the work says.

Every service runs in this one process, so they share one registry and each admin port
serves the same families; each port is still scraped, as Prometheus would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before anything imports litellm

import httpx
import pytest
import pytest_asyncio
from google.adk.events.event import Event
from prometheus_client.parser import text_string_to_metric_families

from services.agent.research.runtime import API_KEY_ENV
from services.common.app_config import ConfigStore
from services.compactor.client import CompactorClient
from services.library.client import LibraryClient
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.openai_server import CAPABLE_MODEL, serve_openai
from tests.support.research_model import Model, role_of
from tests.support.sse import events, post_stream
from tests.support.stack import (
    running_agent,
    running_compactor,
    running_gateway,
    running_indexed_stack,
    running_library,
    running_reranker,
    running_sessions,
)
from tests.unit.compactor.dialogues import DIALOGUES
from tests.unit.compactor.session_events import SessionEvents

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(900),
    # LiteLLM's own TypedDicts and model_fields access (as in test_research_litellm).
    pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

APP, USER = "zocrates", "local"
FILES = ("lme4__lmer.pdf", "sandwich__sandwich.pdf", "brms__brms_overview.pdf")
# The second aspect is in none of the papers: the turn stops at a checkpoint.
BROAD = (
    "How does lmer choose its optimizer, and how do quantum annealers schedule their "
    "qubit couplers?"
)
FOCUSED = "How does lmer choose its optimizer?"
# Every role on its own remote model, as the preferences pane sets them.
MODELS = {
    "coordinator": "openai/coordinator-llm",
    "search_subagent": "openai/subagent-llm",
    "synthesizer": "openai/synthesizer-llm",
}
ROLE_KEYS = {
    "coordinator": "coordinator",
    "subagent": "search_subagent",
    "synthesizer": "synthesizer",
}

Scrape = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Scrape:
    out: Scrape = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(scrape: Scrape, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels`` (0 if none)."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in scrape.items() if n == name and wanted <= set(ls))


class Stack:
    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        self.zotero = root / "zotero"
        self.admin_ports: dict[str, int] = {}
        self.addresses: dict[str, str] = {}
        self.http: httpx.AsyncClient
        self.admin = httpx.AsyncClient(timeout=30)
        self.reranker: Any = None

    @contextlib.contextmanager
    def turns_held(self) -> Any:
        """Research turns held in flight: the reranker's one inference thread runs a job that
        waits for the test, so a turn's scoring queues behind it (a fast turn, or one whose
        scores the reranker kept, would otherwise end before the test's next step)."""
        held = threading.Event()
        self.reranker.service._executor.submit(held.wait, 60)
        try:
            yield
        finally:
            held.set()

    async def scrape(self, service: str) -> Scrape:
        response = await self.admin.get(f"http://127.0.0.1:{self.admin_ports[service]}/metrics")
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/plain")
        return parse(response.text)

    async def scrape_all(self) -> dict[str, Scrape]:
        return {service: await self.scrape(service) for service in self.admin_ports}

    async def chat(self, session_id: str, prompt: str) -> Any:
        return await post_stream(self.http, "/chat", {"session_id": session_id, "prompt": prompt})

    async def resume(self, session_id: str, pending: dict[str, Any], action: str) -> Any:
        return await post_stream(
            self.http,
            "/chat/resume",
            {
                "session_id": session_id,
                "invocation_id": pending["invocation_id"],
                "interrupt_id": pending["interrupt_id"],
                "response": {"action": action},
            },
        )

    async def new_session(self) -> str:
        response = await self.http.post("/sessions", json={"title": "Metrics"})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["id"])

    async def until_idle(self, service: str = "gateway") -> Scrape:
        """The scrape once no chat holds a lock (``finish`` runs after the body ends)."""
        for _ in range(300):
            scrape = await self.scrape(service)
            if value(scrape, "zocrates_gateway_active_chats") == 0:
                return scrape
            await asyncio.sleep(0.1)
        pytest.fail("zocrates_gateway_active_chats never went back to 0")


class Run:
    """The scrapes before and after each step of the scenario, for the tests to compare."""

    def __init__(self) -> None:
        self.start: dict[str, Scrape] = {}
        self.after_sync: Scrape = {}
        self.after_turn: Scrape = {}
        self.during_turn: Scrape = {}
        self.after_busy: Scrape = {}
        self.after_compaction: Scrape = {}
        self.after_rerank: Scrape = {}
        self.after_maintenance: Scrape = {}
        self.scrapes: dict[str, Scrape] = {}
        self.sync: dict[str, Any] = {}
        self.kinds: list[list[str]] = []
        self.compactions: list[dict[str, Any]] = []
        self.busy_status = 0


def _pivot_dialogue(tokens: int) -> list[Event]:
    dialogue = next(d for d in DIALOGUES if d.label == "compress" and len(d.turns) >= 4)
    s = SessionEvents()
    for question, reply in dialogue.turns:
        s.chat_turn(question, reply, prompt_tokens=tokens)
    return s.events


def _one(evs: list[tuple[str, dict[str, Any]]], kind: str) -> dict[str, Any]:
    found = [d for k, d in evs if k == kind]
    assert len(found) == 1, [k for k, _ in evs]
    return found[0]


@contextlib.asynccontextmanager
async def _stack(root: pathlib.Path, redis_url: str) -> AsyncIterator[Stack]:
    zf.build_zotero_library(root / "zotero", files=FILES)
    s = Stack(root)
    async with contextlib.AsyncExitStack() as exit_stack:
        reranker = await exit_stack.enter_async_context(running_reranker())
        s.reranker = reranker
        sessions = await exit_stack.enter_async_context(running_sessions(s.zotero))
        library = await exit_stack.enter_async_context(
            running_library(s.zotero, reranker_addr=reranker.runtime.address)
        )
        agent = await exit_stack.enter_async_context(
            running_agent(
                s.zotero,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
                library_addr=library.runtime.address,
            )
        )
        compactor = await exit_stack.enter_async_context(
            running_compactor(
                s.zotero,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
            )
        )
        gateway = await exit_stack.enter_async_context(
            running_gateway(
                s.zotero,
                sessions.runtime.address,
                agent_addr=agent.runtime.address,
                library_addr=library.runtime.address,
                compactor_addr=compactor.runtime.address,
                redis_url=redis_url,
                redis_key_prefix=f"zocrates-metrics-{uuid.uuid4().hex}",
            )
        )
        await gateway.app.state.gateway.startup_done.wait()
        s.admin_ports = {
            "reranker": reranker.runtime.admin.port,
            "sessions": sessions.runtime.admin.port,
            "library": library.runtime.admin.port,
            "agent": agent.runtime.admin.port,
            "compactor": compactor.runtime.admin.port,
            "gateway": gateway.admin.port,
        }
        s.addresses = {
            "reranker": reranker.runtime.address,
            "sessions": sessions.runtime.address,
            "library": library.runtime.address,
            "agent": agent.runtime.address,
            "compactor": compactor.runtime.address,
        }
        token = (s.zotero / "zocrates-data" / "gateway.token").read_text().strip()
        s.http = httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=300
        )
        exit_stack.push_async_callback(s.http.aclose)
        exit_stack.push_async_callback(s.admin.aclose)
        yield s


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def run(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[Run]:
    root = tmp_path_factory.mktemp("metrics")
    r = Run()
    async with _stack(root, redis_url) as s:
        addresses = s.addresses
        r.start = await s.scrape_all()

        # A library index of real PDFs, until every chunk has its vector.
        library = LibraryClient(addresses["library"])
        try:
            async for progress in library.sync(follow_embedding=True):
                r.sync = progress
        finally:
            await library.close()
        r.after_sync = await s.scrape("library")

        # A research turn: a checkpoint granted, a second one answered "synthesize now".
        session_id = await s.new_session()
        status, evs, error = await s.chat(session_id, BROAD)
        assert status == 200, error
        r.kinds.append([k for k, _ in evs])
        first = _one(evs, "request_input")
        status, evs, error = await s.resume(session_id, first, "extend_budget")
        assert status == 200, error
        r.kinds.append([k for k, _ in evs])
        second = _one(evs, "request_input")
        status, evs, error = await s.resume(session_id, second, "synthesize")
        assert status == 200, error
        r.kinds.append([k for k, _ in evs])
        assert _one(evs, "done")["status"] == "completed"
        r.after_turn = await s.until_idle()

        # A busy session (409 while a turn streams; the turn then completes), then a client
        # that goes away as soon as its turn has started.
        busy_id = await s.new_session()
        async with s.http.stream(
            "POST", "/chat", json={"session_id": busy_id, "prompt": FOCUSED}
        ) as response:
            assert response.status_code == 200
            stream = events(response)
            with s.turns_held():
                await anext(stream)
                r.during_turn = await s.scrape("gateway")
                r.busy_status, _, _ = await s.chat(busy_id, "A second question at once?")
            rest = [kind async for kind, _ in stream]
            assert rest[-1] == "done", rest
        gone_id = await s.new_session()
        with s.turns_held():
            async with s.http.stream(
                "POST", "/chat", json={"session_id": gone_id, "prompt": FOCUSED}
            ) as response:
                assert response.status_code == 200
                await anext(events(response))
            r.after_busy = await s.until_idle()  # the gateway let go of the turn, still held
        cancelled = value(r.after_turn, "zocrates_agent_turns_total", outcome="cancelled")
        for _ in range(300):  # the agent unwinds the cancelled run on its own time
            agent_scrape = await s.scrape("agent")
            if value(agent_scrape, "zocrates_agent_turns_total", outcome="cancelled") > cancelled:
                break
            await asyncio.sleep(0.1)
        r.after_busy.update(agent_scrape)

        # Compactions: a closed gate, and a pivot compacted after the local decision model.
        ConfigStore(s.zotero / "zocrates-data").update(
            {
                "adaptive_compaction_decision_model": "local",
                "adaptive_compaction_min_turns": 4,
                "adaptive_compaction_token_floor": 30000,
                "adaptive_compaction_token_ceiling": 100000,
            }
        )
        remote = RemoteSessionService(addresses["sessions"])
        compactor = CompactorClient(addresses["compactor"])
        try:
            empty = await remote.create_session(app_name=APP, user_id=USER)
            pivot = await remote.create_session(app_name=APP, user_id=USER)
            for event in _pivot_dialogue(tokens=40_000):
                await remote.append_event(pivot, event)
            for target in (empty, pivot):
                r.compactions.append(
                    await compactor.evaluate(app_name=APP, user_id=USER, session_id=target.id)
                )
        finally:
            await compactor.close()
            await remote.close()
        r.after_compaction = await s.scrape("compactor")

        # A rerank of three passages.
        reranker = RerankerClient(addresses["reranker"])
        try:
            await reranker.rerank(
                "optimizer of lmer",
                [("a", "lmer uses bobyqa"), ("b", "sandwich estimators"), ("c", "brms fits")],
            )
        finally:
            await reranker.close()
        r.after_rerank = await s.scrape("reranker")

        # Retention and VACUUM on demand.
        response = await s.http.post("/sessions/maintenance")
        assert response.status_code == 200, response.text
        r.after_maintenance = await s.scrape("sessions")
        r.scrapes = await s.scrape_all()
        yield r


def delta(r: Run, after: Scrape, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(r.start["gateway"], name, **labels)


async def test_every_admin_port_serves_its_services_metrics(run: Run) -> None:
    own = {
        "gateway": "zocrates_gateway_turns_total",
        "library": "zocrates_library_indexed_chunks_total",
        "agent": "zocrates_agent_turns_total",
        "compactor": "zocrates_compactor_evaluations_total",
        "reranker": "zocrates_reranker_request_items_count",
        "sessions": "zocrates_sessions_maintenance_runs_total",
    }
    for service, name in own.items():
        assert value(run.scrapes[service], name) > 0, (service, name)
    # No label carries a session id: every label value is from a closed set.
    ids = {str(c.get("compaction_event_id")) for c in run.compactions} - {"", "None"}
    for (name, labels), _ in run.scrapes["gateway"].items():
        for _, label_value in labels:
            assert label_value not in ids and len(label_value) < 80, (name, labels)


async def test_indexing_counts_items_pages_chunks_and_the_gauges_follow(run: Run) -> None:
    sync = run.sync
    assert sync["phase"] == "done" and sync["failed"] == 0, sync
    after = run.after_sync
    indexed = delta(run, after, "zocrates_library_indexed_attachments_total", state="indexed")
    assert indexed == len(FILES) == sync["added"]
    assert delta(run, after, "zocrates_library_indexed_pages_total") == sync["pages_done"] > 0
    chunks = delta(run, after, "zocrates_library_indexed_chunks_total")
    assert chunks > len(FILES)
    # A fresh index: every chunk written is in the index, and all got a vector.
    assert value(after, "zocrates_library_chunks") == chunks
    assert value(after, "zocrates_library_chunks_pending_embedding") == 0
    assert delta(run, after, "zocrates_library_embedded_chunks_total") == chunks
    assert value(after, "zocrates_library_items") == len(FILES)
    assert value(after, "zocrates_library_attachments") == len(FILES)
    # The library's embedding queue went through the reranker's background batcher.
    background = delta(run, after, "zocrates_reranker_batch_items_sum", batcher="embed_background")
    assert background >= chunks


async def test_a_turn_paused_granted_and_synthesized(run: Run) -> None:
    assert [k.count("request_input") for k in run.kinds] == [1, 1, 0]
    after = run.after_turn
    assert delta(run, after, "zocrates_gateway_checkpoints_offered_total") == 2
    for action in ("extend_budget", "synthesize"):
        answers = "zocrates_gateway_checkpoint_answers_total"
        assert delta(run, after, answers, action=action) == 1, action
    turns = "zocrates_gateway_turns_total"
    assert delta(run, after, turns, route="chat", outcome="paused") == 1
    assert delta(run, after, turns, route="resume", outcome="paused") == 1
    assert delta(run, after, turns, route="resume", outcome="completed") == 1
    assert delta(run, after, turns) == 3
    agent_turns = "zocrates_agent_turns_total"
    assert delta(run, after, agent_turns, rpc="chat", outcome="paused") == 1
    assert delta(run, after, agent_turns, rpc="resume", outcome="completed") == 1
    # Three streams, three locks taken, none refused. A resume sent as soon as the previous
    # stream ended may find its lock not yet released: 'waited' (the release grace).
    locks = "zocrates_gateway_chat_lock_acquisitions_total"
    taken = [delta(run, after, locks, result=result) for result in ("immediate", "waited")]
    assert sum(taken) == 3 and taken[0] >= 1, taken
    assert delta(run, after, locks) == 3
    assert delta(run, after, "zocrates_gateway_chat_lock_wait_seconds_count") == 3
    # The search subagent's retrieval went through the library tools.
    tools = "zocrates_library_tool_calls_total"
    assert delta(run, after, tools, tool="search_corpus", status="success") >= 2
    # The offline model reports no usage: no tokens are counted.
    assert delta(run, after, "zocrates_agent_model_tokens_total") == 0
    assert value(after, "zocrates_gateway_active_chats") == 0


async def test_a_busy_session_and_a_client_that_went_away(run: Run) -> None:
    assert value(run.during_turn, "zocrates_gateway_active_chats") == 1
    assert run.busy_status == 409
    after = run.after_busy
    locks = "zocrates_gateway_chat_lock_acquisitions_total"
    assert value(after, locks, result="busy") - value(run.after_turn, locks, result="busy") == 1
    busy_waits = "zocrates_gateway_chat_lock_wait_seconds_count"
    assert (
        value(after, busy_waits, result="busy") - value(run.after_turn, busy_waits, result="busy")
        == 1
    )
    turns = "zocrates_gateway_turns_total"
    for outcome in ("completed", "cancelled"):  # the busy session's turn, the abandoned one
        now = value(after, turns, route="chat", outcome=outcome)
        assert now - value(run.after_turn, turns, route="chat", outcome=outcome) == 1, outcome
    agent_turns = "zocrates_agent_turns_total"
    assert (
        value(after, agent_turns, rpc="chat", outcome="cancelled")
        - value(run.after_turn, agent_turns, rpc="chat", outcome="cancelled")
        == 1
    )
    assert value(after, "zocrates_gateway_active_chats") == 0


async def test_compaction_decisions_by_reason(run: Run) -> None:
    skipped, compacted = run.compactions
    assert (skipped["outcome"], skipped["reason"]) == ("skipped", "few_turns"), skipped
    assert compacted["outcome"] == "compacted", compacted
    after = run.after_compaction
    evaluations = "zocrates_compactor_evaluations_total"
    assert delta(run, after, evaluations, outcome="skipped", reason="few_turns", gate="skip") == 1
    assert (
        delta(run, after, evaluations, outcome="compacted", reason="compacted", gate="probe") == 1
    )
    # The research turn's gate stayed closed at the gateway: only these two reached it.
    assert delta(run, after, evaluations) == 2
    seconds = "zocrates_compactor_evaluation_duration_seconds"
    assert delta(run, after, f"{seconds}_count", outcome="compacted") == 1
    assert delta(run, after, f"{seconds}_sum", outcome="compacted") > 0


async def test_rerank_batch_and_request_sizes(run: Run) -> None:
    before, after = run.after_compaction, run.after_rerank
    for name, n in (("zocrates_reranker_request_items", 1), ("zocrates_reranker_batch_items", 1)):
        count = value(after, f"{name}_count", batcher="rerank")
        assert count - value(before, f"{name}_count", batcher="rerank") == n, name
    items = "zocrates_reranker_request_items_sum"
    assert value(after, items, batcher="rerank") - value(before, items, batcher="rerank") == 3
    seconds = "zocrates_reranker_request_seconds_count"
    assert value(after, seconds, batcher="rerank") - value(before, seconds, batcher="rerank") == 1
    model = "zocrates_reranker_batch_seconds_count"
    assert value(after, model, batcher="rerank") > value(before, model, batcher="rerank")


async def test_maintenance_runs_and_vacuum_decisions(run: Run) -> None:
    before, after = run.after_rerank, run.after_maintenance
    runs = "zocrates_sessions_maintenance_runs_total"
    assert value(after, runs, kind="retention") - value(before, runs, kind="retention") == 1
    vacuums = "zocrates_sessions_vacuums_total"
    assert value(after, vacuums) - value(before, vacuums) == 1
    seconds = "zocrates_sessions_maintenance_duration_seconds_count"
    assert value(after, seconds, kind="retention") - value(before, seconds, kind="retention") == 1
    # Start-up maintenance ran before the first scrape.
    assert value(run.start["sessions"], runs, kind="retention") >= 1


# --- tokens of remote model calls (every role on a local OpenAI-compatible server) ----------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def remote_turn(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    """A turn on remote models that pauses at a checkpoint and is then synthesized, with the
    gateway's scrapes before, while paused and after, and the tokens the server reported."""
    root = tmp_path_factory.mktemp("metrics_litellm")
    zotero = root / "zotero"
    zf.build_zotero_library(zotero, files=FILES[:1])
    model = Model()
    async with contextlib.AsyncExitStack() as exit_stack:
        monkeypatch = exit_stack.enter_context(pytest.MonkeyPatch.context())
        monkeypatch.setenv(API_KEY_ENV, "sk-zocrates-test-metrics")
        server = exit_stack.enter_context(serve_openai(model))
        indexed = await exit_stack.enter_async_context(running_indexed_stack(zotero))
        gateway, token = indexed.gateway, indexed.token
        assert gateway is not None
        s = Stack(root)
        s.admin_ports = {"gateway": gateway.admin.port}
        s.http = await exit_stack.enter_async_context(
            httpx.AsyncClient(
                base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
            )
        )
        exit_stack.push_async_callback(s.admin.aclose)
        models = {f"{key}_model": MODELS[role] for key, role in ROLE_KEYS.items()}
        response = await s.http.put(
            "/config", json={**models, "model_api_base": server.api_base, **CAPABLE_MODEL}
        )
        assert response.status_code == 200, response.text

        model.extend = True  # the subagent asks for an extension: a checkpoint
        out: dict[str, Any] = {"before": await s.scrape("gateway")}
        session_id = await s.new_session()
        status, evs, error = await s.chat(session_id, FOCUSED)
        assert status == 200, error
        assert _one(evs, "done")["status"] == "paused"
        out["paused"] = await s.until_idle()
        status, evs, error = await s.resume(session_id, _one(evs, "request_input"), "synthesize")
        assert status == 200, error
        out["done"] = _one(evs, "done")
        out["after"] = await s.until_idle()
        out["reported"] = [e.usage for e in server.exchanges]
        out["roles"] = [role_of(e.body) for e in server.exchanges]
        yield out


async def test_tokens_of_a_turn_are_counted_once_by_role_and_model(
    remote_turn: dict[str, Any],
) -> None:
    done, reported = remote_turn["done"], remote_turn["reported"]
    assert done["status"] == "completed" and done["usage"], done
    assert all(reported) and len(reported) >= 4, reported
    billed_in = sum(u["prompt_tokens"] for u in reported)
    billed_out = sum(u["completion_tokens"] for u in reported)
    # What the turn reports to the client is what the server billed, and what the agent counts.
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == (
        billed_in,
        billed_out,
    )
    # These names have no price: no dollars are counted.
    cost = "zocrates_agent_model_cost_usd_total"
    assert value(remote_turn["after"], cost) == value(remote_turn["before"], cost)

    # The agent counts each call as it ends, by role: the same tokens, split by role, the
    # calls before the checkpoint counted while the turn was paused.
    per_call = "zocrates_agent_model_tokens_total"

    def agent_moved(when: str, **labels: str) -> float:
        before = value(remote_turn["before"], per_call, **labels)
        return value(remote_turn[when], per_call, **labels) - before

    roles = remote_turn["roles"]
    assert set(roles) == {"coordinator", "search_subagent", "synthesizer"}, roles
    for role in set(roles):
        mine = [u for u, r in zip(reported, roles, strict=True) if r == role]
        model_name = MODELS[role]
        for kind, key in (("input", "prompt_tokens"), ("output", "completion_tokens")):
            assert agent_moved("after", role=role, kind=kind) == sum(u[key] for u in mine), role
        assert value(remote_turn["after"], per_call, role=role, model=model_name) > 0, role
    assert agent_moved("paused", role="synthesizer") == 0  # it had not run yet
    assert agent_moved("paused", role="coordinator") > 0
    assert agent_moved("after") == billed_in + billed_out
