"""ADK events -> the session object the Zotero plugin renders.

``format_session_for_ui`` reads the live events without compactions
(:func:`services.common.adk.history.live_events_without_compactions`: rewinds applied, rewind
markers and compaction events dropped), drops user events that only carry function responses
(a resumed checkpoint), flags thoughts, marks events from isolation scopes (search subagents)
as intermediate, and reports an unanswered ``adk_request_input`` call as ``pending_hitl``
(:func:`services.common.adk.history.find_pending_hitl`) so the plugin can redraw the
checkpoint card. A research tool's result keeps its answer's citations, and each turn's last
answer message (not a thought, not an intermediate step, when there is one) carries the turn's
``usage`` (:func:`services.common.turn_usage.turn_usage`), the figure its ``done`` event
showed; none for a turn of the offline model.
"""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.session import Session

from services.common.adk.history import find_pending_hitl, live_events_without_compactions
from services.common.adk.names import FINISH_TASK, REQUEST_INPUT, SYNTHESIZER, TURN_CONTEXT_KEYS
from services.common.turn_usage import turn_usage

# Authors whose text is the answer even though it is produced inside the search pipeline's
# isolation scope; every other scoped event is an intermediate step.
ANSWER_AUTHORS = (SYNTHESIZER,)
_HIDDEN_CALLS = (REQUEST_INPUT, FINISH_TASK)


def _message(event: Event, *, role: str, text: str, thought: bool) -> dict[str, Any]:
    return {
        "id": event.id,
        "role": role,
        "author": event.author,
        "text": text,
        "thought": thought,
        "timestamp": event.timestamp,
        "invocation_id": event.invocation_id,
        "intermediate": event.isolation_scope is not None and event.author not in ANSWER_AUTHORS,
    }


def _format_event(event: Event) -> list[dict[str, Any]]:
    parts = event.content.parts if event.content and event.content.parts else []
    if event.author == "user":
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if not text:
            return []  # function-response-only (resumed checkpoint) or state-only event
        message = _message(event, role="user", text=text, thought=False)
        delta = event.actions.state_delta if event.actions else {}
        context = {k: delta[k] for k in TURN_CONTEXT_KEYS if k in delta}
        if context:
            message["context"] = context
        return [message]

    messages: list[dict[str, Any]] = []
    thoughts = "".join(p.text for p in parts if p.text and p.thought)
    if thoughts:
        messages.append(_message(event, role="assistant", text=thoughts, thought=True))
    text = "".join(p.text for p in parts if p.text and not p.thought)
    calls = [
        {"name": p.function_call.name, "args": p.function_call.args or {}}
        for p in parts
        if p.function_call and p.function_call.name not in _HIDDEN_CALLS
    ]
    results = [
        _result(p.function_response)
        for p in parts
        if p.function_response and p.function_response.name not in _HIDDEN_CALLS
    ]
    if text or calls or results:
        message = _message(event, role="assistant", text=text, thought=False)
        if calls:
            message["tool_calls"] = calls
        if results:
            message["tool_results"] = results
        messages.append(message)
    return messages


def _result(response: Any) -> dict[str, Any]:
    """A tool result by name; the research tool's also with the answer's citations (each with
    its quote and whether it was verified on its page), so a reloaded chat marks them as the
    live turn did."""
    result: dict[str, Any] = {"name": response.name}
    body = response.response if isinstance(response.response, dict) else {}
    citations = body.get("citations")
    if isinstance(citations, list) and citations:
        result["citations"] = [c for c in citations if isinstance(c, dict)]
    return result


def _add_usage(messages: list[dict[str, Any]], events: list[Event]) -> None:
    turns: dict[str | None, list[Event]] = {}
    for event in events:
        turns.setdefault(event.invocation_id, []).append(event)
    last: dict[str | None, dict[str, Any]] = {}
    for message in messages:
        if message["role"] != "assistant":
            continue
        shown = not message["thought"] and not message["intermediate"]
        current = last.get(message["invocation_id"])
        if shown or current is None or current["thought"] or current["intermediate"]:
            last[message["invocation_id"]] = message
    for invocation_id, message in last.items():
        usage = turn_usage(turns.get(invocation_id, []))
        if usage is not None:
            message["usage"] = usage


def format_messages(events: list[Event]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    live = [e for e in live_events_without_compactions(events) if not e.partial]
    for event in live:
        messages.extend(_format_event(event))
    _add_usage(messages, live)
    return messages


def format_session_for_ui(session: Session, *, title: str, created_at: float) -> dict[str, Any]:
    """``{id, title, created_at, updated_at, messages, pending_hitl}`` for the plugin."""
    return {
        "id": session.id,
        "title": title,
        "created_at": created_at,
        "updated_at": session.last_update_time,
        "messages": format_messages(session.events),
        "pending_hitl": find_pending_hitl(session.events),
    }
