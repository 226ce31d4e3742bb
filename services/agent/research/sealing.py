"""Closing an invocation that ended without ADK sealing it."""

from __future__ import annotations

from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import types

from services.common.adk.internals import FINISH_TASK_ERROR_RESULT
from services.common.adk.internals import INVOCATION_ABORTED as ABORTED_CODE
from services.common.adk.names import FINISH_TASK


def closing_events(session: Session, invocation_id: str) -> list[Event]:
    """What ADK's abort sealing leaves out when the invocation's last event is a scoped reply
    (a finished subagent pass, a state write): the open scopes get a failed ``finish_task``
    and the coordinator's unanswered calls an error response, all marked as aborted, so ADK
    counts the scopes closed and the next question reaches the coordinator."""
    events = [e for e in session.events if e.invocation_id == invocation_id]
    answered = {fr.id for e in events for fr in e.get_function_responses() if fr.id}
    scopes = {e.isolation_scope for e in events if e.isolation_scope}
    out = [
        Event(
            invocation_id=invocation_id,
            author="search_library_pipeline",
            isolation_scope=scope,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            name=FINISH_TASK,
                            response={"result": FINISH_TASK_ERROR_RESULT},
                        )
                    )
                ],
            ),
            error_code=ABORTED_CODE,
            error_message="The run ended without finishing this search.",
        )
        for scope in sorted(scopes)
    ]
    for event in events:
        calls = [c for c in event.get_function_calls() if c.id and c.id not in answered]
        if event.isolation_scope is None and calls:
            out.append(
                Event(
                    invocation_id=invocation_id,
                    author=event.author,
                    content=types.Content(
                        role="user",
                        parts=[
                            types.Part(
                                function_response=types.FunctionResponse(
                                    id=c.id, name=c.name, response={"error": "aborted"}
                                )
                            )
                            for c in calls
                        ],
                    ),
                    error_code=ABORTED_CODE,
                    error_message="The run ended before this call finished.",
                )
            )
    return out
