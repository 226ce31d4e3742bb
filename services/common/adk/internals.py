"""google-adk 2.13's private event-level names, under public aliases.

Each line says where ADK keeps the name and what Zocrates needs it for. Only light modules are
imported here (no runner, no LLM flows), so the sessions service pays nothing for what only the
agent uses (:mod:`services.common.adk.runner`, :mod:`services.common.adk.compat`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# finish_task: the tool whose response closes a task agent's isolation scope, and the two
# results ADK counts as closing it (the search pipeline closes its scope with them).
from google.adk.agents.llm.task._finish_task_tool import (
    FINISH_TASK_ERROR_RESULT,
    FINISH_TASK_SUCCESS_RESULT,
    FINISH_TASK_TOOL_NAME,
)

# The compaction ranges ADK's prompt assembly keeps (a containing range subsumes the others).
from google.adk.apps.compaction import _get_compaction_ranges

# Abort sealing: the events that close an aborted invocation, and how they are marked.
from google.adk.events._abort_events import (
    _INVOCATION_ABORTED,
    _build_abort_events,
    _is_abort_event,
)

# Interrupts (adk_request_input calls) that no user response answered yet.
from google.adk.events._interrupts import index_open_interrupts

# Which events survive rewinds: "the single source of truth" for prompts and compaction.
from google.adk.events._rewind_events import _apply_rewinds

# The name of ADK's human-in-the-loop call (``RequestInput``): "adk_request_input".
from google.adk.utils._function_call_names import REQUEST_INPUT_FUNCTION_CALL_NAME

# Raised through a node when a child paused the invocation (not a failure).
from google.adk.workflow._errors import NodeInterruptedError

if TYPE_CHECKING:
    from google.adk.agents.context import Context
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.sessions.session import Session

apply_rewinds = _apply_rewinds
build_abort_events = _build_abort_events
is_abort_event = _is_abort_event
get_compaction_ranges = _get_compaction_ranges
INVOCATION_ABORTED = _INVOCATION_ABORTED

__all__ = [
    "FINISH_TASK_ERROR_RESULT",
    "FINISH_TASK_SUCCESS_RESULT",
    "FINISH_TASK_TOOL_NAME",
    "INVOCATION_ABORTED",
    "REQUEST_INPUT_FUNCTION_CALL_NAME",
    "NodeInterruptedError",
    "apply_rewinds",
    "build_abort_events",
    "get_compaction_ranges",
    "index_open_interrupts",
    "invocation_context",
    "is_abort_event",
    "set_storage_update_marker",
    "storage_update_marker",
]


def storage_update_marker(session: Session) -> str | None:
    """The revision marker ADK's stale-session check compares (``Session``'s private
    ``_storage_update_marker``); it is not part of the session's JSON."""
    return session._storage_update_marker


def set_storage_update_marker(session: Session, marker: str | None) -> None:
    """Give ``session`` the revision marker it was read or written at."""
    session._storage_update_marker = marker


def invocation_context(ctx: Context) -> InvocationContext:
    """The live invocation context behind a node's ``Context`` (``_invocation_context``), for
    the few fields a node must change for the whole invocation (``isolation_scope``,
    ``user_content``); ADK's ``get_invocation_context()`` returns a copy."""
    return ctx._invocation_context
