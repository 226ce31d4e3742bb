"""The research turn's rules without a model: budgets, ceilings, the dual trigger with its
smart skip, evidence selection, citation extraction, the request-input prompt filter, and the
offline model's aspect and coverage rules."""

from __future__ import annotations

import json
import pathlib

import pytest
from google.adk.events.event import Event
from google.genai import types

from services.agent.research import evidence as ev
from services.agent.research.harness import (
    Ceilings,
    Harness,
    check_and_increment_tool_budget,
    should_checkpoint,
)
from services.agent.research.offline_llm import aspects_of, covered
from services.common.adk import compat as adk_compat


def test_each_extension_grows_all_three_ceilings_up_to_the_terminal_cap() -> None:
    harness = Harness()
    first = harness.initial()
    assert first == Ceilings(10, 7500, 15)
    second = first.extended(harness)
    third = second.extended(harness)
    assert second == Ceilings(15, 11250, 20)
    assert third == Ceilings(20, 15000, 25)
    assert Ceilings.from_dict(third.to_dict()) == third


def test_budget_warns_one_call_before_the_end_and_blocks_past_it() -> None:
    ceilings = Ceilings(10, 7500, 15)
    check = check_and_increment_tool_budget(7, 100, ceilings)
    assert check.allowed and check.calls == 8 and check.notice is None
    check = check_and_increment_tool_budget(8, 100, ceilings)  # the 9th call
    assert check.allowed and check.calls == 9 and "1 retrieval call left" in (check.notice or "")
    check = check_and_increment_tool_budget(10, 100, ceilings)
    assert not check.allowed and check.calls == 10 and "conclude_search" in (check.notice or "")
    # Words: a soft warning from 80% of the ceiling, blocked at the ceiling.
    check = check_and_increment_tool_budget(2, 6000, ceilings)
    assert check.allowed and "6000 of 7500 words" in (check.notice or "")
    assert not check_and_increment_tool_budget(2, 7500, ceilings).allowed
    # An extension's larger ceilings let the same counts through again.
    assert check_and_increment_tool_budget(10, 7500, Ceilings(15, 11250, 20)).allowed


def test_dual_trigger_and_smart_skip() -> None:
    harness = Harness()
    assert should_checkpoint(harness, ["a gap"], 0, False)  # reactive: gaps left
    assert should_checkpoint(harness, [], 0, True)  # proactive: the subagent asked
    assert not should_checkpoint(harness, [], 0, False)  # smart skip: nothing missing
    assert not should_checkpoint(harness, ["a gap"], 2, False)  # hard stop after two
    assert not should_checkpoint(Harness(enabled=False), ["a gap"], 0, True)


def _piece(cid: str, words: int, page: int = 1) -> dict:  # type: ignore[type-arg]
    return {"id": cid, "item_key": "ABCD1234", "page": page, "words": words, "text": "x"}


def test_selection_follows_the_rerank_order_within_chunks_and_words() -> None:
    evidence = [_piece("a", 100), _piece("b", 5000), _piece("c", 300), _piece("d", 50)]
    ranked = [("b", 0.9, 5000), ("c", 0.8, 300), ("a", 0.5, 100), ("d", 0.1, 50)]
    chosen = ev.select_evidence(evidence, ranked, Ceilings(10, 5350, 3))
    assert [p["id"] for p in chosen] == ["b", "c", "d"]  # "a" would pass the word ceiling
    # Without a reranker: retrieval order.
    assert [p["id"] for p in ev.select_evidence(evidence, None, Ceilings(10, 10**6, 2))] == [
        "a",
        "b",
    ]


def test_citations_are_read_back_with_their_pages() -> None:
    numbered = ev.number_evidence([_piece("a", 1, page=3), _piece("b", 1, page=9)])
    answer = "Claim [1, p. 3]. Other [2]. Range [2, pp. 9-10]. Unknown [7, p. 1]. Again [1, p. 3]."
    assert ev.extract_citations(answer, numbered) == [
        {"n": 1, "item_key": "ABCD1234", "title": "", "page": 3},
        {"n": 2, "item_key": "ABCD1234", "title": "", "page": 9},
    ]


def test_request_input_events_never_reach_a_prompt() -> None:
    adk_compat.apply()
    adk_compat.apply()  # idempotent
    call = Event(
        author="search_budget_checkpoint",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="interrupt_ext_1", name="adk_request_input", args={}
                    )
                )
            ],
        ),
    )
    answer = Event(
        author="user",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="interrupt_ext_1", name="adk_request_input", response={}
                    )
                )
            ],
        ),
    )
    text = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="q")]))
    include = adk_compat.event_reaches_prompt
    assert not include(call) and not include(answer)
    assert include(text)


def test_offline_aspects_and_coverage() -> None:
    assert aspects_of(
        "How does lmer choose its optimizer, and how does brms fit the same kind of model?"
    ) == ["How does lmer choose its optimizer", "how does brms fit the same kind of model"]
    paper = "The lmer function ... later, the nonlinear optimizer BOBYQA is used by default."
    assert covered("How does lmer choose its optimizer", [paper])
    assert not covered("how do quantum annealers schedule qubit couplers", [paper])


def test_interleave_gives_every_aspect_its_best_evidence_first() -> None:
    full = [("a", 0.9, 1), ("b", 0.8, 1), ("c", 0.1, 1)]
    aspect = [("d", 0.7, 1), ("a", 0.6, 1)]
    assert [cid for cid, _, _ in ev.interleave([full, aspect])] == ["a", "d", "b", "c"]
    assert ev.interleave([]) == []


