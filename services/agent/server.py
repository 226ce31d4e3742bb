"""Wiring of the agent service: the library index over the reranker, gRPC and admin servers."""

from __future__ import annotations

import asyncio
import logging

from zocrates.agent.v1 import agent_pb2, agent_pb2_grpc

from services.agent.config import AgentSettings
from services.agent.library.library import Library
from services.agent.online_literature import OpenAlexClient, make_search_online_literature
from services.agent.research.runtime import ResearchRuntime
from services.agent.servicer import AgentServicer
from services.common.runtime import GrpcServiceRuntime, wait_for_shutdown_signal
from services.common.telemetry import setup_tracing, shutdown_tracing
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService

logger = logging.getLogger(__name__)

SERVICE_NAME = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name


async def wait_for_models(reranker: RerankerClient) -> str:
    """The reranker's embedding model name, once its models are loaded."""
    delay = 0.2
    while True:
        if await reranker.healthy():
            models = await reranker.models()
            return str(models["embedding_model"])
        logger.info("waiting for the reranker at %s to load its models", reranker.address)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 3.0)


class AgentServer:
    """The agent service, startable in-process (tests) or from ``__main__``."""

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings
        self.reranker = RerankerClient(settings.reranker_addr, timeout=120.0)
        self.sessions = RemoteSessionService(settings.sessions_addr)
        self.openalex = OpenAlexClient(settings.openalex_url, mailto=settings.openalex_mailto)
        self.library: Library | None = None
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
            "library": self.library is not None,
            "reranker": await self.reranker.healthy(),
            "sessions": await self.sessions.healthy(),
        }

    async def start(self) -> None:
        model = await wait_for_models(self.reranker)
        self.library = Library(
            index_dir=self.settings.library_dir,
            zotero_dir=self.settings.zotero_dir.expanduser(),
            embedder=self.reranker,
            reranker=self.reranker,
            embedding_model=model,
            base_attachment_dir=self.settings.base_attachment_dir,
            index_workers=self.settings.index_workers or None,
            vector_graph_from=self.settings.vector_graph_from,
        )
        await self.library.open()
        research = ResearchRuntime(
            app_name=self.settings.app_name,
            session_service=self.sessions,
            library_tools=self.library.research_tools(),
            reranker=self.reranker,
            online_tool=make_search_online_literature(self.openalex),
            data_dir=self.settings.data_dir,
        )
        agent_pb2_grpc.add_AgentServiceServicer_to_server(
            AgentServicer(self.library, research), self.runtime.grpc.server
        )
        await self.runtime.start()

    async def stop(self) -> None:
        await self.runtime.stop()
        if self.library is not None:
            await self.library.aclose()
        await self.reranker.close()
        await self.sessions.close()
        await self.openalex.aclose()


async def serve(settings: AgentSettings) -> None:
    setup_tracing(service_name="agent", otlp_endpoint=settings.otlp_endpoint)
    server = AgentServer(settings)
    await server.start()
    try:
        await wait_for_shutdown_signal()
    finally:
        await server.stop()
        shutdown_tracing()
