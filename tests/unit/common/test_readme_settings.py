"""The README documents every setting a user or operator can change."""

from __future__ import annotations

import pathlib

from services.agent.config import AgentSettings
from services.common.app_config import ZocratesConfig
from services.compactor.config import CompactorSettings
from services.gateway.config import GatewaySettings
from services.reranker.config import RerankerSettings
from services.sessions.config import SessionsSettings

README = (pathlib.Path(__file__).resolve().parents[3] / "README.md").read_text()


def test_every_environment_variable_is_documented() -> None:
    for settings in (
        GatewaySettings,
        SessionsSettings,
        AgentSettings,
        RerankerSettings,
        CompactorSettings,
    ):
        for name in settings.model_fields:
            assert f"`ZOCRATES_{name.upper()}`" in README, (
                f"ZOCRATES_{name.upper()} missing from README"
            )


def test_every_config_key_is_documented_with_its_default() -> None:
    for name, field in ZocratesConfig.model_fields.items():
        assert f"| `{name}` | {field.default} |" in README, f"{name} missing from README"
