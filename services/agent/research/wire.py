"""ADK events -> the client's wire events (``message``, ``request_input``); see chat.py.

An ``answer`` message never holds a thought: the thought parts of an event that also answers
(a thinking synthesizer's final event has both) go out first, as a ``thought`` message of the
same event, so whoever reads an answer message's text reads the answer only."""

from __future__ import annotations

import json
from typing import Any

from google.adk.events.event import Event

from services.common.adk.names import FINISH_TASK, REQUEST_INPUT, SEARCH_LIBRARY, SYNTHESIZER

_ARG_PREVIEW = 300

WireEvent = tuple[str, dict[str, Any]]


def _preview(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= _ARG_PREVIEW:
        return value
    return text[:_ARG_PREVIEW] + "…"


def _result_summary(name: str, response: dict[str, Any]) -> dict[str, Any]:
    # A call that failed or was sealed after an abort answers {"error": ...} (ADK, sealing.py)
    # with no status of its own: it did not succeed.
    failed = "error" in response and "status" not in response
    summary: dict[str, Any] = {
        "name": name,
        "status": "error" if failed else response.get("status", "success"),
    }
    if failed and not response.get("message"):
        summary["message"] = str(response["error"])
    if "results" in response and isinstance(response["results"], list):
        summary["count"] = len(response["results"])
        summary["items"] = sorted(
            {str(r.get("title") or r.get("item_key")) for r in response["results"][:8]}
        )[:5]
    if "pages" in response:
        summary["pages"] = [response.get("start_page"), response.get("end_page")]
        summary["title"] = response.get("title")
    for key in ("notice", "budget_notice", "message", "code"):
        if response.get(key):
            summary[key] = response[key]
    return summary


def wire_events(event: Event) -> list[WireEvent]:
    """The client events for one ADK event (none for state-only or internal events): its
    messages first, then its checkpoint."""
    parts = event.content.parts if event.content and event.content.parts else []
    out: list[WireEvent] = []
    body: list[dict[str, Any]] = []
    is_answer_author = event.author == SYNTHESIZER or (
        event.isolation_scope is None and event.author not in ("user",)
    )
    kind = "step"
    for part in parts:
        if part.function_call is not None:
            call = part.function_call
            if call.name == REQUEST_INPUT:
                args = dict(call.args or {})
                out.append(
                    (
                        "request_input",
                        {
                            "interrupt_id": call.id,
                            "invocation_id": event.invocation_id,
                            "message": args.get("message"),
                            "payload": args.get("payload"),
                        },
                    )
                )
                continue
            body.append(
                {"function_call": {"name": call.name, "args": _preview(dict(call.args or {}))}}
            )
        elif part.function_response is not None:
            fr = part.function_response
            if fr.name in (REQUEST_INPUT, FINISH_TASK):
                continue
            body.append({"function_response": _result_summary(fr.name or "", fr.response or {})})
        elif part.text:
            body.append({"text": part.text, "thought": bool(part.thought)})
            if not part.thought and is_answer_author:
                kind = "answer"
            elif part.thought and kind != "answer":
                kind = "thought"
    if not body:
        return out
    messages = [(kind, body)]
    thoughts = [p for p in body if p.get("thought")]
    if kind == "answer" and thoughts:
        messages = [("thought", thoughts), (kind, [p for p in body if not p.get("thought")])]
    out[:0] = [
        (
            "message",
            {
                "event_id": event.id,
                "invocation_id": event.invocation_id,
                "author": event.author,
                "partial": bool(event.partial),
                "kind": message_kind,
                "parts": parts,
            },
        )
        for message_kind, parts in messages
    ]
    return out


def search_result(event: Event) -> dict[str, Any] | None:
    for fr in event.get_function_responses():
        if fr.name == SEARCH_LIBRARY and event.isolation_scope is None:
            return dict(fr.response or {})
    return None
