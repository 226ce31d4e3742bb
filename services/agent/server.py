"""Wiring of the agent service: research turns over the sessions, library and reranker
services, gRPC and admin servers."""

from __future__ import annotations

import logging

from zocrates.agent.v1 import agent_pb2, agent_pb2_grpc

from services.agent.config import AgentSettings
from services.agent.online_literature import OpenAlexClient, make_search_online_literature
from services.agent.research.library_tools import make_library_tools
from services.agent.research.runtime import ResearchRuntime
from services.agent.servicer import AgentServicer
from services.common.runtime import GrpcServiceRuntime, serve_until_signal
from services.library.client import LibraryClient
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService

logger = logging.getLogger(__name__)

SERVICE_NAME = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name


class AgentServer:
    """The agent service, startable in-process (tests) or from ``__main__``."""

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings
        self.reranker = RerankerClient(settings.reranker_addr, timeout=120.0)
        self.sessions = RemoteSessionService(settings.sessions_addr)
        self.openalex = OpenAlexClient(settings.openalex_url, mailto=settings.openalex_mailto)
        self.library = LibraryClient(settings.library_addr, timeout=60.0)
        assert settings.agent_grpc_port is not None and settings.agent_admin_port is not None
        self.runtime = GrpcServiceRuntime(
            service="agent",
            service_names=[SERVICE_NAME],
            host=settings.bind_host,
            grpc_port=settings.agent_grpc_port,
            admin_port=settings.agent_admin_port,
            readiness=self._readiness,
        )

    async def _readiness(self) -> dict[str, bool]:
        return {
            "library": await self.library.healthy(),
            "reranker": await self.reranker.healthy(),
            "sessions": await self.sessions.healthy(),
        }

    async def start(self) -> None:
        research = ResearchRuntime(
            app_name=self.settings.app_name,
            session_service=self.sessions,
            library_tools=make_library_tools(self.library),
            reranker=self.reranker,
            online_tool=make_search_online_literature(self.openalex),
            data_dir=self.settings.data_dir,
        )
        agent_pb2_grpc.add_AgentServiceServicer_to_server(
            AgentServicer(research), self.runtime.grpc.server
        )
        await self.runtime.start()

    async def stop(self) -> None:
        await self.runtime.stop()
        await self.library.close()
        await self.reranker.close()
        await self.sessions.close()
        await self.openalex.aclose()


async def serve(settings: AgentSettings) -> None:
    await serve_until_signal(
        AgentServer(settings), service_name="agent", otlp_endpoint=settings.otlp_endpoint
    )
