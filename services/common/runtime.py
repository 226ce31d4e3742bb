"""Running a gRPC service: bind, serve, report health, stop cleanly on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Protocol

from services.common.admin import AdminServer, ReadinessCheck
from services.common.grpc_server import GrpcServer
from services.common.telemetry import setup_tracing, shutdown_tracing

logger = logging.getLogger(__name__)


class GrpcServiceRuntime:
    """A ``GrpcServer`` plus its ``AdminServer``; ports 0 pick free ones (tests)."""

    def __init__(
        self,
        *,
        service: str,
        service_names: list[str],
        host: str,
        grpc_port: int,
        admin_port: int,
        readiness: ReadinessCheck,
    ) -> None:
        self.service = service
        self.grpc = GrpcServer(service=service, service_names=service_names)
        self.grpc_port = self.grpc.bind(host, grpc_port)
        self.admin = AdminServer(service=service, host=host, port=admin_port, readiness=readiness)
        self.host = host

    @property
    def address(self) -> str:
        return f"{self.host}:{self.grpc_port}"

    async def start(self, *, serving: bool = True) -> None:
        """Start both servers. ``serving=False`` keeps grpc health NOT_SERVING from the first
        call on (e.g. while models load); the service calls ``grpc.set_serving(True)`` later."""
        if not serving:
            await self.grpc.set_serving(False)
        await self.grpc.start()
        await self.admin.start()
        await self.grpc.set_serving(serving)
        logger.info(
            "%s serving gRPC on %s (admin http://%s:%d)",
            self.service,
            self.address,
            self.host,
            self.admin.port,
        )

    async def stop(self, grace: float = 5.0) -> None:
        await self.grpc.stop(grace)
        await self.admin.stop()


async def wait_for_shutdown_signal() -> None:
    """Return when the process receives SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    logger.info("shutdown signal received")


class Servable(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def serve_until_signal(
    server: Servable, *, service_name: str, otlp_endpoint: str | None
) -> None:
    """A service's process: traced as ``service_name``, ``server`` started, and stopped (its
    spans flushed) on SIGTERM or SIGINT."""
    setup_tracing(service_name=service_name, otlp_endpoint=otlp_endpoint)
    await server.start()
    try:
        await wait_for_shutdown_signal()
    finally:
        await server.stop()
        shutdown_tracing()
