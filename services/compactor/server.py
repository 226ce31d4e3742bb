"""Wiring of the compactor service: sessions and reranker clients, gRPC and admin servers."""

from __future__ import annotations

from zocrates.compactor.v1 import compactor_pb2, compactor_pb2_grpc

from services.common.runtime import GrpcServiceRuntime, serve_until_signal
from services.compactor.config import CompactorSettings
from services.compactor.service import Compactor
from services.compactor.servicer import CompactorServicer
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService

SERVICE_NAME = compactor_pb2.DESCRIPTOR.services_by_name["CompactorService"].full_name


class CompactorServer:
    """The compactor service, startable in-process (tests) or from ``__main__``."""

    def __init__(self, settings: CompactorSettings) -> None:
        self.settings = settings
        self.sessions = RemoteSessionService(settings.sessions_addr)
        self.reranker = RerankerClient(settings.reranker_addr, timeout=30.0)
        self.compactor = Compactor(
            session_service=self.sessions,
            embed=self.reranker.embed,
            data_dir=settings.data_dir,
            decisions_url=settings.decisions_url,
        )
        assert settings.compactor_grpc_port is not None
        assert settings.compactor_admin_port is not None
        self.runtime = GrpcServiceRuntime(
            service="compactor",
            service_names=[SERVICE_NAME],
            host=settings.bind_host,
            grpc_port=settings.compactor_grpc_port,
            admin_port=settings.compactor_admin_port,
            readiness=self._readiness,
        )

    async def _readiness(self) -> dict[str, bool]:
        # The reranker is only needed when the gate opens (local decision model): its absence
        # degrades compaction (fail open), it does not make the service unready.
        return {"sessions": await self.sessions.healthy()}

    async def start(self) -> None:
        compactor_pb2_grpc.add_CompactorServiceServicer_to_server(
            CompactorServicer(self.compactor), self.runtime.grpc.server
        )
        await self.runtime.start()

    async def stop(self) -> None:
        await self.runtime.stop()
        await self.compactor.aclose()
        await self.sessions.close()
        await self.reranker.close()


async def serve(settings: CompactorSettings) -> None:
    await serve_until_signal(
        CompactorServer(settings), service_name="compactor", otlp_endpoint=settings.otlp_endpoint
    )
