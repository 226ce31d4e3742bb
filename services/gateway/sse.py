"""Server-sent events: typed frames (``event: <type>``) with JSON ``data``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

from services.common.errors import ZocratesError


def frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def error_frame(exc: ZocratesError) -> bytes:
    return frame("error", {"status": "error", "code": exc.code, "message": exc.message})


def sse_response(frames: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        frames,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
