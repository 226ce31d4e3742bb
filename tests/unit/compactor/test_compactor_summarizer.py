"""Planning the slice, the summarizer prompt, both summarizers and the compaction event."""

from __future__ import annotations

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from services.common.adk.compat import get_contents
from services.common.adk.turns import extract_turns
from services.common.errors import Unavailable
from services.compactor.summarizer import (
    EXTRACTIVE_HEADER,
    MAX_TOOL_CONTENT_CHARS,
    CompactionPlan,
    ExtractiveSummarizer,
    ModelSummarizer,
    compaction_event,
    plan_compaction,
    summarizer_prompt,
)
from tests.support.scripted_llm import ScriptedLlm, ScriptedToolLlm
from tests.unit.compactor.session_events import COORDINATOR, SessionEvents


def _research_session(turns: int = 4) -> tuple[SessionEvents, list[str]]:
    s = SessionEvents()
    ids = [
        s.research_turn(
            f"Question {i}: what limits topic {i}?",
            f"Finding {i}. Topic {i} is limited by factor {i}.",
            prompt_tokens=40_000 + i,
        )
        for i in range(1, turns + 1)
    ]
    return s, ids


def _texts(contents: list[types.Content]) -> list[str]:
    out = []
    for content in contents:
        for part in content.parts or []:
            if part.text:
                out.append(part.text)
            if part.function_call:
                out.append(f"call:{part.function_call.name}:{part.function_call.args}")
            if part.function_response:
                out.append(f"response:{part.function_response.name}")
    return out


def test_plan_covers_turns_1_to_n_minus_k_with_their_scoped_events() -> None:
    s, ids = _research_session(4)

    plan = plan_compaction(s.events, 2)

    assert plan is not None
    assert [t.invocation_id for t in plan.new_turns] == ids[:2]
    assert [t.invocation_id for t in plan.retained_turns] == ids[2:]
    assert (plan.first_new_turn, plan.last_turn, plan.previous_summary) == (1, 2, None)
    assert plan.start_timestamp == s.events[0].timestamp
    turn_2 = [e for e in s.events if e.invocation_id == ids[1]]
    assert plan.end_timestamp == max(e.timestamp for e in turn_2)  # the final event of N-K
    assert all(plan.start_timestamp <= e.timestamp <= plan.end_timestamp for e in turn_2)
    scoped_2 = [e for e in turn_2 if e.isolation_scope]
    assert scoped_2 and all(e.timestamp <= plan.end_timestamp for e in scoped_2)
    retained = [e for e in s.events if e.invocation_id in ids[2:]]
    assert all(e.timestamp > plan.end_timestamp for e in retained)
    assert plan.new_events and all(e.isolation_scope is None for e in plan.new_events)
    assert {e.invocation_id for e in plan.new_events} == set(ids[:2])


def test_compaction_hides_turns_1_to_n_minus_k_in_adks_coordinator_contents() -> None:
    s, _ = _research_session(4)
    plan = plan_compaction(s.events, 2)
    assert plan is not None
    s.append(compaction_event(plan, "SUMMARY OF TURNS 1-2"))

    # ADK's own builder of an LlmRequest's contents, for the unscoped coordinator.
    texts = _texts(get_contents(None, s.events, COORDINATOR))

    assert texts[0] == "SUMMARY OF TURNS 1-2"
    assert texts[1:] == [
        "Question 3: what limits topic 3?",
        "call:search_library:{'request': 'Question 3: what limits topic 3?'}",
        "response:search_library",
        "Question 4: what limits topic 4?",
        "call:search_library:{'request': 'Question 4: what limits topic 4?'}",
        "response:search_library",
    ]
    # A scoped pipeline agent's view is untouched by the unscoped summary.
    scope = next(e.isolation_scope for e in s.events if e.isolation_scope)
    scoped_texts = _texts(get_contents(None, s.events, "search_subagent", isolation_scope=scope))
    assert "SUMMARY OF TURNS 1-2" not in scoped_texts


def test_plan_is_none_when_the_slice_would_be_empty() -> None:
    s, _ = _research_session(2)
    assert plan_compaction(s.events, 2) is None  # N <= K
    assert plan_compaction(s.events, 5) is None

    s.chat_turn("Q3", "A3")
    plan = plan_compaction(s.events, 2)
    assert plan is not None and len(plan.new_turns) == 1
    s.append(compaction_event(plan, "Summary of turn 1"))
    assert plan_compaction(s.events, 2) is None  # turn 1 is covered, turns 2-3 retained


