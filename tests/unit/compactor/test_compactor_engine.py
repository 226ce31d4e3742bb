"""The post-turn lifecycle end to end: gate, the Decisions API probe over real HTTP on
127.0.0.1, the summarizer behind a scripted model, and the event ADK then reads."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from services.common.adk.compat import get_contents
from services.common.app_config import ZocratesConfig
from services.compactor.decision import DecisionsApiClient
from services.compactor.engine import evaluate_and_compact
from services.compactor.summarizer import ModelSummarizer
from tests.support.scripted_llm import ScriptedLlm
from tests.unit.compactor.decisions_server import DecisionsServer, Reply, answer
from tests.unit.compactor.session_events import COORDINATOR, SessionEvents


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[DecisionsServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = DecisionsServer()
    yield server
    server.close()


@pytest.fixture
async def probe(api: DecisionsServer) -> AsyncIterator[DecisionsApiClient]:
    client = DecisionsApiClient(api.url, api_key="k", timeout=2.0, max_retry_wait=0.05)
    yield client
    await client.aclose()


def _session(turns: int, tokens: int) -> SessionEvents:
    s = SessionEvents()
    for i in range(1, turns + 1):
        if i % 2:
            s.research_turn(f"Q{i}: research question {i}?", f"Findings {i}.", prompt_tokens=tokens)
        else:
            s.chat_turn(f"Q{i}: follow-up {i}?", f"Reply {i}.", prompt_tokens=tokens)
    return s


async def _run(s: SessionEvents, probe: DecisionsApiClient, llm: ScriptedLlm, **config: Any) -> Any:
    return await evaluate_and_compact(
        s.events,
        config=ZocratesConfig(**config),
        decision_model=probe,
        summarizer=ModelSummarizer(llm),
    )


async def test_closed_gate_makes_no_network_call(
    api: DecisionsServer, probe: DecisionsApiClient
) -> None:
    llm = ScriptedLlm(replies=["summary"])

    few = await _run(_session(3, 80_000), probe, llm)
    low = await _run(_session(6, 29_000), probe, llm)
    off = await _run(_session(6, 80_000), probe, llm, enable_adaptive_compaction=False)

    assert (few.reason, low.reason, off.reason) == ("few_turns", "below_floor", "disabled")
    assert few.event is low.event is off.event is None
    assert api.requests == [] and llm.requests == []


async def test_probe_compress_appends_a_summary_keeping_k_turns(
    api: DecisionsServer, probe: DecisionsApiClient
) -> None:
    api.replies = [Reply(body=answer(0.86))]
    llm = ScriptedLlm(replies=["## Conversation summary\nTurns 1-2 in brief."])
    s = _session(4, 45_000)

    outcome = await _run(s, probe, llm)

    assert outcome.reason == "compacted" and outcome.gate.outcome == "probe"
    assert outcome.decision.verdict == "COMPRESS"
    [request] = api.requests
    state = request.body["state"]
    assert state["latest_turn"] == "**User**: Q4: follow-up 4?\n**Assistant**: Reply 4."
    assert state["earlier_discussion"].startswith(
        "**User**: Q1: research question 1?\n**Assistant**: Findings 1.\n\n"
    )
    assert "RAW CHUNK" not in str(request.body)
    assert len(llm.requests) == 1
    assert (outcome.plan.first_new_turn, outcome.plan.last_turn) == (1, 2)

    s.append(outcome.event)
    texts = [
        p.text or (p.function_call and "call") or (p.function_response and "result")
        for c in get_contents(None, s.events, COORDINATOR)
        for p in c.parts
    ]
    assert texts == [
        "## Conversation summary\nTurns 1-2 in brief.",
        "Q3: research question 3?",
        "call",
        "result",
        "Q4: follow-up 4?",
        "Reply 4.",
    ]

    s.chat_turn("Q5: next?", "Reply 5.", prompt_tokens=45_000)
    again = await _run(s, probe, ScriptedLlm())
    # Counted since the compaction happened: turns 3-4, kept verbatim, do not count again.
    assert again.reason == "few_turns" and again.gate.turns == 1


async def test_the_documents_sequence_compacts_at_turn_4_then_at_turn_8(
    api: DecisionsServer, probe: DecisionsApiClient
) -> None:
    """The sequence of docs/compaction.md ("Post-turn compaction", item 1): min_turns 4, K 2,
    every probe saying COMPRESS: summary 1 covers turns 1-2 after turn 4, summary 2 turns 1-6
    after turn 8, and no probe runs in between."""
    api.default = Reply(body=answer(0.9))
    llm = ScriptedLlm(replies=["Summary of turns 1-2.", "Summary of turns 1-6."])
    s = SessionEvents()
    compacted_after: list[int] = []
    plans: list[tuple[int, int]] = []
    for n in range(1, 11):
        s.chat_turn(f"Q{n}?", f"Reply {n}.", prompt_tokens=45_000)
        outcome = await _run(s, probe, llm)
        if outcome.event is not None:
            compacted_after.append(n)
            plans.append((outcome.plan.first_new_turn, outcome.plan.last_turn))
            s.append(outcome.event)
        else:
            assert outcome.reason == "few_turns", (n, outcome.reason)
    assert compacted_after == [4, 8]
    assert plans == [(1, 2), (3, 6)]
    assert len(api.requests) == 2  # one probe per compaction, none on turns 5-7 or 9-10
    texts = [p.text for c in get_contents(None, s.events, COORDINATOR) for p in c.parts]
    assert texts[0] == "Summary of turns 1-6."
    assert "Summary of turns 1-2." not in texts  # subsumed
    assert texts[1:] == [
        "Q7?",
        "Reply 7.",
        "Q8?",
        "Reply 8.",
        "Q9?",
        "Reply 9.",
        "Q10?",
        "Reply 10.",
    ]


async def test_probe_continue_leaves_the_session_alone(
    api: DecisionsServer, probe: DecisionsApiClient
) -> None:
    api.replies = [Reply(body=answer(0.31))]
    llm = ScriptedLlm(replies=["summary"])

    outcome = await _run(_session(5, 60_000), probe, llm)

    assert outcome.reason == "probe_continue" and outcome.event is None
    assert outcome.decision.probability == pytest.approx(0.31)
    assert llm.requests == []


async def test_probe_failure_fails_open(api: DecisionsServer, probe: DecisionsApiClient) -> None:
    api.default = Reply(200, b"not json at all")
    llm = ScriptedLlm(replies=["summary"])

    outcome = await _run(_session(5, 60_000), probe, llm)

    assert outcome.reason == "probe_continue" and outcome.event is None
    assert outcome.decision.reason.startswith("malformed_response")


async def test_backstop_compacts_without_asking_the_decision_model(
    api: DecisionsServer, probe: DecisionsApiClient
) -> None:
    llm = ScriptedLlm(replies=["Forced summary."])

    outcome = await _run(_session(4, 100_000), probe, llm)

    assert (outcome.gate.outcome, outcome.reason) == ("force", "compacted")
    assert outcome.decision is None and api.requests == []
    assert outcome.event.actions.compaction.compacted_content.parts[0].text == "Forced summary."


async def test_a_turn_paused_at_a_checkpoint_is_not_compacted(
    api: DecisionsServer, probe: DecisionsApiClient
) -> None:
    s = _session(5, 120_000)
    inv, call_id = s.start_research("Q6: deep research?", prompt_tokens=120_000)
    s.checkpoint(inv, call_id)

    outcome = await _run(s, probe, ScriptedLlm(replies=["summary"]))

    assert outcome.reason == "open_turn" and outcome.event is None
    assert api.requests == []