def test_stems_join_the_forms_of_a_word() -> None:
    from services.agent.research.offline_llm import stem, terms

    assert {stem(w) for w in ("optimizer", "optimizers", "optimization")} == {"optim"}
    assert {stem(w) for w in ("fit", "fits", "fitting", "fitted")} == {"fit"}
    assert terms("How does brms fit the same kind of model?") == {"brm", "fit"}


async def test_offline_synthesis_reads_blocks_that_contain_numbered_lines() -> None:
    from google.adk.models.llm_request import LlmRequest

    from services.agent.research.offline_llm import OfflineLlm

    pieces = [
        {
            "id": "1",
            "kind": "chunk",
            "query": "seriation methods",
            "item_key": "SERIATN1",
            "title": "Getting Things in Order",
            "authors": ["Hahsler, Michael"],
            "year": 2008,
            "page": 16,
            "page_end": 16,
            "text": 'Methods:\n[1] "ARSA" "BBURCG"\n[5] "GW" "HC"\nSeriation orders objects '
            "so that similar objects are placed close together.",
            "words": 20,
        }
    ]
    numbered = ev.number_evidence(pieces)
    report = {"summary": "", "gaps": ["quantum annealing hardware"]}
    prompt = ev.synthesis_prompt(
        "What does seriation do, and what about quantum annealing hardware?",
        numbered,
        report,
        "",
        "",
    )
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=prompt)])])
    answer = await OfflineLlm(role="synthesizer")._synthesize(request)  # no reranker: words
    sources = answer.split("# Cited Sources", 1)[1]
    assert sources.strip().splitlines() == [
        "[1] Hahsler (2008). Getting Things in Order. Item SERIATN1, p. 16."
    ]
    quoted = [line for line in answer.splitlines() if line.startswith('"')]
    assert quoted == [
        '"Seriation orders objects so that similar objects are placed close together." [1, p. 16]'
    ]
    assert "**Not found in your library:** quantum annealing hardware." in answer
    assert ev.extract_citations(answer, numbered) == [
        {"n": 1, "item_key": "SERIATN1", "title": "Getting Things in Order", "page": 16}
    ]


def test_the_offline_search_gives_one_search_all_passages_and_parts_a_share() -> None:
    from google.adk.models.llm_request import LlmRequest

    from services.agent.research.offline_llm import PART_SEARCH_K, SEARCH_K, OfflineLlm

    def first_call(question: str) -> dict[str, object]:
        text = f"Research request: {question}"
        request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
        response = OfflineLlm(role="search_subagent")._subagent(request)
        assert response.content is not None and response.content.parts
        call = response.content.parts[0].function_call
        assert call is not None and call.name == "search_corpus"
        return dict(call.args or {})

    one = first_call("How is the number of non-seasonal differences d chosen?")
    assert one["k"] == SEARCH_K == 15  # the synthesizer's 15 passages from one search
    two = first_call("How is d chosen, and how are critical values obtained for m > 12?")
    assert two["k"] == PART_SEARCH_K < SEARCH_K


async def test_a_captured_synthesis_replays_to_the_same_answer(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/replay_answers.py composes answers again from what the synthesizer was given:
    the capture must hold the question, the evidence and the gaps it answered from."""
    from google.adk.models.llm_request import LlmRequest

    from services.agent.research.offline_answer import compose_answer
    from services.agent.research.offline_llm import CAPTURE_ENV, OFFLINE_NOTICE, OfflineLlm
    from services.agent.research.offline_sentences import parse_blocks

    piece = {
        "id": "1",
        "kind": "chunk",
        "item_key": "FCST0001",
        "title": "Automatic Time Series Forecasting",
        "authors": ["Hyndman, Rob"],
        "year": 2008,
        "page": 10,
        "page_end": 10,
        "text": "We choose d by applying successive KPSS unit-root tests to the data.",
        "words": 12,
    }
    numbered = ev.number_evidence([piece])
    question = "Which KPSS unit-root tests choose d, and what about tidal energy?"
    prompt = ev.synthesis_prompt(question, numbered, {"gaps": ["tidal energy"]}, "", "")
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=prompt)])])
    capture = tmp_path / "capture.jsonl"
    monkeypatch.setenv(CAPTURE_ENV, str(capture))
    answer = await OfflineLlm(role="synthesizer")._synthesize(request)
    await OfflineLlm(role="synthesizer")._synthesize(request)

    records = [json.loads(line) for line in capture.read_text().splitlines()]
    assert len(records) == 2  # appended, one line a synthesis
    record = records[0]
    assert record["question"] == question
    assert record["gaps"] == ["tidal energy"]
    assert [b.key for b in parse_blocks(record["evidence"])] == ["FCST0001"]
    replayed = await compose_answer(
        record["question"],
        parse_blocks(record["evidence"]),
        record["gaps"],
        None,
        notice=OFFLINE_NOTICE,
    )
    assert replayed == answer
    assert (
        '"We choose d by applying successive KPSS unit-root tests to the data." [1, p. 10]'
        in answer
    )

    monkeypatch.delenv(CAPTURE_ENV)
    await OfflineLlm(role="synthesizer")._synthesize(request)
    assert len(capture.read_text().splitlines()) == 2  # off unless asked for
