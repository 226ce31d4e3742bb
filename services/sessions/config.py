"""Settings of the sessions service (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

from pydantic import Field, model_validator

from services.common import ports
from services.common.settings import CommonSettings


class SessionsSettings(CommonSettings):
    sessions_grpc_port: int | None = Field(
        default=None, description="gRPC port of the sessions service. Default: base port + 1."
    )
    sessions_admin_port: int | None = Field(
        default=None,
        description="Admin HTTP port of the sessions service. Default: base port + 11.",
    )
    database_url: str | None = Field(
        default=None,
        description=(
            "SQLAlchemy async URL of the session database, e.g. "
            "postgresql+asyncpg://user@host/db. Unset: sqlite+aiosqlite:///<data dir>/sessions.db, "
            "and POST /register may move it to another Zotero data directory. Set: fixed."
        ),
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> SessionsSettings:
        if self.sessions_grpc_port is None:
            self.sessions_grpc_port = ports.service_port(self.port, "sessions")
        if self.sessions_admin_port is None:
            self.sessions_admin_port = ports.admin_port(self.port, "sessions")
        return self
