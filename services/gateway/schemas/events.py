"""The server-sent events of the stream routes, documented for OpenAPI (a stream has no single
response model). Each event is ``event: <type>`` and a JSON ``data`` line; an ``error`` event's
data is an ``ErrorBody`` and ends the stream."""

from __future__ import annotations

from services.gateway.sse import event_stream_responses

CHAT_STREAM = event_stream_responses(
    description=(
        "The turn as server-sent events, until `done`:\n\n"
        "- `message`: `{event_id, invocation_id, author, partial, kind, parts}`. `kind` is "
        "`answer`, `step` or `thought`; `partial` chunks stream the answer. Each part is "
        "`{text, thought}`, `{function_call: {name, args}}` or "
        "`{function_response: {name, status, ...}}`.\n"
        "- `request_input`: a deep-research checkpoint, `{interrupt_id, invocation_id, "
        "message, payload}`; answer it with `POST /chat/resume`.\n"
        "- `done`: `{status, invocation_id, session_id, answer, citations, usage}`; `status` "
        "`completed` or `paused` (at a checkpoint: no answer yet). `usage` is a `TurnUsage`, "
        "or null for the offline model.\n"
        "- `error`: an `ErrorBody`, when the turn fails after it started (`lock_lost`, a "
        "service gone); the stream ends.\n\n"
        "Refusals before the turn starts are answered with their HTTP status instead."
    ),
    events=("message", "request_input", "done", "error"),
    example=(
        "event: message\n"
        'data: {"event_id": "e1", "invocation_id": "e-4f1c", "author": "synthesizer", '
        '"partial": false, "kind": "answer", "parts": [{"text": "lmer uses bobyqa [1].", '
        '"thought": false}]}\n\n'
        "event: done\n"
        'data: {"status": "completed", "invocation_id": "e-4f1c", "session_id": "3f0c8a4e", '
        '"answer": "lmer uses bobyqa [1].", "citations": [], "usage": null}\n\n'
    ),
)

SYNC_STREAM = event_stream_responses(
    description=(
        "The sync's progress as server-sent events, until `done`:\n\n"
        "- `progress`: `{phase, items_done, items_total, pages_done, pages_total, "
        "pages_per_second, eta_seconds, current, added, updated, removed, unchanged, failed, "
        "no_text, elapsed_seconds, message, keyword, embedding}`; `phase` is `scanning`, "
        "`indexing`, and with `follow_embedding` then `searchable` and `embedding`; `keyword` "
        "and `embedding` are a `KeywordPhase` and an `EmbeddingPhase`, as in "
        "`GET /library/status`.\n"
        "- `done`: the same fields, `phase` `done`.\n"
        "- `error`: an `ErrorBody` (`sync_in_progress` while another sync runs, "
        "`agent_unavailable`); the stream ends."
    ),
    events=("progress", "done", "error"),
    example=(
        "event: progress\n"
        'data: {"phase": "indexing", "items_done": 3, "items_total": 12, "pages_done": 41, '
        '"pages_total": 180, "current": "Fitting linear mixed-effects models using lme4", '
        '"...": "..."}\n\n'
    ),
)
