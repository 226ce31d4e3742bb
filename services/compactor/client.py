"""Typed client of the compactor service (used by the gateway after each turn)."""

from __future__ import annotations

import math
from typing import Any

from zocrates.compactor.v1 import compactor_pb2 as pb
from zocrates.compactor.v1 import compactor_pb2_grpc as pb_grpc

from services.common.app_config import ZocratesConfig
from services.common.grpc_client import ServiceClient


class CompactorClient(ServiceClient):
    peer = "compactor"

    def __init__(self, address: str, *, timeout: float = 60.0) -> None:
        super().__init__(address, timeout=timeout)
        self.stub = pb_grpc.CompactorServiceStub(self.channel)

    async def evaluate(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: ZocratesConfig | None = None,
    ) -> dict[str, Any]:
        """``config``: the user's settings (None: the compactor reads its own data
        directory's zocrates_config.json)."""
        r = await self.call(
            self.stub.EvaluateAndCompact,
            pb.EvaluateRequest(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                config_json=config.model_dump_json() if config else "",
            ),
        )
        return {
            "outcome": r.outcome,
            "reason": r.reason,
            "completed_turns": r.completed_turns,
            "effective_min_turns": r.effective_min_turns,
            "prompt_tokens": r.prompt_tokens,
            "forced": r.forced,
            "probed": r.probed,
            "probability": None if math.isnan(r.probability) else r.probability,
            "verdict": r.verdict or None,
            "threshold": r.threshold or None,
            "decision_model": r.decision_model or None,
            "probe_latency_ms": r.probe_latency_ms,
            "start_timestamp": r.start_timestamp or None,
            "end_timestamp": r.end_timestamp or None,
            "summarized_turns": r.summarized_turns,
            "retained_turns": r.retained_turns,
            "compaction_event_id": r.compaction_event_id or None,
            "took_ms": r.took_ms,
        }
