"""The settings every service shares. Each service subclasses ``CommonSettings``.

Environment variables use the ``ZOCRATES_`` prefix (``ZOCRATES_PORT=9000``). Settings are read
once in ``__main__`` and passed down; nothing else reads the environment.
"""

from __future__ import annotations

import pathlib
from typing import Literal, TypeVar

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.common import ports

DATA_FOLDER_NAME = "zocrates-data"

S = TypeVar("S", bound=BaseSettings)


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ZOCRATES_", extra="ignore")

    zotero_dir: pathlib.Path = Field(
        default=pathlib.Path("~/Zotero"),
        description=(
            "The Zotero data directory (the folder that holds zotero.sqlite). Zocrates writes "
            "everything it keeps under its zocrates-data/ subfolder. POST /register can point "
            "the running stack at another one."
        ),
    )
    port: int = Field(
        default=ports.DEFAULT_BASE_PORT,
        ge=1024,
        le=65535 - ports.PORT_SPAN,
        description=(
            "Base port. The gateway listens on it; the other services and the admin ports "
            "take the ports that follow (see docs/configuration.md)."
        ),
    )
    bind_host: str = Field(
        default="127.0.0.1",
        description="Address every listener binds. Keep 127.0.0.1 unless a proxy fronts it.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Log level of every logger in the process."
    )
    log_json: bool = Field(
        default=False, description="Write logs as one JSON object per line (for collectors)."
    )
    otlp_endpoint: str | None = Field(
        default=None,
        description=(
            "OTLP/gRPC endpoint for traces (e.g. http://127.0.0.1:4317); off (or none, false, "
            "0, empty) disables tracing. Unset: Phoenix's collector at 127.0.0.1:4317 "
            "(PHOENIX_GRPC_PORT) if one listens at start, else no exporter and no overhead."
        ),
    )

    @property
    def data_dir(self) -> pathlib.Path:
        """``<zotero_dir>/zocrates-data``: everything Zocrates writes lives here."""
        return self.zotero_dir.expanduser() / DATA_FOLDER_NAME


class SettingsError(SystemExit):
    """Start-up configuration is incomplete or invalid; the message says what to set."""


def load_settings(cls: type[S], service: str) -> S:
    """Read ``cls`` from the environment, turning validation errors into one clear message."""
    try:
        return cls()
    except ValidationError as exc:
        lines = [f"{service}: invalid or missing configuration:"]
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"])
            env = "ZOCRATES_" + field.upper()
            if err["type"] == "missing":
                described = cls.model_fields[field].description if field in cls.model_fields else ""
                lines.append(f"  - {env} is required. {described}".rstrip())
            else:
                lines.append(f"  - {env}: {err['msg']}")
        raise SettingsError("\n".join(lines)) from None
