"""Session state keys of a research turn.

``temp:`` keys live only for one invocation (ADK strips them before persisting); everything a
paused turn needs after a restart is copied into ``HITL_SNAPSHOT``, which is persisted and
cleared when the turn ends.

The keys of a prompt's state delta that the sessions service reads back (``snippets``,
``active_context_items``, ``active_collection``) are in :mod:`services.common.adk.names`.
"""

from __future__ import annotations

# Persistent (session-wide).
HITL_SNAPSHOT = "hitl_snapshot"
RETRIEVED_EVIDENCE = "retrieved_evidence"  # audit of the last MAX_AUDIT_HISTORY_TURNS turns
ACTIVE_CONTEXT_ITEMS_STR = "active_context_items_str"
FOCAL_SNIPPETS_STR = "focal_snippets_str"  # keys stripped: coordinator and synthesizer
FOCAL_SNIPPETS_KEYED_STR = "focal_snippets_keyed_str"  # with keys: the retrieval subagent
SEARCH_SCOPE = "search_scope"  # what search_corpus searches: "library", "collection:K", keys

# Per invocation.
TEMP_RETRIEVED_EVIDENCE = "temp:retrieved_evidence"
TEMP_SEARCH_REPORT = "temp:search_report"
TEMP_RETRIEVAL_TOOL_COUNT = "temp:retrieval_tool_count"
TEMP_RETRIEVED_WORDS = "temp:retrieved_words"
TEMP_RETRIEVAL_TOOL_BUDGET = "temp:retrieval_tool_budget"
TEMP_WORD_CEILING = "temp:word_ceiling"
TEMP_MAX_RERANK_CHUNKS = "temp:max_rerank_chunks"
TEMP_EXTENSION_COUNT = "temp:extension_count"
TEMP_EXTENSION_REQUESTED = "temp:extension_requested"
TEMP_EXTENSION_REQUEST_PASS = "temp:extension_request_pass"
TEMP_SEEN_CHUNK_IDS = "temp:seen_chunk_ids"
TEMP_SEEN_ASSETS = "temp:seen_assets"
TEMP_BLOCKED_CALLS = "temp:blocked_calls"

MAX_AUDIT_HISTORY_TURNS = 5
