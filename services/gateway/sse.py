"""Server-sent events: typed frames (``event: <type>``) with JSON ``data``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi.responses import StreamingResponse

from services.common.errors import ZocratesError


def frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def error_frame(exc: ZocratesError) -> bytes:
    return frame("error", {"status": "error", "code": exc.code, "message": exc.message})


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
        return _StreamWithCleanup(frames, on_close, media_type="text/event-stream", headers=headers)
    return StreamingResponse(frames, media_type="text/event-stream", headers=headers)
