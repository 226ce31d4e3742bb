"""Settings from ZOCRATES_* variables: required values, derived ports, clear errors."""

from __future__ import annotations

import itertools
import os
import pathlib

import pytest

from services.common import ports
from services.common.settings import (
    DATA_FOLDER_NAME,
    CommonSettings,
    SettingsError,
    load_settings,
)
from services.gateway.config import GatewaySettings
from services.sessions.config import SessionsSettings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ZOCRATES_"):
            monkeypatch.delenv(name)


def test_gateway_without_sessions_addr_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZOCRATES_SESSIONS_ADDR", raising=False)
    with pytest.raises(SettingsError) as info:
        load_settings(GatewaySettings, "gateway")
    message = str(info.value)
    assert "ZOCRATES_SESSIONS_ADDR" in message
    assert "required" in message
    assert message.startswith("gateway:")
    assert isinstance(info.value, SystemExit)


def test_gateway_loads_with_sessions_addr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOCRATES_SESSIONS_ADDR", "127.0.0.1:8766")
    monkeypatch.setenv("ZOCRATES_AGENT_ADDR", "127.0.0.1:8767")
    monkeypatch.setenv("ZOCRATES_LIBRARY_ADDR", "127.0.0.1:8770")
    settings = load_settings(GatewaySettings, "gateway")
    assert settings.sessions_addr == "127.0.0.1:8766"
    assert settings.port == 8765
    assert settings.gateway_admin_port == 8775
    assert settings.gateway_token is None
    assert set(settings.allowed_hosts) >= {"127.0.0.1", "localhost", "[::1]"}


def test_derived_ports_for_default_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOCRATES_SESSIONS_ADDR", "x:1")
    monkeypatch.setenv("ZOCRATES_AGENT_ADDR", "127.0.0.1:8767")
    monkeypatch.setenv("ZOCRATES_LIBRARY_ADDR", "127.0.0.1:8770")
    monkeypatch.setenv("ZOCRATES_PORT", "8765")
    gateway = load_settings(GatewaySettings, "gateway")
    sessions = load_settings(SessionsSettings, "sessions")
    assert gateway.gateway_admin_port == 8775
    assert sessions.sessions_grpc_port == 8766
    assert sessions.sessions_admin_port == 8776
    assert ports.service_port(8765, "gateway") == 8765
    assert ports.service_port(8765, "sessions") == 8766
    assert ports.admin_port(8765, "sessions") == 8776
    assert ports.admin_port(8765, "gateway") == 8775


def test_ports_follow_the_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOCRATES_SESSIONS_ADDR", "x:1")
    monkeypatch.setenv("ZOCRATES_AGENT_ADDR", "127.0.0.1:8767")
    monkeypatch.setenv("ZOCRATES_LIBRARY_ADDR", "127.0.0.1:8770")
    monkeypatch.setenv("ZOCRATES_PORT", "9000")
    assert load_settings(GatewaySettings, "gateway").gateway_admin_port == 9010
    sessions = load_settings(SessionsSettings, "sessions")
    assert (sessions.sessions_grpc_port, sessions.sessions_admin_port) == (9001, 9011)


def _stack_ports(base: int) -> list[int]:
    return [
        fn(base, name)
        for name in ports.SERVICE_OFFSETS
        for fn in (ports.service_port, ports.admin_port)
    ]


def test_one_stack_uses_distinct_ports_within_its_span() -> None:
    used = _stack_ports(ports.DEFAULT_BASE_PORT)
    assert len(used) == len(set(used)) == 2 * len(ports.SERVICE_OFFSETS)
    base = ports.DEFAULT_BASE_PORT
    assert all(base <= p < base + ports.PORT_SPAN for p in used)


@pytest.mark.parametrize("base", [1024, 8765, 20000])
def test_stacks_a_span_apart_never_share_a_port(base: int) -> None:
    stacks = [set(_stack_ports(base + k * ports.PORT_SPAN)) for k in range(4)]
    for a, b in itertools.combinations(stacks, 2):
        assert a.isdisjoint(b)


def test_highest_valid_base_keeps_every_port_in_range(monkeypatch: pytest.MonkeyPatch) -> None:
    top = 65535 - ports.PORT_SPAN
    monkeypatch.setenv("ZOCRATES_PORT", str(top))
    assert load_settings(CommonSettings, "common").port == top
    assert max(_stack_ports(top)) <= 65535


def test_explicit_port_overrides_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOCRATES_SESSIONS_ADDR", "x:1")
    monkeypatch.setenv("ZOCRATES_AGENT_ADDR", "127.0.0.1:8767")
    monkeypatch.setenv("ZOCRATES_LIBRARY_ADDR", "127.0.0.1:8770")
    monkeypatch.setenv("ZOCRATES_PORT", "9000")
    monkeypatch.setenv("ZOCRATES_GATEWAY_ADMIN_PORT", "12345")
    monkeypatch.setenv("ZOCRATES_SESSIONS_GRPC_PORT", "23456")
    monkeypatch.setenv("ZOCRATES_SESSIONS_ADMIN_PORT", "34567")
    assert load_settings(GatewaySettings, "gateway").gateway_admin_port == 12345
    sessions = load_settings(SessionsSettings, "sessions")
    assert sessions.sessions_grpc_port == 23456
    assert sessions.sessions_admin_port == 34567
    assert sessions.port == 9000


@pytest.mark.parametrize("value", ["80", "abc", "65535", "-1"])
def test_invalid_base_port_names_zocrates_port(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ZOCRATES_SESSIONS_ADDR", "x:1")
    monkeypatch.setenv("ZOCRATES_AGENT_ADDR", "127.0.0.1:8767")
    monkeypatch.setenv("ZOCRATES_LIBRARY_ADDR", "127.0.0.1:8770")
    monkeypatch.setenv("ZOCRATES_PORT", value)
    with pytest.raises(SettingsError) as info:
        load_settings(GatewaySettings, "gateway")
    message = str(info.value)
    assert "ZOCRATES_PORT" in message
    assert "ZOCRATES_SESSIONS_ADDR" not in message  # only the broken variable is reported


def test_several_problems_reported_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOCRATES_PORT", "abc")
    monkeypatch.setenv("ZOCRATES_LOG_LEVEL", "LOUD")
    with pytest.raises(SettingsError) as info:
        load_settings(GatewaySettings, "gateway")
    message = str(info.value)
    for name in ("ZOCRATES_PORT", "ZOCRATES_LOG_LEVEL", "ZOCRATES_SESSIONS_ADDR"):
        assert name in message


def test_data_dir_under_zotero_dir_with_home_expanded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    default = load_settings(CommonSettings, "common")
    assert default.data_dir == tmp_path / "Zotero" / DATA_FOLDER_NAME
    assert default.data_dir.name == "zocrates-data"

    monkeypatch.setenv("ZOCRATES_ZOTERO_DIR", "~/Research/Zotero")
    custom = load_settings(CommonSettings, "common")
    assert custom.data_dir == tmp_path / "Research" / "Zotero" / "zocrates-data"
    assert "~" not in str(custom.data_dir)

    monkeypatch.setenv("ZOCRATES_ZOTERO_DIR", str(tmp_path / "abs"))
    assert load_settings(CommonSettings, "common").data_dir == tmp_path / "abs" / "zocrates-data"
