"""ADK events -> the UI session object: rewinds, compaction, thoughts, tool calls, usage.

Which events are live and the pending checkpoint: tests/unit/common/test_adk_history.py."""

from __future__ import annotations

import json
import uuid

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.session import Session
from google.genai import types

from services.agent.research.turn_scope import prompt_parts, scope_state
from services.common.adk.history import live_events_without_compactions
from services.common.adk.turns import extract_turns
from services.common.turn_scope import TurnScope, image_digest
from services.common.turn_usage import USAGE_KEY
from services.sessions.formatting import format_messages, format_session_for_ui
from services.sessions.images import find_prompt_image
from tests.support.adk_events import (
    CHECKPOINT_PAYLOAD,
    checkpointed_turn,
    compaction,
    model_text,
    request_input,
    request_input_response,
    rewind,
    tool_call,
    user_text,
)

PAYLOAD = CHECKPOINT_PAYLOAD


def _texts(messages: list[dict]) -> list[str]:
    return [m["text"] for m in messages]


def _session(events: list[Event], *, last_update_time: float = 1_700_000_500.0) -> Session:
    return Session(
        id="session-abc",
        app_name="zocrates",
        user_id="local",
        events=events,
        last_update_time=last_update_time,
    )


# --- messages -------------------------------------------------------------------------------


def test_user_text_message() -> None:
    event = user_text("What is attention?", invocation_id="inv-1", ts=1_700_000_000.0)
    [message] = format_messages([event])
    assert message["role"] == "user"
    assert message["author"] == "user"
    assert message["text"] == "What is attention?"
    assert message["thought"] is False
    assert message["intermediate"] is False
    assert message["id"] == event.id
    assert message["invocation_id"] == "inv-1"
    assert message["timestamp"] == 1_700_000_000.0
    assert "tool_calls" not in message
    assert "context" not in message


def test_model_event_with_thought_and_text_gives_two_messages() -> None:
    event = model_text("The answer.", thought="Let me think.", invocation_id="inv-1")
    messages = format_messages([event])
    assert [(m["text"], m["thought"]) for m in messages] == [
        ("Let me think.", True),
        ("The answer.", False),
    ]
    assert all(m["role"] == "assistant" for m in messages)
    assert all(m["author"] == "coordinator" for m in messages)
    assert all(m["id"] == event.id for m in messages)


def test_model_event_without_thought_gives_one_message() -> None:
    messages = format_messages([model_text("Plain.", invocation_id="inv-1")])
    assert [(m["text"], m["thought"]) for m in messages] == [("Plain.", False)]


def test_function_response_only_user_events_are_dropped() -> None:
    events = [
        user_text("go deep", invocation_id="inv-1"),
        request_input("interrupt_ext_1", invocation_id="inv-1", payload=PAYLOAD, message="More?"),
        request_input_response(
            "interrupt_ext_1", invocation_id="inv-1", response={"decision": "continue"}
        ),
        model_text("Done.", invocation_id="inv-1"),
    ]
    messages = format_messages(events)
    assert _texts(messages) == ["go deep", "Done."]
    assert [m["role"] for m in messages] == ["user", "assistant"]


def test_compaction_events_are_dropped() -> None:
    first = user_text("q1", invocation_id="inv-1", ts=100.0)
    answer = model_text("a1", invocation_id="inv-1", ts=101.0)
    summary = compaction(100.0, 101.0, "SUMMARY OF THE TURN")
    second = user_text("q2", invocation_id="inv-2", ts=102.0)
    events = [first, answer, summary, second]

    assert summary not in live_events_without_compactions(events)
    assert [e.id for e in live_events_without_compactions(events)] == [
        first.id,
        answer.id,
        second.id,
    ]
    messages = format_messages(events)
    assert _texts(messages) == ["q1", "a1", "q2"]
    assert all("SUMMARY" not in m["text"] for m in messages)


def test_rewind_removes_rewound_invocation_and_marker() -> None:
    q1 = user_text("q1", invocation_id="inv-1")
    a1 = model_text("a1", invocation_id="inv-1")
    q2 = user_text("q2 (to be rewound)", invocation_id="inv-2")
    a2 = model_text("a2 (to be rewound)", invocation_id="inv-2")
    marker = rewind("inv-2")
    q3 = user_text("q3", invocation_id="inv-3")
    events = [q1, a1, q2, a2, marker, q3]

    live_ids = [e.id for e in live_events_without_compactions(events)]
    assert live_ids == [q1.id, a1.id, q3.id]
    messages = format_messages(events)
    assert _texts(messages) == ["q1", "a1", "q3"]
    assert marker.id not in {m["id"] for m in messages}
    assert {m["invocation_id"] for m in messages} == {"inv-1", "inv-3"}


def test_rewind_of_first_invocation_empties_history() -> None:
    events = [
        user_text("q1", invocation_id="inv-1"),
        model_text("a1", invocation_id="inv-1"),
        rewind("inv-1"),
    ]
    assert format_messages(events) == []


