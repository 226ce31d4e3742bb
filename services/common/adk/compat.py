"""Fixes to google-adk 2.13's prompt assembly that research turns need, and that assembly
itself for the tests and benchmarks that check what a prompt shows.

``patch_request_input_context_filter``: ADK keeps its own framework calls out of a model's
prompt but not ``adk_request_input`` (the checkpoint's call and the user's answer to it). Left
in, a resumed search subagent would be shown the checkpoint exchange as quoted agent content.
The wrapper drops those events from prompts only; they stay in the session, where the runner
needs them to resolve the interrupt. The agent applies it once per process (:func:`apply`).

What is *not* patched: a rewind fix for ``_find_active_task_scope``; ADK 2.13 already applies
rewinds there (tested in tests/integration/test_research_turns.py).
"""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.adk.flows.llm_flows.context import _contents

from services.common.adk.history import is_request_input_event

_PATCHED = "_zocrates_request_input_filter"

# ADK's prompt assembly: the contents an agent's next model call would be shown.
get_contents = _contents._get_contents

__all__ = ["apply", "event_reaches_prompt", "get_contents", "patch_request_input_context_filter"]


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


def event_reaches_prompt(event: Event, *, branch: str | None = None) -> bool:
    """Whether ADK's prompt assembly, as currently patched, would show ``event``."""
    return bool(_contents._should_include_event_in_context(branch, event))


def apply() -> None:
    patch_request_input_context_filter()
