"""Server-sent events: typed frames (``event: <type>``) with JSON ``data``.

A stream has no single response model, so :func:`event_stream_responses` documents a stream
route in OpenAPI: the ``text/event-stream`` media type, the event types (an OpenAPI 3.2
``itemSchema``, as FastAPI writes for its own SSE routes) and, in the description, each
event's ``data``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from fastapi.responses import StreamingResponse

from services.common.errors import ZocratesError
from services.gateway.errors import ErrorBody

MEDIA_TYPE = "text/event-stream"


def frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def error_frame(exc: ZocratesError) -> bytes:
    return frame(
        "error", ErrorBody(status="error", code=exc.code, message=exc.message).model_dump()
    )


def event_stream_responses(
    *, description: str, events: Sequence[str], example: str
) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entry (200) of a route that answers with :func:`sse_response`.

    As OpenAPI 3.2 describes a sequential media type: ``itemSchema`` is one event, ``schema``
    the whole stream, the sequence of its events (schemathesis validates a stream so)."""
    item = {
        "type": "object",
        "required": ["event", "data"],
        "properties": {
            "event": {"type": "string", "enum": list(events)},
            "data": {"type": "string", "contentMediaType": "application/json"},
        },
    }
    return {
        200: {
            "description": description,
            "content": {
                MEDIA_TYPE: {
                    "schema": {
                        "type": "array",
                        "items": item,
                        "description": (
                            "Frames of `event: <type>` and `data: <JSON object>`, each ended "
                            "by a blank line."
                        ),
                    },
                    "itemSchema": item,
                    "example": example,
                }
            },
        }
    }


class _StreamWithCleanup(StreamingResponse):
    """Runs ``on_close`` however the response ends, even when the client is gone before the
    body starts (the body generator then never runs, so its own cleanup would never happen)."""

    def __init__(
        self, content: AsyncIterator[bytes], on_close: Callable[[], Awaitable[None]], **kw: Any
    ) -> None:
        super().__init__(content, **kw)
        self._on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._on_close()


def sse_response(
    frames: AsyncIterator[bytes], *, on_close: Callable[[], Awaitable[None]] | None = None
) -> StreamingResponse:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if on_close is not None:
        return _StreamWithCleanup(frames, on_close, media_type=MEDIA_TYPE, headers=headers)
    return StreamingResponse(frames, media_type=MEDIA_TYPE, headers=headers)