def test_k_zero_summarizes_every_turn() -> None:
    s, ids = _research_session(3)

    plan = plan_compaction(s.events, 0)

    assert plan is not None
    assert [t.invocation_id for t in plan.new_turns] == ids
    assert plan.retained_turns == ()
    assert plan.end_timestamp == s.events[-1].timestamp


def test_rolling_plan_starts_at_the_previous_start_and_carries_its_summary() -> None:
    s, ids = _research_session(4)
    first = plan_compaction(s.events, 2)
    assert first is not None
    s.append(compaction_event(first, "Summary one: turns 1-2."))
    ids += [s.chat_turn("Q5?", "A5."), s.chat_turn("Q6?", "A6.")]

    plan = plan_compaction(s.events, 2)

    assert plan is not None
    assert plan.previous_summary == "Summary one: turns 1-2."
    assert plan.start_timestamp == first.start_timestamp
    assert [t.invocation_id for t in plan.new_turns] == ids[2:4]
    assert (plan.first_new_turn, plan.last_turn, plan.subsumed_compactions) == (3, 4, 1)
    assert all(e.timestamp > first.end_timestamp for e in plan.new_events)
    assert plan.end_timestamp == max(e.timestamp for e in s.events if e.invocation_id == ids[3])


def test_summarizer_prompt_reads_unscoped_events_with_long_tool_content() -> None:
    s = SessionEvents()
    long_answer = "Synthesis sentence [1, p. 2]. " * 830 + "\n\n# Cited Sources\n[1] Doe 2020"
    assert 24_000 < len(long_answer) < MAX_TOOL_CONTENT_CHARS
    s.research_turn("Q1 about anodes?", "Short findings.", answer=long_answer)
    huge = "x" * (MAX_TOOL_CONTENT_CHARS + 5_000)
    s.research_turn("Q2 about cathodes?", "More findings.", answer=huge)
    inv, call_id = s.start_research("Q3 paused then resumed?")
    s.resume(inv, s.checkpoint(inv, call_id))
    s.finish_research(inv, call_id, summary="Resumed findings.")
    s.chat_turn("Q4", "A4")
    s.chat_turn("Q5", "A5")
    s.append(compaction_event(_plan(s, 4), "Previous summary text."))
    s.chat_turn("Q6", "A6")

    plan = _plan(s, 2)
    prompt = summarizer_prompt(plan)

    assert prompt.startswith("Existing Conversation Summary:\nPrevious summary text.\n\n")
    assert "\n\nNew Completed Turns to Integrate:\n" in prompt
    assert "user: Q2 about cathodes?" in prompt and "user: Q4" in prompt
    assert "user: Q1 about anodes?" not in prompt  # covered by the previous summary
    first = summarizer_prompt(_plan_without_last(s))
    assert long_answer.strip() in first  # a research answer reaches the prompt whole
    assert "# Cited Sources" in first
    assert "x" * MAX_TOOL_CONTENT_CHARS + "... [truncated 5000 chars]" in prompt
    assert "RAW CHUNK" not in prompt and "RAW CHUNK" not in first  # scoped: never
    assert "adk_request_input" not in prompt
    assert "coordinator called tool: search_library" in prompt


def _plan(s: SessionEvents, k: int) -> CompactionPlan:
    plan = plan_compaction(s.events, k)
    assert plan is not None
    return plan


def _plan_without_last(s: SessionEvents) -> CompactionPlan:
    """The first plan of the session (before its compaction)."""
    compaction_at = next(i for i, e in enumerate(s.events) if e.actions.compaction)
    plan = plan_compaction(s.events[:compaction_at], 4)
    assert plan is not None
    return plan


async def test_extractive_summarizer_is_deterministic_and_merges_the_previous_summary() -> None:
    s, _ = _research_session(4)
    plan = _plan(s, 2)
    summarizer = ExtractiveSummarizer()

    text = (await summarizer.summarize(plan)).text

    assert text == (await summarizer.summarize(plan)).text
    assert text.startswith(EXTRACTIVE_HEADER)
    assert "- Turn 1: the user asked: Question 1: what limits topic 1?" in text
    assert "Answer (library research): Finding 1. Topic 1 is limited by factor 1." in text
    assert "Question 3" not in text

    s.append(compaction_event(plan, text))
    s.chat_turn("Q5?", "A5 first sentence. A5 second sentence. A5 third sentence.")
    s.chat_turn("Q6?", "A6.")
    s.chat_turn("Q7?", "A7.")
    merged = (await summarizer.summarize(_plan(s, 2))).text

    assert merged.count(EXTRACTIVE_HEADER) == 1
    for n in (1, 2, 3, 4, 5):
        assert f"- Turn {n}: " in merged
    assert "A5 first sentence. A5 second sentence." in merged
    assert "third sentence" not in merged
    assert "Q6?" not in merged


