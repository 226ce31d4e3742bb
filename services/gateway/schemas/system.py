"""Bodies of health, registration and the user settings."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from services.common.app_config import ZocratesConfig
from services.gateway.schemas.base import Success
from services.gateway.schemas.sessions import MaintenanceReport


class Health(BaseModel):
    status: Literal["ok"]


class Registered(Success):
    zotero_data_dir: str
    data_dir: str = Field(description="Where Zocrates writes: <Zotero data dir>/zocrates-data.")
    sessions_db: str = Field(description="The sessions database now in use.")
    changed: bool = Field(description="Whether the stack moved to another directory.")
    zotero_sqlite_found: bool
    maintenance: MaintenanceReport = Field(description="The start-up maintenance it ran.")


class SettingReference(BaseModel):
    key: str
    type: str
    default: Any
    description: str


class ConfigBody(Success):
    config: ZocratesConfig


class ConfigWithReference(ConfigBody):
    path: str = Field(description="zocrates_config.json.")
    reference: list[SettingReference] = Field(description="Every setting, documented.")
