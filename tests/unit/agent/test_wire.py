"""The wire format: ADK events -> the client's ``message`` and ``request_input`` events, on a
table of the events a research turn produces."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.events.event import Event
from google.genai import types

from services.agent.research.wire import search_result, wire_events
from services.common.adk.names import FINISH_TASK, REQUEST_INPUT, SEARCH_LIBRARY, SYNTHESIZER

INV = "e-inv-1"
SCOPE = "search_pipeline:call-1"


def _event(
    author: str,
    *parts: types.Part,
    scope: str | None = None,
    partial: bool = False,
    event_id: str = "ev-1",
) -> Event:
    return Event(
        id=event_id,
        invocation_id=INV,
        author=author,
        content=types.Content(role="model", parts=list(parts)) if parts else None,
        isolation_scope=scope,
        partial=partial,
    )


def _text(text: str, *, thought: bool = False) -> types.Part:
    return types.Part(text=text, thought=thought or None)


def _call(name: str, call_id: str = "call-1", **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def _response(name: str, response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id="call-1", name=name, response=response)
    )


def _message(
    kind: str, parts: list[dict[str, Any]], *, author: str, partial: bool = False
) -> tuple[str, dict[str, Any]]:
    return (
        "message",
        {
            "event_id": "ev-1",
            "invocation_id": INV,
            "author": author,
            "partial": partial,
            "kind": kind,
            "parts": parts,
        },
    )


CASES = [
    pytest.param(
        _event(SYNTHESIZER, _text("lmer uses BOBYQA [1, p. 3]."), scope=SCOPE),
        [
            _message(
                "answer",
                [{"text": "lmer uses BOBYQA [1, p. 3].", "thought": False}],
                author=SYNTHESIZER,
            )
        ],
        id="synthesizer-text-in-its-scope-is-the-answer",
    ),
    pytest.param(
        _event("coordinator", _text("Hello.")),
        [_message("answer", [{"text": "Hello.", "thought": False}], author="coordinator")],
        id="coordinator-text-at-the-root-is-the-answer",
    ),
    pytest.param(
        _event("search_subagent", _text("Looking at lme4 first."), scope=SCOPE),
        [
            _message(
                "step",
                [{"text": "Looking at lme4 first.", "thought": False}],
                author="search_subagent",
            )
        ],
        id="a-scoped-subagent-note-is-a-step",
    ),
    pytest.param(
        _event(SYNTHESIZER, _text("Plan the answer.", thought=True), scope=SCOPE, partial=True),
        [
            _message(
                "thought",
                [{"text": "Plan the answer.", "thought": True}],
                author=SYNTHESIZER,
                partial=True,
            )
        ],
        id="a-partial-thought-alone-is-a-thought",
    ),
    pytest.param(
        _event(SYNTHESIZER, _text("Plan.", thought=True), _text("Answer [1]."), scope=SCOPE),
        [
            _message("thought", [{"text": "Plan.", "thought": True}], author=SYNTHESIZER),
            _message("answer", [{"text": "Answer [1].", "thought": False}], author=SYNTHESIZER),
        ],
        id="thoughts-of-an-answer-go-out-first-as-their-own-message",
    ),
    pytest.param(
        _event("search_subagent", _text("Why.", thought=True), _text("Note."), scope=SCOPE),
        [
            _message(
                "thought",
                [{"text": "Why.", "thought": True}, {"text": "Note.", "thought": False}],
                author="search_subagent",
            )
        ],
        id="a-subagent-thought-with-a-note-stays-one-message",
    ),
    pytest.param(
        _event("coordinator", _call(SEARCH_LIBRARY, request="How does lmer optimize?")),
        [
            _message(
                "step",
                [
                    {
                        "function_call": {
                            "name": SEARCH_LIBRARY,
                            "args": {"request": "How does lmer optimize?"},
                        }
                    }
                ],
                author="coordinator",
            )
        ],
        id="a-tool-call-is-a-step-with-its-args",
    ),
    pytest.param(
        _event("search_subagent", _call("search_corpus", query="x" * 400), scope=SCOPE),
        [
            _message(
                "step",
                [
                    {
                        "function_call": {
                            "name": "search_corpus",
                            "args": '{"query": "' + "x" * 289 + "…",
                        }
                    }
                ],
                author="search_subagent",
            )
        ],
        id="long-args-are-cut-to-a-preview",
    ),
    pytest.param(
        _event(
            "search_subagent",
            _response(
                "search_corpus",
                {
                    "status": "success",
                    "results": [
                        {"title": t, "item_key": k}
                        for t, k in [
                            ("Zeta", "Z"),
                            ("Alpha", "A"),
                            ("Alpha", "A"),
                            ("", "KEY12345"),
                            ("B", "B"),
                            ("C", "C"),
                            ("D", "D"),
                        ]
                    ],
                    "budget_notice": "WARNING: 1 retrieval call left of 10.",
                },
            ),
            scope=SCOPE,
        ),
        [
            _message(
                "step",
                [
                    {
                        "function_response": {
                            "name": "search_corpus",
                            "status": "success",
                            "count": 7,
                            "items": ["Alpha", "B", "C", "D", "KEY12345"],
                            "budget_notice": "WARNING: 1 retrieval call left of 10.",
                        }
                    }
                ],
                author="search_subagent",
            )
        ],
        id="a-search-result-is-summarised-count-titles-notice",
    ),
    pytest.param(
        _event(
            "search_subagent",
            _response(
                "read_document",
                {
                    "status": "success",
                    "title": "lme4",
                    "start_page": 3,
                    "end_page": 4,
                    "pages": [{"page": 3, "text": "long text"}],
                },
            ),
            scope=SCOPE,
        ),
        [
            _message(
                "step",
                [
                    {
                        "function_response": {
                            "name": "read_document",
                            "status": "success",
                            "pages": [3, 4],
                            "title": "lme4",
                        }
                    }
                ],
                author="search_subagent",
            )
        ],
        id="a-read-is-summarised-by-its-pages-not-its-text",
    ),
    pytest.param(
        _event(
            "search_subagent",
            _response(
                "read_document",
                {"status": "error", "code": "item_not_found", "message": "No item NOPE."},
            ),
            scope=SCOPE,
        ),
        [
            _message(
                "step",
                [
                    {
                        "function_response": {
                            "name": "read_document",
                            "status": "error",
                            "message": "No item NOPE.",
                            "code": "item_not_found",
                        }
                    }
                ],
                author="search_subagent",
            )
        ],
        id="a-tool-error-keeps-its-code-and-message",
    ),
    pytest.param(
        _event("coordinator", _response(SEARCH_LIBRARY, {"error": "aborted"})),
        [
            _message(
                "step",
                [
                    {
                        "function_response": {
                            "name": SEARCH_LIBRARY,
                            "status": "error",
                            "message": "aborted",
                        }
                    }
                ],
                author="coordinator",
            )
        ],
        id="an-aborted-call-is-an-error-not-a-success",
    ),
    pytest.param(
        _event(
            "search_budget_checkpoint",
            _call(
                REQUEST_INPUT,
                call_id="interrupt_ext_1",
                interruptId="interrupt_ext_1",
                message="Continue?",
                payload={"gaps": ["x"]},
                response_schema=None,
            ),
            scope=SCOPE,
        ),
        [
            (
                "request_input",
                {
                    "interrupt_id": "interrupt_ext_1",
                    "invocation_id": INV,
                    "message": "Continue?",
                    "payload": {"gaps": ["x"]},
                },
            )
        ],
        id="the-checkpoint-call-is-a-request-input-and-no-message",
    ),
    pytest.param(
        _event("user", _response(REQUEST_INPUT, {"action": "synthesize"})),
        [],
        id="the-answer-to-a-checkpoint-is-not-shown",
    ),
    pytest.param(
        _event(SEARCH_LIBRARY, _response(FINISH_TASK, {"result": "done"}), scope=SCOPE),
        [],
        id="closing-the-scope-is-not-shown",
    ),
    pytest.param(_event("coordinator"), [], id="a-state-only-event-sends-nothing"),
    pytest.param(_event(SYNTHESIZER, _text(""), scope=SCOPE), [], id="an-empty-text-sends-nothing"),
    pytest.param(
        _event("user", _text("my question")),
        [_message("step", [{"text": "my question", "thought": False}], author="user")],
        id="user-text-is-never-an-answer",
    ),
]


@pytest.mark.parametrize(("event", "expected"), CASES)
def test_wire_events(event: Event, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert wire_events(event) == expected


def test_an_answer_message_never_holds_a_thought() -> None:
    for param in CASES:
        for kind, data in wire_events(param.values[0]):
            if kind == "message" and data["kind"] == "answer":
                assert not any(p.get("thought") for p in data["parts"]), param.id


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        pytest.param(
            _event("coordinator", _response(SEARCH_LIBRARY, {"status": "success", "answer": "A."})),
            {"status": "success", "answer": "A."},
            id="the-coordinators-search-library-result",
        ),
        pytest.param(
            _event("coordinator", _response(SEARCH_LIBRARY, {"answer": "A."}), scope=SCOPE),
            None,
            id="a-scoped-result-is-not-the-turns",
        ),
        pytest.param(
            _event("coordinator", _response("search_corpus", {"answer": "A."})),
            None,
            id="another-tools-result-is-not-the-turns",
        ),
    ],
)
def test_search_result(event: Event, expected: dict[str, Any] | None) -> None:
    assert search_result(event) == expected
