"""Pure-ASGI middleware (safe for streaming responses): Host check, bearer token, the body
size limit, metrics and a server span per request."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from opentelemetry import context as otel_context
from opentelemetry import trace
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.common.metrics import HTTP_LATENCY, HTTP_REQUESTS
from services.common.telemetry import extract_context
from services.common.turn_scope import MAX_IMAGE_BYTES, MAX_IMAGE_SNIPPETS
from services.gateway.auth import host_allowed, origin_allowed, token_matches
from services.gateway.errors import ErrorBody

PUBLIC_PATHS = frozenset({"/healthz"})
# The largest request body: a /chat with three 2 MB image snippets is about 8.5 MB in base64
# (services/common/turn_scope.py), its text at most a few hundred KB more.
MAX_BODY_BYTES = 12 * 1024 * 1024
_tracer = trace.get_tracer("zocrates.gateway")


async def _send_error(
    send: Send, status: int, code: str, message: str, extra: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps(ErrorBody(status="error", code=code, message=message).model_dump()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": body})


class GatewayMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: list[str],
        token: Callable[[], str],
        token_hint: Callable[[], str],
        allowed_origins: list[str] | None = None,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = list(allowed_origins or [])
        self.token = token
        self.token_hint = token_hint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        started = time.perf_counter()
        status_holder = {"status": 500}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
            await send(message)

        token = otel_context.attach(extract_context(headers))
        span = _tracer.start_span(f"HTTP {scope['method']}", kind=trace.SpanKind.SERVER)
        try:
            with trace.use_span(span, end_on_exit=False):
                await self._dispatch(scope, receive, send_wrapper, headers)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            status = status_holder["status"]
            span.update_name(f"HTTP {scope['method']} {template}")
            span.set_attribute("http.route", template)
            span.set_attribute("http.response.status_code", status)
            span.end()
            otel_context.detach(token)
            HTTP_REQUESTS.labels(scope["method"], template, str(status)).inc()
            HTTP_LATENCY.labels(scope["method"], template).observe(time.perf_counter() - started)

    async def _dispatch(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        if not host_allowed(headers.get("host"), self.allowed_hosts):
            await _send_error(
                send,
                403,
                "host_not_allowed",
                "This gateway only answers requests addressed to an allowed host "
                "(127.0.0.1 or localhost by default; see ZOCRATES_ALLOWED_HOSTS).",
                [],
            )
            return
        if not origin_allowed(headers.get("origin"), self.allowed_origins):
            await _send_error(
                send,
                403,
                "origin_not_allowed",
                "This gateway does not answer web pages: the request came from "
                f"{headers.get('origin')!r}. The Zotero plugin and local tools send no web "
                "origin; a deployment that serves a web client lists it in "
                "ZOCRATES_ALLOWED_ORIGINS.",
                [],
            )
            return
        if scope["path"] not in PUBLIC_PATHS:
            auth = headers.get("authorization", "")
            scheme, _, presented = auth.partition(" ")
            if (
                scheme.lower() != "bearer"
                or not presented
                or not token_matches(presented.strip(), self.token())
            ):
                await _send_error(
                    send,
                    401,
                    "unauthorized",
                    "Missing or wrong bearer token. Send 'Authorization: Bearer <token>'; the "
                    f"token is in {self.token_hint()} (the Zotero plugin reads it from there).",
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            await _send_error(send, 413, "payload_too_large", _too_large(int(length)), [])
            return
        await self.app(scope, _limited(receive), send)


def _too_large(size: int) -> str:
    return (
        f"The request body has {size / 1_048_576:.1f} MB; the gateway takes at most "
        f"{MAX_BODY_BYTES // 1_048_576} MB (a question may carry {MAX_IMAGE_SNIPPETS} images of "
        f"at most {MAX_IMAGE_BYTES // 1_048_576} MB each). Send fewer or smaller images."
    )


def _limited(receive: Receive) -> Receive:
    """``receive`` that stops a body without a Content-Length once it passes the limit (the
    route then answers 413 through the gateway's HTTP error handler)."""
    seen = 0

    async def wrapper() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:
                raise HTTPException(413, detail=_too_large(seen))
        return message

    return wrapper