def test_isolation_scope_events_are_kept_but_intermediate() -> None:
    events = [
        user_text("find papers", invocation_id="inv-1"),
        model_text(
            "subagent notes",
            invocation_id="inv-1",
            author="search_agent",
            isolation_scope="search-1",
        ),
        model_text("final", invocation_id="inv-1"),
    ]
    messages = format_messages(events)
    assert [(m["text"], m["intermediate"]) for m in messages] == [
        ("find papers", False),
        ("subagent notes", True),
        ("final", False),
    ]
    assert messages[1]["author"] == "search_agent"


def test_tool_calls_listed_with_names_and_args() -> None:
    call = tool_call("search_library", {"query": "transformers", "k": 5}, invocation_id="inv-1")
    [message] = format_messages([call])
    assert message["role"] == "assistant"
    assert message["text"] == ""
    assert message["tool_calls"] == [
        {"name": "search_library", "args": {"query": "transformers", "k": 5}}
    ]


def _tool_result(response: dict[str, object]) -> Event:
    fr = types.FunctionResponse(id="call-1", name="search_library", response=response)
    return Event(
        author="coordinator",
        invocation_id="inv-1",
        content=types.Content(role="user", parts=[types.Part(function_response=fr)]),
    )


def test_tool_results_listed_by_name() -> None:
    [message] = format_messages([_tool_result({"hits": 3})])
    assert message["tool_results"] == [{"name": "search_library"}]
    assert "tool_calls" not in message


def test_the_research_tool_result_keeps_its_citations_and_their_checks() -> None:
    citation = {"n": 1, "item_key": "K1", "page": 10, "quote": "We choose d by KPSS tests.",
                "verified": False, "found_on_page": 11}  # fmt: skip
    result = _tool_result({"answer": "...", "citations": [citation, "junk"]})
    [message] = format_messages([result])
    assert message["tool_results"] == [{"name": "search_library", "citations": [citation]}]


def test_request_input_calls_never_appear_as_tool_calls() -> None:
    lone = request_input("interrupt_ext_1", invocation_id="inv-1", payload=PAYLOAD, message="m")
    assert format_messages([lone]) == []

    mixed = Event(
        author="coordinator",
        invocation_id="inv-2",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="c1", name="search_online_literature", args={"q": "x"}
                    )
                ),
                types.Part(
                    function_call=types.FunctionCall(
                        id="interrupt_ext_2",
                        name="adk_request_input",
                        args={"interruptId": "interrupt_ext_2", "message": "m", "payload": {}},
                    )
                ),
            ],
        ),
    )
    [message] = format_messages([mixed])
    assert [c["name"] for c in message["tool_calls"]] == ["search_online_literature"]


def test_partial_events_are_skipped() -> None:
    partial = model_text("stream chu", invocation_id="inv-1")
    partial.partial = True
    final = model_text("stream chunk done", invocation_id="inv-1")
    assert _texts(format_messages([partial, final])) == ["stream chunk done"]


def test_user_turn_context_is_exposed() -> None:
    delta = {
        "snippets": [{"text": "attention is all you need", "item_key": "ABCD1234"}],
        "active_context_items": [{"item_key": "ABCD1234", "title": "Transformers"}],
        "active_mode": "papers",
        "title": "not part of the turn context",
    }
    [message] = format_messages([user_text("explain", invocation_id="inv-1", state_delta=delta)])
    assert message["context"] == {
        "snippets": delta["snippets"],
        "active_context_items": delta["active_context_items"],
        "active_mode": "papers",
    }


def test_user_turn_context_subset_and_none_for_library_scope() -> None:
    delta = {"active_context_items": None, "active_mode": "library"}
    [message] = format_messages([user_text("q", invocation_id="inv-1", state_delta=delta)])
    assert message["context"] == {"active_context_items": None, "active_mode": "library"}


# --- the whole session ---------------------------------------------------------------------


def test_format_session_for_ui_shape_and_json() -> None:
    delta = {"snippets": [{"text": "s"}], "active_mode": "papers"}
    events = [
        user_text("q", invocation_id="inv-1", state_delta=delta),
        model_text("a", thought="t", invocation_id="inv-1"),
        tool_call("search_library", {"query": "x", "filters": {"year": 2020}}, invocation_id="i2"),
        *checkpointed_turn(inv="inv-3"),
    ]
    session = _session(events, last_update_time=1_700_000_999.5)
    out = format_session_for_ui(session, title="My chat", created_at=1_700_000_000.25)

    assert set(out) == {"id", "title", "created_at", "updated_at", "messages", "pending_hitl"}
    assert out["id"] == "session-abc"
    assert out["title"] == "My chat"
    assert out["created_at"] == 1_700_000_000.25
    assert out["updated_at"] == 1_700_000_999.5
    assert out["pending_hitl"]["interrupt_id"] == "interrupt_ext_1"
    assert out["messages"][0]["context"] == delta
    assert _texts(out["messages"]) == ["q", "t", "a", "", "deep research please", "searching"]

    round_tripped = json.loads(json.dumps(out))
    assert round_tripped == out


