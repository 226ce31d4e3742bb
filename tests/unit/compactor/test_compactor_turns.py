"""Turn extraction, the live compaction, coordinator prompt tokens and the decision state."""

from __future__ import annotations

from services.common.adk.history import live_events
from services.common.adk.turns import (
    ANSWER_FALLBACK_CHARS,
    Turn,
    coordinator_prompt_tokens,
    extract_turns,
    prior_compaction,
    turns_since,
)
from services.compactor.turns import decision_state, serialize_dialogue
from tests.unit.compactor.session_events import SessionEvents


def test_research_and_conversational_turns() -> None:
    s = SessionEvents()
    research = s.research_turn(
        "How does lme4 pick its optimizer?",
        "lme4 uses BOBYQA by default for linear mixed models.",
        prompt_tokens=12_000,
    )
    chat = s.chat_turn("Thanks! Can you say that in one line?", "BOBYQA, by default.")

    turns = extract_turns(s.events)

    assert [t.invocation_id for t in turns] == [research, chat]
    first, second = turns
    assert first.user_text == "How does lme4 pick its optimizer?"
    assert first.assistant_text == "lme4 uses BOBYQA by default for linear mixed models."
    assert first.is_research and not second.is_research
    assert first.prompt_tokens == 12_000  # the coordinator's count, not the subagent's 90k
    assert second.assistant_text == "BOBYQA, by default."
    research_events = [e for e in s.events if e.invocation_id == research]
    assert first.first_timestamp == research_events[0].timestamp
    assert first.last_timestamp == research_events[-1].timestamp


def test_research_reply_falls_back_to_the_answer_without_bibliography() -> None:
    s = SessionEvents()
    answer = "Plating thickens the SEI. " * 60 + "\n\n# Cited Sources\n[1] Doe 2020"
    s.research_turn("Why does plating happen?", "", answer=answer)

    [turn] = extract_turns(s.events)

    assert "Cited Sources" not in turn.assistant_text
    assert turn.assistant_text.startswith("Plating thickens the SEI.")
    assert len(turn.assistant_text) <= ANSWER_FALLBACK_CHARS


def test_paused_turn_is_not_completed_until_resumed_and_answered() -> None:
    s = SessionEvents()
    s.chat_turn("Hello", "Hi!")
    inv, call_id = s.start_research("What limits graphene transfer quality?")
    interrupt = s.checkpoint(inv, call_id)

    assert [t.user_text for t in extract_turns(s.events)] == ["Hello"]

    s.resume(inv, interrupt)
    s.finish_research(inv, call_id, summary="Wrinkles, grain boundaries and PMMA residue.")
    turns = extract_turns(s.events)

    assert [t.user_text for t in turns] == ["Hello", "What limits graphene transfer quality?"]
    assert turns[1].assistant_text == "Wrinkles, grain boundaries and PMMA residue."


def test_rewound_turns_are_not_turns() -> None:
    s = SessionEvents()
    s.chat_turn("Q1", "A1")
    rewound = s.chat_turn("Q2 (regretted)", "A2")
    s.rewind(rewound)
    s.chat_turn("Q2 again", "A2 again")

    assert [t.user_text for t in extract_turns(s.events)] == ["Q1", "Q2 again"]


def test_coordinator_prompt_tokens_ignores_subagent_events() -> None:
    s = SessionEvents()
    s.chat_turn("Q1", "A1", prompt_tokens=8_000)
    # The research turn's subagent (90k) and synthesizer (120k) report far more, but scoped.
    s.research_turn("Q2", "Findings.", prompt_tokens=9_500, subagent_tokens=90_000)

    assert coordinator_prompt_tokens(s.events) == 9_500
    scoped = [
        e.usage_metadata.prompt_token_count
        for e in s.events
        if e.isolation_scope and e.usage_metadata
    ]
    assert max(scoped) == 120_000  # they exist; the coordinator's count is what counts
    assert coordinator_prompt_tokens([e for e in s.events if e.isolation_scope]) is None


def test_prior_compaction_is_the_one_adk_keeps() -> None:
    s = SessionEvents()
    s.chat_turn("Q1", "A1")
    s.chat_turn("Q2", "A2")
    t_first = s.events[0].timestamp
    s.compaction(t_first, s.events[1].timestamp, "Summary of turn 1")
    s.compaction(t_first, s.events[3].timestamp, "Summary of turns 1-2")
    s.chat_turn("Q3", "A3")

    prior = prior_compaction(s.events)

    assert prior is not None
    assert prior.summary_text == "Summary of turns 1-2"  # the contained range is subsumed
    assert (prior.start_timestamp, prior.end_timestamp) == (t_first, s.events[3].timestamp)
    assert [t.user_text for t in turns_since(extract_turns(s.events), prior)] == ["Q3"]


def test_a_rewind_before_a_compaction_resurrects_the_raw_turns() -> None:
    s = SessionEvents()
    s.chat_turn("Q1", "A1")
    s.chat_turn("Q2", "A2")
    third = s.chat_turn("Q3", "A3")
    s.compaction(s.events[0].timestamp, s.events[3].timestamp, "Summary of turns 1-2")
    s.rewind(third)

    assert prior_compaction(s.events) is None
    assert [t.user_text for t in extract_turns(s.events)] == ["Q1", "Q2"]
    assert len(live_events(s.events)) == 4


def _turn(i: int, user: str, assistant: str) -> Turn:
    return Turn(f"e-{i}", user, assistant, float(i), float(i) + 0.5)


def test_decision_state_is_serial_dialogue() -> None:
    turns = [_turn(1, "Q one?", "A one."), _turn(2, "Q two?", "A two."), _turn(3, "Q3?", "A3.")]

    state = decision_state(turns)

    assert state.earlier_discussion == (
        "**User**: Q one?\n**Assistant**: A one.\n\n**User**: Q two?\n**Assistant**: A two."
    )
    assert state.latest_turn == "**User**: Q3?\n**Assistant**: A3."
    assert serialize_dialogue(turns[:2]) == state.earlier_discussion


def test_decision_state_fits_500_tokens_dropping_the_oldest_turns_first() -> None:
    turns = [
        _turn(i, f"Question {i} " + "about mixed models " * 10, "Answer " * 80) for i in range(8)
    ]
    turns.append(_turn(8, "Latest question?", "Latest answer " * 40))

    state = decision_state(turns)

    total = len(state.earlier_discussion) + len(state.latest_turn)
    assert total <= 500 * 4
    assert state.latest_turn.endswith(("Latest answer " * 40).strip())  # kept whole
    assert "Question 7" in state.earlier_discussion  # the newest earlier turns stay
    assert "Question 0" not in state.earlier_discussion  # the oldest went first


def test_decision_state_cuts_an_oversized_latest_turn() -> None:
    turns = [_turn(1, "Q1", "A1"), _turn(2, "Huge?", "word " * 3000)]

    state = decision_state(turns)

    assert len(state.latest_turn) <= 2000
    assert state.latest_turn.startswith("**User**: Huge?\n**Assistant**: word")
    assert state.latest_turn.endswith("…")
