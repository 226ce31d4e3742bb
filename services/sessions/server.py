"""Wiring of the sessions service: store, servicer, gRPC and admin servers."""

from __future__ import annotations

import logging

from zocrates.sessions.v1 import sessions_pb2, sessions_pb2_grpc

from services.common.runtime import GrpcServiceRuntime, serve_until_signal
from services.sessions.config import SessionsSettings
from services.sessions.service import SessionsService
from services.sessions.servicer import SessionServicer

logger = logging.getLogger(__name__)

SERVICE_NAME = sessions_pb2.DESCRIPTOR.services_by_name["SessionService"].full_name


class SessionsServer:
    """The sessions service, startable in-process (tests) or from ``__main__``."""

    def __init__(self, settings: SessionsSettings) -> None:
        self.settings = settings
        self.service = SessionsService(
            database_url=settings.database_url, data_dir=settings.data_dir
        )
        assert settings.sessions_grpc_port is not None and settings.sessions_admin_port is not None
        self.runtime = GrpcServiceRuntime(
            service="sessions",
            service_names=[SERVICE_NAME],
            host=settings.bind_host,
            grpc_port=settings.sessions_grpc_port,
            admin_port=settings.sessions_admin_port,
            readiness=self._readiness,
        )
        sessions_pb2_grpc.add_SessionServiceServicer_to_server(
            SessionServicer(self.service), self.runtime.grpc.server
        )

    async def _readiness(self) -> dict[str, bool]:
        return {"database": await self.service.store.ping()}

    async def start(self) -> None:
        await self.service.open()
        await self.runtime.start()

    async def stop(self) -> None:
        await self.runtime.stop()
        await self.service.close()


async def serve(settings: SessionsSettings) -> None:
    await serve_until_signal(
        SessionsServer(settings), service_name="sessions", otlp_endpoint=settings.otlp_endpoint
    )
