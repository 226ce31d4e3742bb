"""Wiring of the library service: the library index over the reranker, gRPC and admin servers."""

from __future__ import annotations

import asyncio
import logging

from zocrates.library.v1 import library_pb2, library_pb2_grpc

from services.common.runtime import GrpcServiceRuntime, serve_until_signal
from services.library.config import LibrarySettings
from services.library.library import Library, OcrSettings
from services.library.servicer import LibraryServicer
from services.reranker.client import RerankerClient

logger = logging.getLogger(__name__)

SERVICE_NAME = library_pb2.DESCRIPTOR.services_by_name["LibraryService"].full_name


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


class LibraryServer:
    """The library service, startable in-process (tests) or from ``__main__``."""

    def __init__(self, settings: LibrarySettings) -> None:
        self.settings = settings
        self.reranker = RerankerClient(settings.reranker_addr, timeout=120.0)
        self.library: Library | None = None
        assert settings.library_grpc_port is not None and settings.library_admin_port is not None
        self.runtime = GrpcServiceRuntime(
            service="library",
            service_names=[SERVICE_NAME],
            host=settings.bind_host,
            grpc_port=settings.library_grpc_port,
            admin_port=settings.library_admin_port,
            readiness=self._readiness,
        )

    async def _readiness(self) -> dict[str, bool]:
        return {"index": self.library is not None, "reranker": await self.reranker.healthy()}

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
            ocr=OcrSettings(
                languages=self.settings.ocr_languages,
                dpi=self.settings.ocr_dpi,
                workers=self.settings.ocr_workers,
                enabled=self.settings.ocr_enabled,
            ),
        )
        await self.library.open()
        library_pb2_grpc.add_LibraryServiceServicer_to_server(
            LibraryServicer(self.library), self.runtime.grpc.server
        )
        await self.runtime.start()

    async def stop(self) -> None:
        await self.runtime.stop()
        if self.library is not None:
            await self.library.aclose()
        await self.reranker.close()


async def serve(settings: LibrarySettings) -> None:
    await serve_until_signal(
        LibraryServer(settings), service_name="library", otlp_endpoint=settings.otlp_endpoint
    )
