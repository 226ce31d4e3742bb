"""A whole research turn through LiteLLM, every role on a model served over HTTP.

The real stack runs in-process (sessions, reranker, agent, gateway) on a small Zotero-shaped
library; the user points all three roles at ``openai/<name>`` models on a local server speaking
OpenAI's Chat Completions wire format (``PUT /config``, the key in ``ZOCRATES_MODEL_API_KEY``).
That server (the permitted stand-in for a hosted model) answers through
``tests.support.research_model.Model``, the way a scripted model would, deciding from each
request: it tells the role by its system message, and

- coordinator: calls ``search_library`` with the user's question;
- search subagent: calls ``search_corpus`` once, then ``conclude_search`` (no gaps) or, for the
  checkpoint variant, ``request_search_extension``;
- synthesizer: streams an answer citing ``[1, p. N]`` with the page of evidence block 1 of its
  prompt.

The tests read the turn through ``POST /chat`` (and ``POST /chat/resume``) as the plugin does,
and check the requests the server received: the bearer key, each role on its own model, the
search result sent back to the subagent as a ``tool`` message, the evidence blocks in the
synthesizer's prompt; and ``done``'s ``usage``: the tokens the server reported, summed over the
turn's calls, priced when the model names are ones LiteLLM's price map knows; and the
synthesizer's thinking setting: ``reasoning_effort`` for a model the map knows as a reasoning
model, nothing for the others, its reasoning kept out of the answer. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before anything imports litellm

import httpx
import litellm
import pytest
import pytest_asyncio

from services.agent.research.agents import COORDINATOR, SEARCH_SUBAGENT
from services.agent.research.library_tools import SEARCH_CORPUS
from services.agent.research.retrieval_tools import CONCLUDE_SEARCH, REQUEST_SEARCH_EXTENSION
from services.agent.research.runtime import API_KEY_ENV
from services.common.adk.names import SEARCH_LIBRARY, SYNTHESIZER
from tests.support import zotero_fixture as zf
from tests.support.openai_server import (
    CAPABLE_MODEL,
    NetworkLog,
    OpenAIServer,
    record_network,
    serve_openai,
)
from tests.support.research_model import (
    ANSWER_OPENING,
    BLOCK_RE,
    EXTENSION_JUSTIFICATION,
    MISSING,
    Model,
    last_user_text,
    role_of,
    tool_messages,
    tool_names,
)
from tests.support.sse import post_stream
from tests.support.stack import (
    running_indexed_stack,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(120),
    # LiteLLM's own TypedDicts, when pydantic first builds their schema.
    pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"),
    # LiteLLM reading pydantic's model_fields from an instance (deprecated in pydantic 2.11).
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

FILES = ("lme4__lmer.pdf", "brms__brms_overview.pdf")
KEYS = {zf.paper_item_key(f) for f in FILES}
API_KEY = "sk-zocrates-test-9c1e"
MODELS = {
    COORDINATOR: "coordinator-llm",
    SEARCH_SUBAGENT: "subagent-llm",
    SYNTHESIZER: "synthesizer-llm",
}
QUESTION = "How does lmer choose its optimizer when fitting a linear mixed model?"

Events = list[tuple[str, dict[str, Any]]]


# --- the stack -------------------------------------------------------------------------------


@dataclass
class Stack:
    http: httpx.AsyncClient
    server: OpenAIServer
    model: Model
    gateway_port: int

    async def new_session(self) -> str:
        response = await self.http.post("/sessions", json={"title": "LiteLLM research"})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["id"])

    async def chat(self, session_id: str, prompt: str) -> tuple[int, Events, Any]:
        return await post_stream(self.http, "/chat", {"session_id": session_id, "prompt": prompt})

    async def resume(
        self, session_id: str, pending: dict[str, Any], action: str
    ) -> tuple[int, Events, Any]:
        body = {
            "session_id": session_id,
            "invocation_id": pending["invocation_id"],
            "interrupt_id": pending["interrupt_id"],
            "response": {"action": action},
        }
        return await post_stream(self.http, "/chat/resume", body)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    root = tmp_path_factory.mktemp("research_litellm")
    zotero = root / "zotero"
    zf.build_zotero_library(zotero, files=FILES)
    model = Model()
    async with contextlib.AsyncExitStack() as exit_stack:
        monkeypatch = exit_stack.enter_context(pytest.MonkeyPatch.context())
        # The agent reads the key when it (re)builds its models: at the first turn below.
        monkeypatch.setenv(API_KEY_ENV, API_KEY)
        server = exit_stack.enter_context(serve_openai(model))
        indexed = await exit_stack.enter_async_context(running_indexed_stack(zotero))
        gateway, token = indexed.gateway, indexed.token
        assert gateway is not None
        http = await exit_stack.enter_async_context(
            httpx.AsyncClient(
                base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
            )
        )
        # What the user does in the preferences pane: every role on the local server.
        changes = {
            "coordinator_model": f"openai/{MODELS[COORDINATOR]}",
            "subagent_model": f"openai/{MODELS[SEARCH_SUBAGENT]}",
            "synthesizer_model": f"openai/{MODELS[SYNTHESIZER]}",
            "model_api_base": server.api_base,
            **CAPABLE_MODEL,
        }
        response = await http.put("/config", json=changes)
        assert response.status_code == 200, response.text
        assert {k: response.json()["config"][k] for k in changes} == changes
        written = json.loads((zotero / "zocrates-data" / "zocrates_config.json").read_text())
        assert {k: written[k] for k in changes} == changes
        yield Stack(http=http, server=server, model=model, gateway_port=gateway.port)


# --- helpers ---------------------------------------------------------------------------------


def _kinds(evs: Events) -> list[str]:
    return [k for k, _ in evs]


def _done(evs: Events) -> dict[str, Any]:
    assert evs and evs[-1][0] == "done", _kinds(evs)
    return evs[-1][1]


def _by_role(exchanges: list[Any], role: str) -> list[dict[str, Any]]:
    return [e.body for e in exchanges if role_of(e.body) == role]


def _billed(exchanges: list[Any]) -> tuple[int, int]:
    """The input and output tokens the server reported for these calls."""
    assert all(e.usage for e in exchanges), "LiteLLM asked for no usage in a stream"
    return (
        sum(e.usage["prompt_tokens"] for e in exchanges),
        sum(e.usage["completion_tokens"] for e in exchanges),
    )


UNPRICED = ", ".join(
    f"openai/{MODELS[role]}" for role in (COORDINATOR, SEARCH_SUBAGENT, SYNTHESIZER)
)


async def _reloaded_usage(stack: Stack, session_id: str) -> list[dict[str, Any]]:
    """The usage of each turn of the session, as GET /sessions/{id} shows it."""
    response = await stack.http.get(f"/sessions/{session_id}")
    assert response.status_code == 200, response.text
    return [m["usage"] for m in response.json()["session"]["messages"] if "usage" in m]


async def _assert_unpriced_usage(
    stack: Stack, session_id: str, done: dict[str, Any], exchanges: list[Any]
) -> None:
    """done's usage is every call's tokens as the server reported them, no cost (these names
    have no price in LiteLLM's map), and the reloaded session shows the same."""
    tokens_in, tokens_out = _billed(exchanges)
    assert done["usage"] == {
        "model": UNPRICED,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": None,
    }
    assert await _reloaded_usage(stack, session_id) == [done["usage"]]


def _assert_wire(stack: Stack, exchanges: list[Any]) -> None:
    """Every request: our key as a bearer token, the role's own model, streamed, no errors."""
    assert not stack.server.errors, stack.server.errors[0]
    assert exchanges
    for exchange in exchanges:
        body, role = exchange.body, role_of(exchange.body)
        assert exchange.headers.get("authorization") == f"Bearer {API_KEY}", exchange.headers
        assert body["model"] == MODELS[role]  # LiteLLM strips the "openai/" prefix
        assert body.get("stream") is True  # the chat service runs ADK in SSE mode
        names = tool_names(body)
        if role == COORDINATOR:
            assert SEARCH_LIBRARY in names and SEARCH_CORPUS not in names, names
        elif role == SEARCH_SUBAGENT:
            assert {SEARCH_CORPUS, CONCLUDE_SEARCH, REQUEST_SEARCH_EXTENSION} <= names, names
            assert SEARCH_LIBRARY not in names
        else:
            assert not names & {SEARCH_CORPUS, SEARCH_LIBRARY}, names


def _assert_local(log: NetworkLog, stack: Stack, requests: int) -> None:
    """Only the model server and the gateway were connected to, on 127.0.0.1; the server closes
    every connection after its answer, so each model request is one connection seen here."""
    model = ("127.0.0.1", stack.server.port)
    assert [a[:2] for a in log.connects].count(model) == requests, log.connects
    allowed = {model, ("127.0.0.1", stack.gateway_port)}
    assert {a[:2] for a in log.connects} <= allowed, log.connects
    assert all(h in ("127.0.0.1", b"127.0.0.1", "localhost", b"localhost") for h in log.lookups), (
        log.lookups
    )


def _assert_subagent_got_search_results(subagent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The subagent's second request carries search_corpus's result as a ``tool`` message;
    returns the passages it holds."""
    assert len(subagent) == 2, [last_user_text(b)[:80] for b in subagent]
    first, second = subagent
    # The pipeline's isolation scope: the subagent sees its prompt, not the chat.
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert f"Research request: {QUESTION}" in last_user_text(first)
    (call,) = [
        c for m in second["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []
    ]
    assert call["function"]["name"] == SEARCH_CORPUS
    assert json.loads(call["function"]["arguments"]) == {"query": QUESTION, "k": 6}
    (result,) = tool_messages(second, SEARCH_CORPUS)
    assert result["tool_call_id"] == call["id"]
    payload = json.loads(result["content"])
    assert payload["status"] == "success"
    passages = payload["results"]
    assert 1 <= len(passages) <= 6
    assert {p["item_key"] for p in passages} <= KEYS
    assert zf.paper_item_key("lme4__lmer.pdf") in {p["item_key"] for p in passages}
    return list(passages)


def _assert_synthesized(
    synthesizer: dict[str, Any], passages: list[dict[str, Any]], done: dict[str, Any]
) -> None:
    """The synthesizer's prompt holds the evidence blocks of the passages found, and the
    answer's citations map to the cited block's item and page."""
    assert [m["role"] for m in synthesizer["messages"]] == ["system", "user"]
    prompt = last_user_text(synthesizer)
    assert f"Question: {QUESTION}" in prompt
    assert "Evidence from the user's library:" in prompt
    blocks = BLOCK_RE.findall(prompt)
    assert len(blocks) == len(passages), blocks
    assert {(key, int(page)) for _, key, page in blocks} == {
        (p["item_key"], int(p["page"])) for p in passages
    }
    for passage in passages:
        assert passage["text"].strip() in prompt
    assert done["status"] == "completed"
    cited = {int(n): (key, int(page)) for n, key, page in blocks}
    assert done["citations"], done
    for citation in done["citations"]:
        assert citation["item_key"] in KEYS
        assert (citation["item_key"], citation["page"]) == cited[citation["n"]]
    assert done["citations"][0]["n"] == 1
    assert done["answer"].startswith(ANSWER_OPENING)


def _assert_streamed(evs: Events, done: dict[str, Any]) -> None:
    partial = [
        "".join(p.get("text", "") for p in d["parts"])
        for k, d in evs
        if k == "message" and d["partial"] and d["kind"] == "answer"
    ]
    assert len(partial) >= 5, partial
    assert "".join(partial) == done["answer"]
    final = [d for k, d in evs if k == "message" and not d["partial"] and d["kind"] == "answer"]
    assert [d["author"] for d in final] == [SYNTHESIZER]


# --- the tests -------------------------------------------------------------------------------


async def _first_turn(stack: Stack, *, extend: bool) -> tuple[str, Events, list[Any], NetworkLog]:
    """A new session's first turn on QUESTION (``extend``: the subagent asks for an
    extension): the session, the stream's events, the model calls it made, and the network
    it touched."""
    stack.model.extend = extend
    session_id = await stack.new_session()
    start = len(stack.server.exchanges)
    with record_network() as network:
        status, evs, error = await stack.chat(session_id, QUESTION)
    assert status == 200, error
    return session_id, evs, stack.server.exchanges[start:], network


async def test_a_research_turn_runs_every_role_through_litellm(stack: Stack) -> None:
    session_id, evs, exchanges, network = await _first_turn(stack, extend=False)
    _assert_wire(stack, exchanges)
    _assert_local(network, stack, len(exchanges))
    done = _done(evs)

    # One coordinator call (search_library skips the summary), two subagent calls, one
    # synthesizer call, in that order.
    assert [role_of(e.body) for e in exchanges] == [
        COORDINATOR,
        SEARCH_SUBAGENT,
        SEARCH_SUBAGENT,
        SYNTHESIZER,
    ]
    (coordinator,) = _by_role(exchanges, COORDINATOR)
    assert last_user_text(coordinator) == QUESTION
    passages = _assert_subagent_got_search_results(_by_role(exchanges, SEARCH_SUBAGENT))
    (synthesizer,) = _by_role(exchanges, SYNTHESIZER)
    _assert_synthesized(synthesizer, passages, done)
    assert "Aspects the search found no evidence for" not in last_user_text(synthesizer)
    _assert_streamed(evs, done)
    # synthesizer_thinking is "high" by default, but LiteLLM's map does not know these names as
    # reasoning models: the local server gets no parameter it may not know.
    assert not [e.body for e in exchanges if {"reasoning_effort", "thinking"} & set(e.body)]
    # The model's tool calls reached the client as steps of the turn.
    calls = [
        p["function_call"]["name"]
        for k, d in evs
        if k == "message" and not d["partial"]
        for p in d["parts"]
        if "function_call" in p
    ]
    assert calls == [SEARCH_LIBRARY, SEARCH_CORPUS, CONCLUDE_SEARCH], calls
    # What the turn cost: every call's tokens as the server reported them; these names have no
    # price in LiteLLM's map, so no cost.
    await _assert_unpriced_usage(stack, session_id, done, exchanges)


async def test_a_checkpoint_then_synthesize_through_litellm(stack: Stack) -> None:
    session_id, evs, paused, network = await _first_turn(stack, extend=True)
    assert _done(evs)["status"] == "paused"
    (pending,) = [d for k, d in evs if k == "request_input"]
    assert pending["interrupt_id"] == "interrupt_ext_1"
    payload = pending["payload"]
    assert payload["trigger"] == "agent_request"
    assert payload["gaps"] == [MISSING]
    assert payload["justification"] == EXTENSION_JUSTIFICATION
    assert [role_of(e.body) for e in paused] == [COORDINATOR, SEARCH_SUBAGENT, SEARCH_SUBAGENT]
    tokens_in, tokens_out = _billed(paused)
    assert _done(evs)["usage"] == {
        "model": ", ".join(f"openai/{MODELS[r]}" for r in (COORDINATOR, SEARCH_SUBAGENT)),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": None,
    }
    passages = _assert_subagent_got_search_results(_by_role(paused, SEARCH_SUBAGENT))
    assert payload["evidence_count"] == len(passages)

    resumed_from = len(stack.server.exchanges)
    with record_network() as resumed_network:
        status, evs, error = await stack.resume(session_id, pending, "synthesize")
    assert status == 200, error
    resumed = stack.server.exchanges[resumed_from:]
    _assert_wire(stack, paused + resumed)
    _assert_local(network, stack, len(paused))
    _assert_local(resumed_network, stack, len(resumed))
    # Synthesize now: no more retrieval, the synthesizer writes from the first pass's evidence.
    # ADK replays the coordinator's search_library call without asking the coordinator again.
    assert [role_of(e.body) for e in resumed] == [SYNTHESIZER]
    (synthesizer,) = _by_role(resumed, SYNTHESIZER)
    done = _done(evs)
    assert done["invocation_id"] == pending["invocation_id"]
    _assert_synthesized(synthesizer, passages, done)
    assert f"Aspects the search found no evidence for:\n- {MISSING}" in last_user_text(synthesizer)
    _assert_streamed(evs, done)
    # The resumed turn's done counts the whole turn: the calls before the checkpoint too.
    await _assert_unpriced_usage(stack, session_id, done, paused + resumed)
    response = await stack.http.get(f"/sessions/{session_id}")
    assert response.status_code == 200
    assert response.json()["session"]["pending_hitl"] is None


async def test_a_turn_on_priced_models_reports_its_cost(stack: Stack) -> None:
    """Model names LiteLLM's bundled price map knows: ``done`` prices every call at its
    model's list price and sums them."""
    priced = {
        "coordinator_model": "openai/gpt-4o-mini",
        "subagent_model": "openai/gpt-4o-mini",
        "synthesizer_model": "openai/gpt-4o",
    }
    before = (await stack.http.get("/config")).json()["config"]
    response = await stack.http.put("/config", json=priced)
    assert response.status_code == 200, response.text
    try:
        session_id, evs, exchanges, network = await _first_turn(stack, extend=False)
        assert not stack.server.errors, stack.server.errors[0]
        _assert_local(network, stack, len(exchanges))
        done = _done(evs)
        assert done["status"] == "completed"
        # LiteLLM sends the name without its "openai/" prefix, which is how its map keys them.
        assert [e.body["model"] for e in exchanges] == [
            "gpt-4o-mini",
            "gpt-4o-mini",
            "gpt-4o-mini",
            "gpt-4o",
        ]
        prices = litellm.model_cost
        expected_cost = sum(
            e.usage["prompt_tokens"] * prices[e.body["model"]]["input_cost_per_token"]
            + e.usage["completion_tokens"] * prices[e.body["model"]]["output_cost_per_token"]
            for e in exchanges
        )
        tokens_in, tokens_out = _billed(exchanges)
        usage = done["usage"]
        assert usage == {
            "model": "openai/gpt-4o-mini, openai/gpt-4o",
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "cost_usd": pytest.approx(expected_cost, rel=1e-6),
        }
        assert usage["cost_usd"] > 0
        assert await _reloaded_usage(stack, session_id) == [usage]
    finally:
        restore = {k: before[k] for k in priced}
        response = await stack.http.put("/config", json=restore)
        assert response.status_code == 200, response.text


# What the synthesizer reasons before it answers: a citation marker and words of its own, which
# must reach neither the answer nor its citations.
REASONING = "Weighing the optimizer passage first [9, p. 99]; the brms block adds nothing."


async def test_a_thinking_synthesizer_gets_reasoning_effort_and_keeps_its_reasoning_apart(
    stack: Stack,
) -> None:
    """The synthesizer on a model LiteLLM's map knows as a reasoning model (``openai/gpt-5``,
    served by the local server): its request carries ``reasoning_effort`` at the configured
    level, and ``off`` at the next turn sends none. The server streams its reasoning
    (``reasoning_content``) before the answer: the reasoning is a ``thought`` message, never in
    ``done``'s answer or citations, an ``answer`` message, or the reloaded session's answer."""
    before = (await stack.http.get("/config")).json()["config"]
    changes = {"synthesizer_model": "openai/gpt-5", "synthesizer_thinking": "medium"}
    response = await stack.http.put("/config", json=changes)
    assert response.status_code == 200, response.text
    stack.model.reasoning = REASONING
    try:
        session_id, evs, exchanges, network = await _first_turn(stack, extend=False)
        assert not stack.server.errors, stack.server.errors[0]
        _assert_local(network, stack, len(exchanges))
        (synthesizer,) = _by_role(exchanges, SYNTHESIZER)
        assert synthesizer["model"] == "gpt-5"
        assert synthesizer["reasoning_effort"] == "medium"
        for body in _by_role(exchanges, COORDINATOR) + _by_role(exchanges, SEARCH_SUBAGENT):
            assert "reasoning_effort" not in body  # not the synthesizer's setting
        done = _done(evs)
        assert done["status"] == "completed"
        assert done["answer"].startswith(ANSWER_OPENING)
        assert "Weighing" not in done["answer"] and "[9, p. 99]" not in done["answer"]
        cited = {int(n) for n in re.findall(r"\[(\d+), p\. \d+\]", done["answer"])}
        assert cited and {c["n"] for c in done["citations"]} == cited  # none from [9, p. 99]
        messages = [d for k, d in evs if k == "message" and d["author"] == SYNTHESIZER]
        answer_parts = [p for d in messages if d["kind"] == "answer" for p in d["parts"]]
        assert answer_parts
        assert not any(p["thought"] or "Weighing" in p["text"] for p in answer_parts)
        thought = [d for d in messages if d["kind"] == "thought" and not d["partial"]]
        assert ["".join(p["text"] for p in d["parts"]) for d in thought] == [REASONING]
        _assert_streamed(evs, done)
        reloaded = (await stack.http.get(f"/sessions/{session_id}")).json()["session"]
        shown = [m for m in reloaded["messages"] if m["author"] == SYNTHESIZER]
        assert [m["text"] for m in shown if m["thought"]] == [REASONING]
        assert [m["text"] for m in shown if not m["thought"]] == [done["answer"]]

        # The setting applies at the next turn: off sends nothing.
        response = await stack.http.put("/config", json={"synthesizer_thinking": "off"})
        assert response.status_code == 200, response.text
        _, evs, exchanges, _ = await _first_turn(stack, extend=False)
        (synthesizer,) = _by_role(exchanges, SYNTHESIZER)
        assert synthesizer["model"] == "gpt-5" and "reasoning_effort" not in synthesizer
        assert _done(evs)["answer"].startswith(ANSWER_OPENING)
    finally:
        stack.model.reasoning = ""
        restore = {k: before[k] for k in changes}
        response = await stack.http.put("/config", json=restore)
        assert response.status_code == 200, response.text
