"""Client side of the gRPC frame: channels that carry trace context, and the translation of
failed RPCs back into typed domain errors that name the peer."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.errors import (
    ERROR_CODE_METADATA_KEY,
    Unavailable,
    ZocratesError,
    error_for_grpc_status,
)
from services.common.telemetry import inject_context

# The largest message a channel or server takes, each way: a session with image snippets
# (services/common/turn_scope.py) is far larger than gRPC's default 4 MB.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# How long a call waits for its channel to (re)connect first: a little over the longest
# reconnect backoff (grpc.max_reconnect_backoff_ms below).
RECONNECT_GRACE_SECONDS = 2.5


def _with_context(details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
    """``details`` with the current W3C trace context added to its metadata."""
    carrier: dict[str, str] = {}
    inject_context(carrier)
    if not carrier:
        return details
    metadata = grpc.aio.Metadata(*(details.metadata or ()))
    for key, value in carrier.items():
        metadata.add(key, value)
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


# One class per call type: grpc.aio files an interceptor under the first interceptor type it is
# an instance of, so a class that is both would never see server-streaming calls (Chat, Resume,
# SyncLibrary would start new traces).
class _UnaryTraceContext(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return await continuation(_with_context(client_call_details), request)


class _StreamTraceContext(grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return await continuation(_with_context(client_call_details), request)


def open_channel(address: str) -> grpc.aio.Channel:
    """An insecure channel to ``address`` (host:port or unix:path) that carries trace context."""
    return grpc.aio.insecure_channel(
        address,
        interceptors=[_UnaryTraceContext(), _StreamTraceContext()],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            # Reconnect quickly after a peer restarts instead of backing off for minutes.
            ("grpc.initial_reconnect_backoff_ms", 200),
            ("grpc.max_reconnect_backoff_ms", 2000),
        ],
    )


def error_from_rpc(exc: grpc.aio.AioRpcError, *, peer: str, address: str) -> ZocratesError:
    """The domain error a failed RPC stands for, with a message that names the peer."""
    status = exc.code()
    code = None
    for key, value in exc.trailing_metadata() or ():
        if key == ERROR_CODE_METADATA_KEY and isinstance(value, str):
            code = value
    if code is None and status is grpc.StatusCode.UNAVAILABLE:
        return Unavailable(
            f"The {peer} service at {address} is not reachable. Is it running? "
            f"({exc.details() or 'connection failed'})",
            code=f"{peer}_unavailable",
        )
    if code is None and status is grpc.StatusCode.DEADLINE_EXCEEDED:
        cls = error_for_grpc_status(status.name)
        return cls(
            f"The {peer} service at {address} did not answer in time.", code=f"{peer}_timeout"
        )
    cls = error_for_grpc_status(status.name)
    return cls(exc.details() or f"{peer} failed with {status.name}", code=code)


class ServiceClient:
    """Base for typed clients: one channel, one peer name, a default deadline."""

    peer: str = "peer"

    def __init__(self, address: str, *, timeout: float = 10.0, peer: str | None = None) -> None:
        if peer is not None:
            self.peer = peer
        self.address = address
        self.timeout = timeout
        self.channel = open_channel(address)
        self._health = health_pb2_grpc.HealthStub(self.channel)

    async def call(self, rpc: Any, request: Any, *, timeout: float | None = None) -> Any:
        await self._connected()
        try:
            return await rpc(request, timeout=timeout or self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, peer=self.peer, address=self.address) from None

    async def _connected(self) -> None:
        """A channel whose peer was away (restarted, not yet up) reconnects with a backoff of
        up to 2 s: give it that long before the call, so the first call after a restart does
        not fail fast while the next one would work. A peer that stays away still fails the
        call (``<peer>_unavailable``), only up to RECONNECT_GRACE_SECONDS later."""
        state = self.channel.get_state(try_to_connect=True)
        if state is grpc.ChannelConnectivity.READY:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.channel.channel_ready(), RECONNECT_GRACE_SECONDS)

    async def healthy(self, *, timeout: float = 1.0) -> bool:
        """Whether the peer's grpc.health.v1 reports SERVING."""
        try:
            reply = await self._health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    async def close(self) -> None:
        await self.channel.close()
