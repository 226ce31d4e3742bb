"""The Decisions API probe against a real HTTP server on 127.0.0.1 that speaks the wire format
(``POST /api/alpha/decisions`` -> ``{"answers": {"compaction_warranted": {"noul": p}}}``)."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from services.compactor.decision import (
    QUESTION_ID,
    RUBRIC_INSTRUCTIONS,
    DecisionsApiClient,
    noul_probability,
)
from services.compactor.turns import DecisionState
from tests.unit.compactor.decisions_server import DecisionsServer, Reply, answer

STATE = DecisionState(
    earlier_discussion=(
        "**User**: What causes capacity fade in lithium-ion anodes during fast charging?\n"
        "**Assistant**: Lithium plating thickens the SEI and consumes active lithium."
    ),
    latest_turn=(
        "**User**: What is the LCOS of vanadium flow batteries for grid peaking?\n"
        "**Assistant**: Estimates range from $0.20 to $0.35 per kWh."
    ),
)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[DecisionsServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = DecisionsServer()
    yield server
    server.close()


@pytest.fixture
async def client(api: DecisionsServer) -> AsyncIterator[DecisionsApiClient]:
    c = DecisionsApiClient(api.url, api_key="sk-or-test", timeout=2.0, max_retry_wait=0.2)
    yield c
    await c.aclose()


async def test_decision_model_compress_verdict(
    api: DecisionsServer, client: DecisionsApiClient
) -> None:
    api.replies = [Reply(body=answer(0.82))]

    decision = await client.decide(STATE, threshold=0.75)

    assert decision.verdict == "COMPRESS"
    assert decision.probability == pytest.approx(0.82)
    assert (decision.threshold, decision.model, decision.reason) == (
        0.75,
        "inception/mercury-decide",
        "ok",
    )
    assert decision.latency_ms > 0
    [request] = api.requests
    assert request.path == "/api/alpha/decisions"
    assert request.headers["Authorization"] == "Bearer sk-or-test"
    assert request.body == {
        "model": "inception/mercury-decide",
        "state": {
            "earlier_discussion": STATE.earlier_discussion,
            "latest_turn": STATE.latest_turn,
        },
        "questions": {QUESTION_ID: {"type": "noul", "instructions": RUBRIC_INSTRUCTIONS}},
    }
    assert RUBRIC_INSTRUCTIONS.startswith("Task: Decide whether `earlier_discussion` should")
    assert "- NOT STUCK: Is the conversation free from an unresolved" in RUBRIC_INSTRUCTIONS


def test_the_rubric_names_the_documents_four_criteria() -> None:
    rubric = RUBRIC_INSTRUCTIONS.split("\n\nRubric:\n", 1)[1].split("\n\nDecision Rule:", 1)[0]
    names = [line[2:].split(":", 1)[0] for line in rubric.splitlines()]
    assert names == ["CLOSED-UNIT", "PROGRESS/PIVOT", "NOT STUCK", "SUMMARIZABLE"]
    assert (
        "- SUMMARIZABLE: Does `earlier_discussion` contain substantive information suitable for "
        "compaction?" in RUBRIC_INSTRUCTIONS
    )
    # The decision rule requires all four, and says when the fourth fails.
    rule = RUBRIC_INSTRUCTIONS.split("Decision Rule:", 1)[1]
    assert "ALL criteria" in rule and "substantive information worth summarizing" in rule
    assert "holds nothing substantive to summarize" in rule


async def test_a_reply_that_uses_summarizable_is_read(
    api: DecisionsServer, client: DecisionsApiClient
) -> None:
    # An answer that explains itself by the fourth criterion, once as a bare noul and once as an
    # object that also scores each criterion: only the probability decides.
    explained = answer(0.18)
    explained["answers"][QUESTION_ID]["explanation"] = (
        "CLOSED-UNIT, PROGRESS/PIVOT and NOT STUCK hold, but SUMMARIZABLE fails: the earlier "
        "turns are greetings."
    )
    scored = answer(
        {
            "probability": 0.86,
            "criteria": {
                "CLOSED-UNIT": 0.9,
                "PROGRESS/PIVOT": 0.88,
                "NOT STUCK": 0.95,
                "SUMMARIZABLE": 0.97,
            },
        }
    )
    api.replies = [Reply(body=explained), Reply(body=scored)]

    not_summarizable = await client.decide(STATE, threshold=0.75)
    summarizable = await client.decide(STATE, threshold=0.75)

    assert (not_summarizable.probability, not_summarizable.verdict) == (0.18, "CONTINUE")
    assert (summarizable.probability, summarizable.verdict) == (0.86, "COMPRESS")
    assert not_summarizable.reason == summarizable.reason == "ok"
    for request in api.requests:
        assert "- SUMMARIZABLE: " in request.body["questions"][QUESTION_ID]["instructions"]


async def test_threshold_is_inclusive_and_below_it_continues(
    api: DecisionsServer, client: DecisionsApiClient
) -> None:
    api.replies = [Reply(body=answer(0.75)), Reply(body=answer(0.74)), Reply(body=answer(0.5))]

    at = await client.decide(STATE, threshold=0.75)
    below = await client.decide(STATE, threshold=0.75)
    custom = await client.decide(STATE, threshold=0.4)

    assert (at.verdict, below.verdict, custom.verdict) == ("COMPRESS", "CONTINUE", "COMPRESS")
    assert below.probability == pytest.approx(0.74)


async def test_rate_limited_then_success_honours_retry_after(
    api: DecisionsServer, client: DecisionsApiClient
) -> None:
    api.replies = [
        Reply(429, {"error": {"message": "Rate limit exceeded"}}, {"Retry-After": "0.15"}),
        Reply(body=answer(0.91)),
    ]

    decision = await client.decide(STATE, threshold=0.75)

    assert decision.verdict == "COMPRESS"
    assert decision.reason == "ok after 1 retries"
    first, second = api.requests
    assert second.at - first.at >= 0.14
    assert second.body == first.body


async def test_rate_limit_backoff_is_capped_and_then_fails_open(api: DecisionsServer) -> None:
    api.default = Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "3600"})
    client = DecisionsApiClient(
        api.url, api_key="k", timeout=5.0, max_retries=2, max_retry_wait=0.05
    )
    try:
        started = time.monotonic()
        decision = await client.decide(STATE, threshold=0.75)
        elapsed = time.monotonic() - started
    finally:
        await client.aclose()

    assert decision.verdict == "CONTINUE"
    assert decision.probability is None
    assert decision.reason.startswith("rate_limited")
    assert len(api.requests) == 3  # the first try and two retries
    assert elapsed < 2.0  # never the hour Retry-After asked for


async def test_timeout_fails_open_with_continue(api: DecisionsServer) -> None:
    api.default = Reply(body=answer(0.99), delay=1.0)
    client = DecisionsApiClient(api.url, api_key="k", timeout=0.3)
    try:
        started = time.monotonic()
        decision = await client.decide(STATE, threshold=0.75)
        elapsed = time.monotonic() - started
    finally:
        await client.aclose()

    assert decision.verdict == "CONTINUE"
    assert decision.probability is None
    assert decision.reason.startswith("timeout")
    assert elapsed < 0.9


@pytest.mark.parametrize(
    "body",
    [
        b"<html>Bad gateway</html>",
        {"model": "inception/mercury-decide", "usage": {}},
        {"answers": {QUESTION_ID: {"type": "noul", "refusal": "cannot answer"}}},
        answer(1.7),
        answer("high"),
    ],
    ids=["not-json", "no-answers", "refusal", "out-of-range", "not-a-number"],
)
async def test_malformed_answer_fails_open_with_continue(
    api: DecisionsServer, client: DecisionsApiClient, body: Any
) -> None:
    api.replies = [Reply(body=body)]

    decision = await client.decide(STATE, threshold=0.75)

    assert (decision.verdict, decision.probability) == ("CONTINUE", None)
    assert decision.reason.startswith("malformed_response")


async def test_http_errors_fail_open(api: DecisionsServer, client: DecisionsApiClient) -> None:
    api.replies = [Reply(401, {"error": {"message": "No auth credentials found"}})]
    unauthorized = await client.decide(STATE, threshold=0.75)
    api.default = Reply(503, {"error": {"message": "overloaded"}})
    unavailable = await client.decide(STATE, threshold=0.75)

    assert (unauthorized.verdict, unauthorized.reason[:8]) == ("CONTINUE", "http_401")
    assert "No auth credentials" in unauthorized.reason
    assert (unavailable.verdict, unavailable.reason[:8]) == ("CONTINUE", "http_503")
    assert len(api.requests) == 1 + 3  # 5xx is retried like 429


async def test_unreachable_server_fails_open() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = DecisionsApiClient(f"http://127.0.0.1:{port}", api_key="k", timeout=2.0)
    try:
        decision = await client.decide(STATE, threshold=0.75)
    finally:
        await client.aclose()

    assert (decision.verdict, decision.probability) == ("CONTINUE", None)
    assert decision.reason.startswith("network_error")


def test_noul_probability_reads_a_number_or_an_object() -> None:
    assert noul_probability(answer(0.3)) == 0.3
    assert noul_probability(answer(1)) == 1.0
    assert noul_probability({"answers": {QUESTION_ID: 0.6}}) == 0.6
    assert noul_probability(answer({"probability": 0.8})) == 0.8
    assert noul_probability({"answers": {QUESTION_ID: {"probability": 0.7}}}) == 0.7
    assert noul_probability(answer(True)) is None
    assert noul_probability(answer(float("nan"))) is None
    assert noul_probability({"answers": []}) is None
