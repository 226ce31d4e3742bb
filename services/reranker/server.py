"""Wiring of the reranker service: models, servicer, gRPC and admin servers.

The ports are bound first and the models load in the background, so the process answers
health checks at once: grpc health NOT_SERVING and ``/readyz`` 503 ``{"models": false}`` until
both models are loaded, SERVING afterwards. A model that cannot be loaded stops
``python -m services.reranker`` with the loader's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable

from zocrates.reranker.v1 import reranker_pb2, reranker_pb2_grpc

from services.common.runtime import GrpcServiceRuntime, wait_for_shutdown_signal
from services.common.settings import SettingsError
from services.common.telemetry import setup_tracing, shutdown_tracing
from services.reranker import models
from services.reranker.config import RerankerSettings
from services.reranker.service import RerankerService
from services.reranker.servicer import RerankerServicer

logger = logging.getLogger(__name__)

SERVICE_NAME = reranker_pb2.DESCRIPTOR.services_by_name["RerankerService"].full_name


class RerankerServer:
    """The reranker service, startable in-process (tests, benchmarks) or from ``__main__``.

    ``load_reranker`` / ``load_embedder`` replace the loaders the settings name (tests use
    them to share models between servers or to hold the load back)."""

    def __init__(
        self,
        settings: RerankerSettings,
        *,
        load_reranker: Callable[[], models.CrossEncoder] | None = None,
        load_embedder: Callable[[], models.Embedder] | None = None,
    ) -> None:
        self.settings = settings
        self.service = RerankerService(
            reranker_model=settings.rerank_model,
            embedding_model=settings.embedding_model,
            load_reranker=load_reranker
            or functools.partial(
                models.load_reranker,
                settings.rerank_model,
                max_seq_length=settings.rerank_max_seq_length,
                threads=settings.inference_threads,
                micro_batch=settings.onnx_micro_batch,
            ),
            load_embedder=load_embedder
            or functools.partial(
                models.load_embedder,
                settings.embedding_model,
                max_seq_length=settings.embedding_max_seq_length,
                threads=settings.inference_threads,
                micro_batch=settings.onnx_micro_batch,
            ),
            max_batch_size=settings.max_batch_size,
            batch_wait_ms=settings.batch_wait_ms,
            score_cache_size=settings.rerank_cache_size,
        )
        assert settings.reranker_grpc_port is not None and settings.reranker_admin_port is not None
        self.runtime = GrpcServiceRuntime(
            service="reranker",
            service_names=[SERVICE_NAME],
            host=settings.bind_host,
            grpc_port=settings.reranker_grpc_port,
            admin_port=settings.reranker_admin_port,
            readiness=self._readiness,
        )
        reranker_pb2_grpc.add_RerankerServiceServicer_to_server(
            RerankerServicer(self.service), self.runtime.grpc.server
        )
        self._loading: asyncio.Task[None] | None = None

    async def _readiness(self) -> dict[str, bool]:
        return {"models": self.service.ready}

    async def _load_models(self) -> None:
        try:
            await self.service.load()
        except Exception as exc:
            logger.error("the reranker's models failed to load: %s", exc)
            return
        await self.runtime.grpc.set_serving(True)
        logger.info("reranker ready: models loaded")

    async def start(self) -> None:
        """Bind and serve (not ready), then load the models in the background."""
        await self.runtime.start(serving=False)
        self._loading = asyncio.create_task(self._load_models(), name="reranker-load-models")

    async def wait_loaded(self) -> bool:
        """Wait for the model load to finish; whether the models are ready."""
        if self._loading is not None:
            await asyncio.shield(self._loading)
        return self.service.ready

    async def stop(self) -> None:
        await self.runtime.stop()
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()  # the loading thread itself finishes on its own
            with contextlib.suppress(asyncio.CancelledError):
                await self._loading
        await self.service.close()


async def serve(settings: RerankerSettings) -> None:
    setup_tracing(service_name="reranker", otlp_endpoint=settings.otlp_endpoint)
    server = RerankerServer(settings)
    await server.start()
    shutdown = asyncio.create_task(wait_for_shutdown_signal())
    loaded = asyncio.create_task(server.wait_loaded())
    try:
        await asyncio.wait({shutdown, loaded}, return_when=asyncio.FIRST_COMPLETED)
        if loaded.done() and not loaded.result():
            raise SettingsError(f"reranker: cannot serve: {server.service.load_error}")
        await shutdown
    finally:
        shutdown.cancel()
        loaded.cancel()
        await server.stop()
        shutdown_tracing()
