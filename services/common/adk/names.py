"""The session-event contract: the names more than one service reads from a session.

The agent writes them (tool calls, event authors, a prompt's state delta); the sessions
service formats them for the plugin and the compactor reads turns from them. Names only the
agent reads (the coordinator's and subagent's names, its other state keys) stay in
``services/agent/research``.
"""

from __future__ import annotations

from services.common.adk.internals import FINISH_TASK_TOOL_NAME, REQUEST_INPUT_FUNCTION_CALL_NAME

# -- tools ------------------------------------------------------------------------------------
# The coordinator's research tool; its response carries a research turn's answer, summary and
# citations (the agent's done event, the UI's tool results, the compactor's turns).
SEARCH_LIBRARY = "search_library"
# ADK's call that closes a task agent's isolation scope ("finish_task"): never shown.
FINISH_TASK = FINISH_TASK_TOOL_NAME
# ADK's human-in-the-loop call ("adk_request_input"), the deep-research checkpoint, and the
# user's answer to it (a function response of the same name): a pause, not conversation.
REQUEST_INPUT = REQUEST_INPUT_FUNCTION_CALL_NAME

# -- authors ----------------------------------------------------------------------------------
# The agent that writes the cited answer inside the search pipeline's isolation scope: its
# text is the answer although it is scoped (every other scoped event is an intermediate step).
SYNTHESIZER = "synthesizer"

# -- state keys of a prompt's state delta ------------------------------------------------------
# The agent puts what the user had in scope into the prompt event's state delta, so rewinding
# or editing a prompt restores it; the sessions service hands them back as the message's
# ``context`` (the plugin redraws its scope chips from them).
SNIPPETS = "snippets"
ACTIVE_CONTEXT_ITEMS = "active_context_items"
ACTIVE_COLLECTION = "active_collection"
# The turn's scope mode ("items", "collection", "library": services/common/turn_scope.py),
# as the client sent it or derived from the other keys; prompts written before the agent set
# it lack it (the plugin then infers the mode from the other keys).
ACTIVE_MODE = "active_mode"
TURN_CONTEXT_KEYS = (SNIPPETS, ACTIVE_CONTEXT_ITEMS, ACTIVE_COLLECTION, ACTIVE_MODE)
