"""The gRPC server frame: one interceptor for errors, metrics and trace context, plus the
standard ``grpc.health.v1`` service.

Servicers stay thin: they translate proto <-> domain and let typed domain errors propagate.
This interceptor is the one place that maps them to gRPC status codes.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from opentelemetry import context as otel_context
from opentelemetry import trace

from services.common.errors import ERROR_CODE_METADATA_KEY, ZocratesError
from services.common.grpc_client import MAX_MESSAGE_BYTES
from services.common.metrics import GRPC_SERVER_LATENCY, GRPC_SERVER_REQUESTS
from services.common.telemetry import extract_context

logger = logging.getLogger(__name__)
_tracer = trace.get_tracer("zocrates.grpc")

_HEALTH_METHOD_PREFIX = "/grpc.health.v1.Health/"


async def _abort_with(context: grpc.aio.ServicerContext, exc: BaseException) -> None:
    """Abort the RPC with the status and stable code that ``exc`` maps to."""
    if isinstance(exc, ZocratesError):
        status = grpc.StatusCode[exc.grpc_status]
        code, message = exc.code, exc.message
    else:
        status, code = grpc.StatusCode.INTERNAL, "internal_error"
        message = f"internal error ({type(exc).__name__}); see the service log"
    context.set_trailing_metadata(((ERROR_CODE_METADATA_KEY, code),))
    await context.abort(status, message)


class ServerInterceptor(grpc.aio.ServerInterceptor):
    """Maps domain errors to status codes, records metrics, continues the caller's trace."""

    def __init__(self, service: str) -> None:
        self._service = service

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or method.startswith(_HEALTH_METHOD_PREFIX):
            return handler
        short = method.rsplit("/", 1)[-1]
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(short, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(short, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # client- and bidi-streaming RPCs are not used by Zocrates

    def _start(self, method: str, context: grpc.aio.ServicerContext) -> tuple[Any, Any]:
        carrier = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        token = otel_context.attach(extract_context(carrier))
        span = _tracer.start_span(f"{self._service}/{method}", kind=trace.SpanKind.SERVER)
        return token, span

    def _finish(self, method: str, started: float, code: str, token: Any, span: Any) -> None:
        GRPC_SERVER_REQUESTS.labels(self._service, method, code).inc()
        GRPC_SERVER_LATENCY.labels(self._service, method).observe(time.perf_counter() - started)
        span.set_attribute("rpc.grpc.status_code", code)
        span.end()
        if token is not None:
            otel_context.detach(token)

    def _wrap_unary(
        self, method: str, behavior: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Any]:
        async def wrapper(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            token, span = self._start(method, context)
            code = "OK"
            try:
                with trace.use_span(span, end_on_exit=False):
                    return await behavior(request, context)
            except Exception as exc:
                code = _status_name(exc)
                await _fail(method, context, exc)
            finally:
                self._finish(method, started, code, token, span)

        return wrapper

    def _wrap_stream(
        self, method: str, behavior: Callable[..., AsyncIterator[Any]]
    ) -> Callable[..., AsyncIterator[Any]]:
        async def wrapper(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            # The span's context is attached around each step of the stream, never across a
            # yield: a client that goes away closes this generator from another context, where
            # a token attached before the yield cannot be detached ("Failed to detach context").
            started = time.perf_counter()
            token, span = self._start(method, context)
            traced = trace.set_span_in_context(span)
            otel_context.detach(token)
            code = "OK"
            items = behavior(request, context).__aiter__()
            try:
                while True:
                    step = otel_context.attach(traced)
                    try:
                        item = await anext(items)
                    except StopAsyncIteration:
                        break
                    finally:
                        otel_context.detach(step)
                    yield item
            except Exception as exc:
                code = _status_name(exc)
                await _fail(method, context, exc)
            finally:
                with contextlib.suppress(Exception):
                    await items.aclose()  # type: ignore[attr-defined]
                self._finish(method, started, code, None, span)

        return wrapper


def _status_name(exc: BaseException) -> str:
    """The status-code label a failed call is counted under."""
    if isinstance(exc, ZocratesError):
        return exc.grpc_status
    return "ABORTED_BY_HANDLER" if _is_abort(exc) else "INTERNAL"


async def _fail(method: str, context: grpc.aio.ServicerContext, exc: Exception) -> None:
    """Log a failed call and abort it with the status ``exc`` maps to (always raises)."""
    if _is_abort(exc):
        raise exc  # the servicer aborted the call itself
    if isinstance(exc, ZocratesError):
        logger.info("%s failed: %s (%s)", method, exc.message, exc.code)
    else:
        logger.exception("%s failed with an unexpected error", method, exc_info=exc)
    await _abort_with(context, exc)


def _is_abort(exc: BaseException) -> bool:
    # grpc.aio raises AbortError from context.abort(); it must propagate untouched.
    return type(exc).__name__ in {"AbortError", "InternalError", "UsageError"}


class GrpcServer:
    """A grpc.aio server with our interceptor and health service, bound to one address."""

    def __init__(self, *, service: str, service_names: list[str]) -> None:
        self.server = grpc.aio.server(
            interceptors=[ServerInterceptor(service)],
            # As the clients (grpc_client.open_channel): a prompt with image snippets and a
            # session that holds them are larger than gRPC's default 4 MB.
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ],
        )
        self.health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._service_names = ["", *service_names]
        self.port: int | None = None

    def bind(self, host: str, port: int) -> int:
        """Bind ``host:port`` (0 picks a free port) and return the bound port."""
        bound = self.server.add_insecure_port(f"{host}:{port}")
        if bound == 0:
            raise OSError(f"could not bind gRPC port {host}:{port} (in use?)")
        self.port = bound
        return bound

    async def start(self) -> None:
        await self.server.start()

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in self._service_names:
            await self.health.set(name, status)

    async def stop(self, grace: float = 5.0) -> None:
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
