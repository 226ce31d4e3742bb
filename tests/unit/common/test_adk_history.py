"""Which events are live (rewinds applied; compaction events kept or not) and the pending
deep-research checkpoint, as the sessions, agent and compactor services all read them."""

from __future__ import annotations

from google.adk.events.event import Event

from services.common.adk.history import (
    find_pending_hitl,
    is_compaction,
    is_request_input_event,
    is_rewind,
    live_events,
    live_events_without_compactions,
)
from services.common.adk.internals import build_abort_events
from tests.support.adk_events import (
    CHECKPOINT_PAYLOAD,
    checkpointed_turn,
    compaction,
    model_text,
    request_input,
    request_input_response,
    rewind,
    user_text,
)


def _texts(events: list[Event]) -> list[str]:
    return [p.text or "" for e in events if e.content for p in e.content.parts or []]


# --- live events -----------------------------------------------------------------------------


def test_live_events_keep_compactions_and_the_ui_reading_drops_them() -> None:
    first = user_text("q1", invocation_id="inv-1", ts=100.0)
    answer = model_text("a1", invocation_id="inv-1", ts=101.0)
    summary = compaction(100.0, 101.0, "SUMMARY OF THE TURN")
    second = user_text("q2", invocation_id="inv-2", ts=102.0)
    events = [first, answer, summary, second]

    assert [e.id for e in live_events(events)] == [first.id, answer.id, summary.id, second.id]
    assert [e.id for e in live_events_without_compactions(events)] == [
        first.id,
        answer.id,
        second.id,
    ]
    assert is_compaction(summary) and not is_compaction(first)


def test_both_readings_drop_a_rewound_invocation_and_its_marker() -> None:
    q1 = user_text("q1", invocation_id="inv-1")
    a1 = model_text("a1", invocation_id="inv-1")
    q2 = user_text("q2 (to be rewound)", invocation_id="inv-2")
    summary = compaction(q1.timestamp, a1.timestamp, "SUMMARY")
    marker = rewind("inv-2")
    q3 = user_text("q3", invocation_id="inv-3")
    events = [q1, a1, q2, summary, marker, q3]

    assert is_rewind(marker) and not is_rewind(q1)
    # The compaction was written after inv-2 started: rewinding inv-2 takes it away too.
    assert [e.id for e in live_events(events)] == [q1.id, a1.id, q3.id]
    assert [e.id for e in live_events_without_compactions(events)] == [q1.id, a1.id, q3.id]


def test_live_events_accept_any_sequence_and_leave_it_alone() -> None:
    events = (user_text("q1", invocation_id="inv-1"), rewind("inv-1"))
    assert live_events(events) == []
    assert len(events) == 2


def test_request_input_events_are_the_call_and_its_answer() -> None:
    [_, searching, call] = checkpointed_turn()
    answer = request_input_response("interrupt_ext_1", invocation_id="inv-9", response={})
    assert is_request_input_event(call) and is_request_input_event(answer)
    assert not is_request_input_event(searching)


# --- the pending checkpoint ------------------------------------------------------------------


def test_pending_hitl_from_unanswered_request_input() -> None:
    assert find_pending_hitl(checkpointed_turn()) == {
        "interrupt_id": "interrupt_ext_1",
        "invocation_id": "inv-9",
        "message": "Deep research limit reached. Continue?",
        "payload": CHECKPOINT_PAYLOAD,
    }


def test_no_pending_hitl_without_checkpoint() -> None:
    events = [user_text("hi", invocation_id="inv-1"), model_text("hello", invocation_id="inv-1")]
    assert find_pending_hitl(events) is None


def test_pending_hitl_cleared_once_answered() -> None:
    events = [
        *checkpointed_turn(),
        request_input_response(
            "interrupt_ext_1", invocation_id="inv-9", response={"decision": "stop"}
        ),
    ]
    assert find_pending_hitl(events) is None


def test_answer_to_another_id_does_not_clear() -> None:
    events = [
        *checkpointed_turn(),
        request_input_response("interrupt_ext_0", invocation_id="inv-9", response={}),
    ]
    pending = find_pending_hitl(events)
    assert pending is not None and pending["interrupt_id"] == "interrupt_ext_1"


def test_pending_hitl_cleared_when_invocation_rewound() -> None:
    events = [
        user_text("earlier", invocation_id="inv-1"),
        model_text("earlier answer", invocation_id="inv-1"),
        *checkpointed_turn(inv="inv-9"),
        rewind("inv-9"),
    ]
    assert find_pending_hitl(events) is None
    assert _texts(live_events_without_compactions(events)) == ["earlier", "earlier answer"]


def test_second_checkpoint_open_after_first_answered() -> None:
    inv = "inv-9"
    events = [
        *checkpointed_turn("interrupt_ext_1", inv),
        request_input_response("interrupt_ext_1", invocation_id=inv, response={"go": True}),
        model_text("searching more", invocation_id=inv),
        request_input(
            "interrupt_ext_2", invocation_id=inv, payload={"extension": 2}, message="Again?"
        ),
    ]
    assert find_pending_hitl(events) == {
        "interrupt_id": "interrupt_ext_2",
        "invocation_id": inv,
        "message": "Again?",
        "payload": {"extension": 2},
    }


def test_only_second_checkpoint_answered_leaves_first_open() -> None:
    inv = "inv-9"
    events = [
        *checkpointed_turn("interrupt_ext_1", inv),
        request_input("interrupt_ext_2", invocation_id=inv, payload={}, message="Again?"),
        request_input_response("interrupt_ext_2", invocation_id=inv, response={}),
    ]
    pending = find_pending_hitl(events)
    assert pending is not None and pending["interrupt_id"] == "interrupt_ext_1"


def test_a_checkpoint_of_an_aborted_invocation_is_not_pending() -> None:
    events = [
        user_text("q", invocation_id="inv-1"),
        request_input("interrupt_ext_1", invocation_id="inv-1", payload={}, message="m"),
    ]
    assert find_pending_hitl(events) is not None
    sealed = build_abort_events(
        events, invocation_id="inv-1", root_agent_name="coordinator", branch=None
    )
    assert sealed  # ADK answers the dangling call with an error, authored by the node
    assert find_pending_hitl(events + sealed) is None
