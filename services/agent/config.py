"""Settings of the agent service (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

import pathlib

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
    index_dir: pathlib.Path | None = Field(
        default=None,
        description="Folder of the library index. Default: <data dir>/library.",
    )
    index_workers: int = Field(
        default=0,
        ge=0,
        le=16,
        description=("Processes that extract text while indexing (0: one per core, at most 2)."),
    )
    vector_graph_from: int = Field(
        default=100_000,
        ge=1,
        description=(
            "Chunk vectors from which semantic search goes through an approximate "
            "nearest-neighbour graph (HNSW, saved next to the index) instead of exact search."
        ),
    )
    base_attachment_dir: pathlib.Path | None = Field(
        default=None,
        description=(
            "Zotero's Linked Attachment Base Directory, to resolve attachments stored as "
            "relative links. Unset: such attachments fall back to Zotero's full-text cache."
        ),
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> AgentSettings:
        if self.agent_grpc_port is None:
            self.agent_grpc_port = ports.service_port(self.port, "agent")
        if self.agent_admin_port is None:
            self.agent_admin_port = ports.admin_port(self.port, "agent")
        return self

    @property
    def library_dir(self) -> pathlib.Path:
        return (self.index_dir or self.data_dir / "library").expanduser()
