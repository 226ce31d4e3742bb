"""Settings of the agent service (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

from pydantic import Field, model_validator

from services.common import ports
from services.common.settings import CommonSettings


class AgentSettings(CommonSettings):
    agent_grpc_port: int | None = Field(
        default=None, description="gRPC port of the agent service. Default: base port + 2."
    )
    agent_admin_port: int | None = Field(
        default=None, description="Admin HTTP port of the agent service. Default: base port + 12."
    )
    reranker_addr: str = Field(
        description=(
            "host:port of the reranker service (embeddings and reranking). "
            "`zocrates run` sets it to 127.0.0.1:<base port + 3>."
        ),
    )
    library_addr: str = Field(
        description=(
            "host:port of the library service (the index the research tools search and read). "
            "`zocrates run` sets it to 127.0.0.1:<base port + 5>."
        ),
    )
    sessions_addr: str = Field(
        description=(
            "host:port of the sessions service (the agent reads and appends session events "
            "only through it). `zocrates run` sets it to 127.0.0.1:<base port + 1>."
        ),
    )
    app_name: str = Field(default="zocrates", description="ADK app name of the sessions.")
    openalex_url: str = Field(
        default="https://api.openalex.org",
        description="Base URL of the OpenAlex API used by search_online_literature.",
    )
    openalex_mailto: str = Field(
        default="",
        description="E-mail sent to OpenAlex with each request (its 'polite pool'); optional.",
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> AgentSettings:
        if self.agent_grpc_port is None:
            self.agent_grpc_port = ports.service_port(self.port, "agent")
        if self.agent_admin_port is None:
            self.agent_admin_port = ports.admin_port(self.port, "agent")
        return self
