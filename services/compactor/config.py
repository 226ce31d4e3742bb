"""Settings of the compactor service (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

from pydantic import Field, model_validator

from services.common import ports
from services.common.settings import CommonSettings


class CompactorSettings(CommonSettings):
    compactor_grpc_port: int | None = Field(
        default=None, description="gRPC port of the compactor service. Default: base port + 4."
    )
    compactor_admin_port: int | None = Field(
        default=None,
        description="Admin HTTP port of the compactor service. Default: base port + 14.",
    )
    sessions_addr: str = Field(
        description=(
            "host:port of the sessions service (sessions are read and the compaction event "
            "appended through it). `zocrates run` sets it."
        ),
    )
    reranker_addr: str = Field(
        description=(
            "host:port of the reranker service (embeddings for the local decision model). "
            "`zocrates run` sets it."
        ),
    )
    decisions_url: str = Field(
        default="https://openrouter.ai",
        description=(
            "Base URL of the Decisions API, used when adaptive_compaction_decision_model names "
            "a remote model (the key comes from OPENROUTER_API_KEY)."
        ),
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> CompactorSettings:
        if self.compactor_grpc_port is None:
            self.compactor_grpc_port = ports.service_port(self.port, "compactor")
        if self.compactor_admin_port is None:
            self.compactor_admin_port = ports.admin_port(self.port, "compactor")
        return self
