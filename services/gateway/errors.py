"""The gateway's one mapping from errors to HTTP: ``{"status": "error", "code", "message"}``.

:class:`ErrorBody` is that body; :func:`error_responses` documents it in OpenAPI for the status
codes a route can answer with, so ``/docs`` shows the same shape for every error.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.common.errors import ZocratesError

logger = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


# A request that fails its schema is a 422 ``invalid_request``, unless the check that refused
# it names its own code (a ``PydanticCustomError`` of one of these types): the image snippets
# of ``POST /chat`` (services/gateway/routers/chat.py), whose refusals a client tells apart.
VALIDATION_CODES = frozenset(
    {"unsupported_image_type", "image_too_large", "invalid_image", "too_many_images"}
)


class ErrorBody(BaseModel):
    """Every error the gateway answers, and the ``data`` of an SSE ``error`` event."""

    status: Literal["error"]
    code: str = Field(
        description="Stable and machine-readable, to branch on (`session_not_found`)."
    )
    message: str = Field(description="For a person: what went wrong and what to do.")


# What each status means at this gateway, with the codes it carries most often.
_STATUS_DESCRIPTIONS = {
    400: "Bad input that the request schema cannot catch (`invalid_argument` and others).",
    401: "Missing or wrong bearer token (`unauthorized`).",
    403: (
        "The Host header names a host that is not allowed (`host_not_allowed`), or a web "
        "page's Origin is (`origin_not_allowed`)."
    ),
    404: "Not found (`session_not_found`).",
    409: "The resource is busy or in a state that forbids the request.",
    413: "The request is too large (`payload_too_large`, `prompt_too_long`).",
    422: (
        "The request does not match its schema (`invalid_request`; an image snippet's own "
        "codes: `unsupported_image_type`, `image_too_large`, `invalid_image`, "
        "`too_many_images`)."
    ),
    500: "Unexpected error (`internal_error`); the gateway log has the details.",
    503: (
        "A service is down (`sessions_unavailable`, `agent_unavailable`, ...); "
        "retrying later may work."
    ),
    504: "A service did not answer in time (`sessions_timeout`, `agent_timeout`, ...).",
}
# Every route but /healthz: the token, the Host check, and the unexpected.
COMMON_ERRORS = (401, 403, 500)
# Routes that call a service.
PEER_ERRORS = (503, 504)


def error_responses(
    *statuses: int, notes: Mapping[int, str] | None = None
) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these statuses, each an :class:`ErrorBody`; ``notes``
    replaces the generic description of a status with what it means on the route."""
    notes = notes or {}
    return {
        status: {"model": ErrorBody, "description": notes.get(status, _STATUS_DESCRIPTIONS[status])}
        for status in sorted({*statuses, *notes})
    }


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body = ErrorBody(status="error", code=code, message=message)
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "path", "query")]
        where = ".".join(loc) or "request body"
        parts.append(f"{where}: {err.get('msg')}")
    return "Invalid request: " + "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ZocratesError)
    async def _domain(_: Request, exc: ZocratesError) -> JSONResponse:
        if exc.http_status >= 500:
            logger.warning("%s: %s", exc.code, exc.message)
        return error_response(exc.http_status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        named = [e["type"] for e in exc.errors() if e.get("type") in VALIDATION_CODES]
        code = named[0] if named else "invalid_request"
        return error_response(422, code, _describe_validation(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return error_response(500, "internal_error", "Internal error; see the gateway log.")
