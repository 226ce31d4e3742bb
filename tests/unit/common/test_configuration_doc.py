"""docs/configuration.md lists every setting a user or operator can change, with the default
the code has, and every flag of the ``zocrates`` command."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pytest
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from services.agent.config import AgentSettings
from services.common import ports
from services.common.app_config import ZocratesConfig
from services.common.settings import CommonSettings
from services.compactor.config import CompactorSettings
from services.gateway.config import GatewaySettings
from services.library.config import LibrarySettings
from services.reranker.config import RerankerSettings
from services.sessions.config import SessionsSettings
from services.stack.cli import main

DOC = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "configuration.md").read_text()

# The "###" section of each settings class, and the service whose ports it derives.
SECTIONS: dict[str, tuple[type[BaseSettings], str | None]] = {
    "Every service": (CommonSettings, None),
    "gateway": (GatewaySettings, "gateway"),
    "sessions": (SessionsSettings, "sessions"),
    "agent": (AgentSettings, "agent"),
    "library": (LibrarySettings, "library"),
    "reranker": (RerankerSettings, "reranker"),
    "compactor": (CompactorSettings, "compactor"),
}


def _part(start: str, end: str) -> str:
    return DOC.split(f"\n{start}\n", 1)[1].split(f"\n{end}\n", 1)[0]


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^### (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _rows(text: str) -> dict[str, list[str]]:
    """First cell (without backticks) -> the other cells, for the rows of the tables."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def _expected_default(name: str, field: FieldInfo, service: str | None) -> str:
    if field.is_required():
        return "required"
    default: Any = field.get_default(call_default_factory=True)
    if default is None and name.endswith("_grpc_port") and service:
        return f"base + {ports.SERVICE_OFFSETS[service]}"
    if default is None and name.endswith("_admin_port") and service:
        return f"base + {ports.ADMIN_OFFSET + ports.SERVICE_OFFSETS[service]}"
    if default is None:
        return "unset"
    if isinstance(default, bool | list) or default == "":
        return f"`{json.dumps(default)}`"
    return f"`{default}`"


def test_every_config_key_is_documented_with_its_default() -> None:
    rows = _rows(_part("## zocrates_config.json", "## Environment variables"))
    assert set(rows) == set(ZocratesConfig.model_fields)
    for name, field in ZocratesConfig.model_fields.items():
        documented = rows[name][1]
        assert documented == f"`{json.dumps(field.default)}`", f"{name}: {documented}"


@pytest.mark.parametrize("section", SECTIONS)
def test_every_environment_variable_is_documented_with_its_default(section: str) -> None:
    cls, service = SECTIONS[section]
    text = _sections(_part("## Environment variables", "## Model keys"))[section]
    rows = _rows(text)
    own = {
        name: field
        for name, field in cls.model_fields.items()
        if cls is CommonSettings or name not in CommonSettings.model_fields
    }
    assert set(rows) == {f"ZOCRATES_{name.upper()}" for name in own}
    for name, field in own.items():
        documented = rows[f"ZOCRATES_{name.upper()}"][1]
        expected = _expected_default(name, field, service)
        assert documented.startswith(expected), f"ZOCRATES_{name.upper()}: {documented}"


@pytest.mark.parametrize("command", ["run", "index", "search"])
def test_every_flag_of_the_command_is_documented(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    flags = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", capsys.readouterr().out)) - {
        "-h",
        "--help",
    }
    assert flags
    for flag in flags:
        assert f"| `{flag}` |" in DOC, f"zocrates {command} {flag} missing"