def test_format_session_for_ui_empty_session() -> None:
    out = format_session_for_ui(_session([]), title="New Chat", created_at=1.0)
    assert out["messages"] == []
    assert out["pending_hitl"] is None
    json.dumps(out)


def test_formatting_does_not_mutate_events() -> None:
    events = [
        user_text("q1", invocation_id="inv-1"),
        rewind("inv-1"),
        user_text("q2", invocation_id=str(uuid.uuid4())),
    ]
    before = [e.model_dump() for e in events]
    format_session_for_ui(_session(events), title="t", created_at=0.0)
    assert [e.model_dump() for e in events] == before


# --- usage ----------------------------------------------------------------------------------


def _stamped(event: Event, tokens_in: int, tokens_out: int, cost: float | None) -> Event:
    event.custom_metadata = {
        USAGE_KEY: {
            "model": "openai/gpt-4o-mini",
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "cost_usd": cost,
        }
    }
    return event


def test_each_turn_s_last_answer_message_carries_the_turn_s_usage() -> None:
    scoped = {"invocation_id": "inv-1", "isolation_scope": "pipe-1"}
    call = tool_call("search_library", {"request": "first?"}, invocation_id="inv-1")
    events = [
        user_text("first?", invocation_id="inv-1"),
        _stamped(call, 100, 10, 0.001),
        _stamped(model_text("notes", author="search_subagent", **scoped), 200, 20, 0.002),
        _stamped(
            model_text("answer", author="synthesizer", thought="hmm", **scoped), 300, 30, 0.003
        ),
        _tool_result({"answer": "answer"}),  # inv-1's closing step
        model_text("scratch", author="search_subagent", **scoped),
        user_text("second?", invocation_id="inv-2"),
        model_text("offline answer", invocation_id="inv-2"),  # no stamp: the offline model
    ]
    messages = format_messages(events)
    # The turn's last message that is neither a thought nor an intermediate step.
    (last,) = [m for m in messages if "usage" in m]
    assert last["tool_results"] == [{"name": "search_library"}]
    assert last["invocation_id"] == "inv-1"
    assert last["usage"]["model"] == "openai/gpt-4o-mini"
    assert (last["usage"]["input_tokens"], last["usage"]["output_tokens"]) == (600, 60)
    assert last["usage"]["cost_usd"] == pytest.approx(0.006)


def test_a_rewound_turn_s_usage_is_gone_with_it() -> None:
    events = [
        user_text("q", invocation_id="inv-1"),
        _stamped(model_text("a", invocation_id="inv-1"), 10, 1, None),
        rewind("inv-1"),
    ]
    assert format_messages(events) == []


# --- image snippets -------------------------------------------------------------------------


def test_a_prompt_with_an_image_is_its_text_with_the_images_metadata_as_context() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x07" * 40
    image = {
        "kind": "image",
        "text": "Figure 2",
        "item_key": "ABCD1234",
        "page": 4,
        "title": "lme4",
        "image": {"mime_type": "image/png", "data": png},
    }
    state = scope_state(TurnScope(snippets=[image]))
    prompt = Event(
        id="evt-image",
        author="user",
        invocation_id="inv-1",
        content=types.Content(role="user", parts=prompt_parts("What does it show?", [image])),
        actions=EventActions(state_delta=state),
        timestamp=1_700_000_000.0,
    )
    answer = model_text("It shows profiles.", invocation_id="inv-1", ts=1_700_000_001.0)
    # Stored and read back as the sessions service does (JSON, bytes as base64).
    stored = [Event.model_validate_json(e.model_dump_json()) for e in (prompt, answer)]
    user, reply = format_messages(stored)
    assert user["text"] == "What does it show?"
    [snippet] = user["context"]["snippets"]
    assert snippet["image"] == {
        "mime_type": "image/png",
        "size": len(png),
        "sha256": image_digest(png),
        "part": 1,
    }
    assert "data" not in json.dumps(user["context"])
    assert reply["text"] == "It shows profiles."
    # Compaction reads the same turn: its user text, without the image.
    [turn] = extract_turns(stored)
    assert turn.user_text == "What does it show?" and turn.assistant_text == "It shows profiles."
    # The sessions service finds the image by the name the context gives.
    found = find_prompt_image(stored, snippet["image"]["sha256"])
    assert found is not None and (found.mime_type, found.data) == ("image/png", png)
    assert find_prompt_image(stored, "0" * 64) is None
    # Rewound, the message is gone from the history, the image still findable.
    rewound = [*stored, rewind("inv-1")]
    assert format_messages(rewound) == []
    assert find_prompt_image(rewound, snippet["image"]["sha256"]) is not None
