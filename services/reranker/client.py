"""Typed client of the reranker service (used by the agent and the compactor).

Failed RPCs surface as the domain errors of ``services.common.errors``; an unreachable service
becomes ``Unavailable`` with code ``reranker_unavailable``, models still loading ``Unavailable``
with code ``models_loading``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from zocrates.reranker.v1 import reranker_pb2 as pb
from zocrates.reranker.v1 import reranker_pb2_grpc as pb_grpc

from services.common.grpc_client import ServiceClient


class RerankerClient(ServiceClient):
    peer = "reranker"

    def __init__(self, address: str, *, timeout: float = 60.0) -> None:
        super().__init__(address, timeout=timeout)
        self.stub = pb_grpc.RerankerServiceStub(self.channel)

    async def rerank(
        self,
        query: str,
        candidates: Sequence[tuple[str, str]],
        *,
        max_chunks: int = 0,
        word_ceiling: int = 0,
        timeout: float | None = None,
    ) -> list[tuple[str, float, int]]:
        """(id, score, word count) of ``candidates`` ((id, text) pairs), best first, trimmed
        to ``max_chunks`` results and ``word_ceiling`` words (0 = no limit)."""
        reply = await self.call(
            self.stub.Rerank,
            pb.RerankRequest(
                query=query,
                candidates=[pb.Candidate(id=cid, text=text) for cid, text in candidates],
                max_chunks=max_chunks,
                word_ceiling=word_ceiling,
            ),
            timeout=timeout,
        )
        return [(r.id, r.score, r.word_count) for r in reply.results]

    async def embed(
        self,
        texts: Sequence[str],
        *,
        is_query: bool = False,
        background: bool = False,
        timeout: float | None = None,
    ) -> np.ndarray:
        """float32 array of shape ``(len(texts), dim)``; every row L2-normalised.
        ``background``: bulk work that yields to interactive calls (see EmbedRequest)."""
        request = pb.EmbedRequest(texts=list(texts), is_query=is_query, background=background)
        reply = await self.call(self.stub.Embed, request, timeout=timeout)
        vectors = np.frombuffer(reply.vectors, dtype="<f4").astype(np.float32, copy=False)
        return vectors.reshape(reply.count, reply.dim)

    async def models(self) -> dict[str, Any]:
        reply = await self.call(self.stub.GetModels, pb.GetModelsRequest())
        return {
            "reranker_model": reply.reranker_model,
            "embedding_model": reply.embedding_model,
            "embedding_dim": reply.embedding_dim,
            "ready": reply.ready,
        }
