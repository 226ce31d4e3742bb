"""gRPC servicer: translates reranker.v1 protos to ``RerankerService`` calls and back."""

from __future__ import annotations

import grpc
from zocrates.reranker.v1 import reranker_pb2 as pb
from zocrates.reranker.v1 import reranker_pb2_grpc as pb_grpc

from services.reranker.service import RerankerService


class RerankerServicer(pb_grpc.RerankerServiceServicer):
    def __init__(self, service: RerankerService) -> None:
        self._svc = service

    async def Rerank(
        self, request: pb.RerankRequest, context: grpc.aio.ServicerContext
    ) -> pb.RerankReply:
        result = await self._svc.rerank(
            query=request.query,
            candidates=[(c.id, c.text) for c in request.candidates],
            max_chunks=request.max_chunks,
            word_ceiling=request.word_ceiling,
        )
        return pb.RerankReply(
            results=[
                pb.ScoredCandidate(id=r.id, score=r.score, word_count=r.word_count)
                for r in result.results
            ],
            model=result.model,
            took_ms=result.took_ms,
        )

    async def Embed(
        self, request: pb.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> pb.EmbedReply:
        result = await self._svc.embed(
            texts=list(request.texts), is_query=request.is_query, background=request.background
        )
        count, dim = result.vectors.shape
        return pb.EmbedReply(
            dim=dim,
            vectors=result.vectors.astype("<f4", copy=False).tobytes(order="C"),
            model=result.model,
            count=count,
        )

    async def GetModels(
        self, request: pb.GetModelsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ModelsReply:
        info = self._svc.models()
        return pb.ModelsReply(
            reranker_model=info.reranker_model,
            embedding_model=info.embedding_model,
            embedding_dim=info.embedding_dim,
            ready=info.ready,
        )
