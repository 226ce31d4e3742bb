"""gRPC servicer of the compactor service."""

from __future__ import annotations

import grpc
from zocrates.compactor.v1 import compactor_pb2 as pb
from zocrates.compactor.v1 import compactor_pb2_grpc as pb_grpc

from services.common.app_config import config_from_json
from services.compactor.service import Compactor


class CompactorServicer(pb_grpc.CompactorServiceServicer):
    def __init__(self, compactor: Compactor) -> None:
        self._compactor = compactor

    async def EvaluateAndCompact(
        self, request: pb.EvaluateRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompactionOutcome:
        r = await self._compactor.evaluate(
            app_name=request.app_name,
            user_id=request.user_id,
            session_id=request.session_id,
            config=config_from_json(request.config_json) if request.config_json else None,
        )
        return pb.CompactionOutcome(**{k: v for k, v in r.items() if v is not None})
