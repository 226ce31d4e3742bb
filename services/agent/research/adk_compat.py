"""Fixes to google-adk 2.13 that research turns need, applied once per process.

``patch_request_input_context_filter``: ADK keeps its own framework calls out of a model's
prompt but not ``adk_request_input`` (the checkpoint's call and the user's answer to it). Left
in, a resumed search subagent would be shown the checkpoint exchange as quoted agent content.
The wrapper drops those events from prompts only; they stay in the session, where the runner
needs them to resolve the interrupt.

What is *not* patched: the seed's rewind fix for ``_find_active_task_scope``; ADK 2.13 already
applies rewinds there (tested in tests/integration/test_research_turns.py).
"""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.adk.flows.llm_flows.context import _contents
from google.adk.utils._function_call_names import REQUEST_INPUT_FUNCTION_CALL_NAME

_PATCHED = "_zocrates_request_input_filter"


def is_request_input_event(event: Event) -> bool:
    if not event.content or not event.content.parts:
        return False
    for part in event.content.parts:
        call = part.function_call
        response = part.function_response
        if (call is not None and call.name == REQUEST_INPUT_FUNCTION_CALL_NAME) or (
            response is not None and response.name == REQUEST_INPUT_FUNCTION_CALL_NAME
        ):
            return True
    return False


def patch_request_input_context_filter() -> None:
    original = _contents._should_include_event_in_context
    if getattr(original, _PATCHED, False):
        return

    def _should_include_event_in_context(
        current_branch: str | None, event: Event, *args: Any, **kwargs: Any
    ) -> bool:
        if is_request_input_event(event):
            return False
        return bool(original(current_branch, event, *args, **kwargs))

    setattr(_should_include_event_in_context, _PATCHED, True)
    _contents._should_include_event_in_context = _should_include_event_in_context  # type: ignore[assignment]


def apply() -> None:
    patch_request_input_context_filter()