async def test_extractive_summary_stays_bounded_keeping_the_newest_turns() -> None:
    s = SessionEvents()
    for i in range(30):
        s.chat_turn(f"Question {i} " + "about priors " * 20, f"Answer {i}. " + "words " * 100)
    summarizer = ExtractiveSummarizer(max_chars=1500)

    text = (await summarizer.summarize(_plan(s, 2))).text

    assert len(text) <= 1500
    assert "- Turn 28: " in text
    assert "- Turn 1: " not in text
    dropped = int(text.split("\n")[1].strip("()").split()[0])
    assert text.split("\n")[1] == f"({dropped} older entries dropped)"
    assert dropped == 28 - text.count("- Turn ")

    s.append(compaction_event(_plan(s, 2), text))
    s.chat_turn("Q30", "A30")
    s.chat_turn("Q31", "A31")
    again = (await summarizer.summarize(_plan(s, 2))).text
    assert len(again) <= 1500
    assert "- Turn 30: the user asked: Question 29 " in again  # turns 29 and 30 added
    assert "Q30" not in again  # turns 31 and 32 are retained verbatim
    assert again.count("- Turn ") + int(again.split("\n")[1].strip("()").split()[0]) == 30


async def test_extractive_summary_folds_in_a_model_written_summary() -> None:
    s, _ = _research_session(3)
    s.append(compaction_event(_plan(s, 2), "## Conversation summary\nThe user studied topic 1."))
    s.chat_turn("Q4", "A4")

    text = (await ExtractiveSummarizer().summarize(_plan(s, 2))).text

    assert "- Earlier summary: ## Conversation summary The user studied topic 1." in text
    assert "- Turn 2: " in text


async def test_model_summarizer_makes_one_call_with_the_consolidation_prompt() -> None:
    s, _ = _research_session(3)
    llm = ScriptedLlm(replies=["## Conversation summary\nTopics 1 was limited by factor 1."])

    summary = await ModelSummarizer(llm).summarize(_plan(s, 2))

    assert summary.text == "## Conversation summary\nTopics 1 was limited by factor 1."
    [request] = llm.requests
    [content] = request.contents
    prompt = content.parts[0].text
    assert "ONE consolidated summary" in prompt
    assert "Existing Conversation Summary:\n(none yet)" in prompt
    assert "New Completed Turns to Integrate:\nuser: Question 1: what limits topic 1?" in prompt


async def test_model_summarizer_failures_are_unavailable() -> None:
    s, _ = _research_session(3)
    plan = _plan(s, 2)
    empty = ScriptedToolLlm(
        replies=[LlmResponse(content=types.Content(role="model", parts=[types.Part(text=" ")]))]
    )
    error = ScriptedToolLlm(replies=[LlmResponse(error_code="429", error_message="quota")])

    with pytest.raises(Unavailable) as no_text:
        await ModelSummarizer(empty).summarize(plan)
    with pytest.raises(Unavailable) as failed:
        await ModelSummarizer(error).summarize(plan)

    assert no_text.value.code == failed.value.code == "compaction_summarizer_failed"
    assert "quota" in str(failed.value)


def test_model_summarizer_resolves_a_model_name_with_adks_registry() -> None:
    summarizer = ModelSummarizer("gemini-2.5-flash")

    assert type(summarizer.llm).__name__ == "Gemini"
    assert summarizer.llm.model == "gemini-2.5-flash"


def test_compaction_event_shape() -> None:
    s, _ = _research_session(3)
    plan = _plan(s, 2)

    event = compaction_event(plan, "  The summary.  ")

    assert event.author == "user"
    assert event.content is None
    assert event.isolation_scope is None
    compaction = event.actions.compaction
    assert compaction is not None
    assert (compaction.start_timestamp, compaction.end_timestamp) == (
        plan.start_timestamp,
        plan.end_timestamp,
    )
    assert compaction.compacted_content.role == "model"
    assert compaction.compacted_content.parts[0].text == "The summary."
    assert event.invocation_id not in {t.invocation_id for t in extract_turns(s.events)}
    with pytest.raises(ValueError):
        compaction_event(plan, "   ")
