"""Pure-ASGI middleware (safe for streaming responses): Host check, bearer token, metrics
and a server span per request."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from opentelemetry import context as otel_context
from opentelemetry import trace
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.common.metrics import HTTP_LATENCY, HTTP_REQUESTS
from services.common.telemetry import extract_context
from services.gateway.auth import host_allowed, token_matches
from services.gateway.errors import ErrorBody

PUBLIC_PATHS = frozenset({"/healthz"})
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
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
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
        await self.app(scope, receive, send)
