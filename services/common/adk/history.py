"""Which events of a session are live, and the checkpoint it waits at, read one way everywhere.

Rewinds first: ADK's ``_apply_rewinds`` drops every rewound invocation and the rewind markers
themselves, exactly as prompt assembly and compaction do. What happens to compaction events
then depends on the reader, so there are two functions:

- :func:`live_events` keeps them: ADK's own reading (prompt assembly and compaction start
  from the same list). The compactor needs them, since the prior summary and its range are
  compaction events. The checkpoint scans (:func:`find_pending_hitl`, the search pipeline's
  lookup of a checkpoint's answer) use it too; compaction events carry no function calls, so
  for those scans either reading gives the same answer.
- :func:`live_events_without_compactions` drops them. The sessions service's reading for the
  plugin: a compaction changes what the model is shown, not the conversation, so the user
  still sees every live turn verbatim and never the summary.

:func:`find_pending_hitl` is the deep-research checkpoint a session waits at, if any: the
sessions service shows it as ``pending_hitl`` and the agent refuses a new message (or a resume
for another interrupt) while it waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.events.event import Event

from services.common.adk.internals import apply_rewinds, index_open_interrupts, is_abort_event
from services.common.adk.names import REQUEST_INPUT


def live_events(events: Sequence[Event]) -> list[Event]:
    """``events`` with rewound invocations and rewind markers removed, compaction events kept
    (the compactor and the agent; see the module docstring)."""
    return apply_rewinds(list(events))


def live_events_without_compactions(events: Sequence[Event]) -> list[Event]:
    """:func:`live_events` without compaction events (the sessions service's UI history; see
    the module docstring)."""
    return [e for e in live_events(events) if not is_compaction(e)]


def is_compaction(event: Event) -> bool:
    """A compaction event (``author="user"``, no content, ``actions.compaction`` set)."""
    return bool(event.actions and event.actions.compaction)


def is_rewind(event: Event) -> bool:
    """A rewind marker (``actions.rewind_before_invocation_id`` set)."""
    return bool(event.actions and event.actions.rewind_before_invocation_id)


def is_request_input_event(event: Event) -> bool:
    """An event with a checkpoint call (``adk_request_input``) or the user's answer to one."""
    if not event.content or not event.content.parts:
        return False
    for part in event.content.parts:
        call = part.function_call
        response = part.function_response
        if (call is not None and call.name == REQUEST_INPUT) or (
            response is not None and response.name == REQUEST_INPUT
        ):
            return True
    return False


def find_pending_hitl(events: Sequence[Event]) -> dict[str, Any] | None:
    """The newest ``adk_request_input`` call without a matching response, if any, as
    ``{interrupt_id, invocation_id, message, payload}``. A call of an invocation that was
    aborted (sealed) is not pending: nothing will resume it."""
    live = live_events(events)
    open_ids = set(index_open_interrupts(live))
    if not open_ids:
        return None
    aborted = {e.invocation_id for e in live if is_abort_event(e)}
    for event in reversed(live):
        if event.invocation_id in aborted:
            continue
        for call in event.get_function_calls():
            if call.name == REQUEST_INPUT and call.id in open_ids:
                args = dict(call.args or {})
                return {
                    "interrupt_id": call.id,
                    "invocation_id": event.invocation_id,
                    "message": args.get("message"),
                    "payload": args.get("payload"),
                }
    return None
